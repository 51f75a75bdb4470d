// Streaming tokenization: a text encoded piece by piece (cut where
// Tokenizer::lastSafeCut allows) gives exactly the ids of the whole text, for
// the GPT-2 / Llama-3 splits, an NFC normalizer, add_prefix_space, Metaspace
// and added tokens, on the embedded corpus and a synthetic multi-MB text;
// tokenizers without a safe cut are encoded whole. The compact token store
// holds the same ids in memory and in its unlinked, memory-mapped file, and a
// data set gives the same batches either way.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "data/document_encoder.h"
#include "data/text_dataset.h"
#include "data/token_store.h"
#include "support/byte_level_vocab.h"
#include "support/temp_files.h"
#include "support/test_registry.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"
#include "util/errors.h"
#include "util/resources.h"

namespace test_token_stream {

using namespace plab;
using nlohmann::json;
using Ids = std::vector<int64_t>;

namespace {

const std::string kMarker = "\xE2\x96\x81";  // "▁"
const std::string kSpacedToken = "<|im sep|>";  // an added token with a space inside

json addedToken(int64_t id, const std::string& content) {
  return {{"id", id}, {"content", content}, {"special", true}, {"single_word", false},
          {"lstrip", false}, {"rstrip", false}, {"normalized", false}};
}

// Byte-level BPE: the 256 bytes (id == byte value), then one token per merge
// from 256; <|endoftext|> 400 and "<|im sep|>" 401 as added tokens.
json byteLevelJson() {
  const std::vector<std::pair<std::string, std::string>> merges = {
      {" ", "t"}, {"h", "e"}, {" t", "he"}, {"i", "n"}, {"e", "r"}, {"a", "n"}, {" ", "a"}, {"o", "n"},
      {"r", "e"}, {" ", "s"}, {"e", "d"}, {"in", "g"}, {" ", "w"}, {" ", "o"}, {"o", "r"}, {"e", "s"},
      {"a", "t"}, {" ", "c"}, {"i", "s"}, {"n", "d"}, {" a", "nd"}, {"e", "n"}, {"o", "u"}, {" ", " "},
      {"\n", "\n"}, {"\xC3", "\xA9"}, {"'", "s"}, {"1", "2"}, {" o", "f"}, {" ", "in"}};
  const json vocab = test::byteLevelVocab(merges);
  json mergeList = json::array();
  for (const auto& [a, b] : merges) mergeList.push_back(test::byteLevelMerge(a, b));
  json j;
  j["added_tokens"] = json::array({addedToken(400, "<|endoftext|>"), addedToken(401, kSpacedToken)});
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  j["post_processor"] = nullptr;
  j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", mergeList}};
  return j;
}

json llama3Style(json j) {
  j["normalizer"] = {{"type", "NFC"}};
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         json::array({{{"type", "Split"},
                                       {"pattern", {{"Regex", kLlama3SplitRegex}}},
                                       {"behavior", "Isolated"},
                                       {"invert", false}},
                                      {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}};
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", json::array({{{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
      {"special_tokens", {{"<|endoftext|>", {{"id", "<|endoftext|>"}, {"ids", {400}}, {"tokens", {"x"}}}}}}};
  return j;
}

// Mistral style: characters, byte fallback, Metaspace with split.
json metaspaceJson() {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  char name[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  int64_t next = 259;
  for (const char* c : {"a", "b", "c", "d", "e", "h", "i", "l", "n", "o", "r", "s", "t"}) vocab[c] = next++;
  vocab[kMarker] = next++;
  json mergeList = json::array();
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {kMarker, "t"}, {"h", "e"}, {kMarker + "t", "he"}, {"i", "n"}, {kMarker, "a"}, {"e", "r"}}) {
    vocab[a + b] = next++;
    mergeList.push_back(a + " " + b);
  }
  json j;
  j["added_tokens"] = json::array({addedToken(0, "<unk>"), addedToken(1, "<s>"), addedToken(2, "</s>")});
  j["model"] = {{"type", "BPE"}, {"unk_token", "<unk>"}, {"fuse_unk", true}, {"byte_fallback", true},
                {"vocab", vocab}, {"merges", mergeList}};
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kMarker}, {"prepend_scheme", "first"}, {"split", true}};
  j["post_processor"] = nullptr;
  return j;
}

// The corpus repeated, with what a cut could break sprinkled in: added
// tokens, contractions, double spaces, tabs, CR LF, an ideographic space,
// combining marks (NFC), CJK, digits and bytes that are not UTF-8.
std::string syntheticText(std::size_t bytes) {
  const std::string_view corpus = embeddedResource("data/corpus.txt");
  const char* const kExtras[] = {" don't", "  two  spaces ", "\ttab\t", "\r\n", "\xE3\x80\x80" "ideo",
                                 " e\xCC\x81t\xC3\xA9 ", " \xE6\x97\xA5\xE6\x9C\xAC ", " 123456 ", "\xFF\xFE ",
                                 "x<|endoftext|>y ", "a<|im sep|>b ", " <|im sep|> ", "'ll "};
  std::mt19937_64 rng(5);
  std::string text;
  text.reserve(bytes + 4096);
  while (text.size() < bytes) {
    const std::size_t at = rng() % corpus.size(), len = 200 + rng() % 3000;
    text += corpus.substr(at, len);
    text += kExtras[rng() % (sizeof kExtras / sizeof *kExtras)];
  }
  return text;
}

// Encodes `text` fed in slices of `feed` bytes, cut every `pieceBytes`.
Ids streamed(const Tokenizer& t, const std::string& text, std::size_t pieceBytes, std::size_t feed) {
  Ids ids;
  DocumentEncoder encoder(t, [&](const Ids& part) { ids.insert(ids.end(), part.begin(), part.end()); }, pieceBytes);
  encoder.begin();
  for (std::size_t pos = 0; pos < text.size(); pos += feed) encoder.add(std::string_view(text).substr(pos, feed));
  encoder.end();
  return ids;
}

}  // namespace

class TestTokenStream : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

  std::unique_ptr<Tokenizer> load(const json& j, const std::string& name) {
    return loadTokenizerJson(plab::test::writeTestFile(tmp_, name, j.dump()));
  }
  std::vector<std::pair<std::string, std::unique_ptr<Tokenizer>>> cuttingTokenizers() {
    std::vector<std::pair<std::string, std::unique_ptr<Tokenizer>>> out;
    out.emplace_back("gpt2", load(byteLevelJson(), "gpt2.json"));
    json prefix = byteLevelJson();
    prefix["pre_tokenizer"]["add_prefix_space"] = true;
    out.emplace_back("gpt2-prefix-space", load(prefix, "prefix.json"));
    out.emplace_back("llama3-nfc", load(llama3Style(byteLevelJson()), "llama3.json"));
    json qwen = llama3Style(byteLevelJson());
    qwen["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = kQwen2SplitRegex;
    qwen["normalizer"] = {{"type", "Sequence"}, {"normalizers", json::array({{{"type", "NFKC"}}, {{"type", "Lowercase"}}})}};
    out.emplace_back("qwen2-nfkc-lower", load(qwen, "qwen2.json"));
    out.emplace_back("metaspace", load(metaspaceJson(), "metaspace.json"));
    out.emplace_back("bytes", makeByteTokenizer());
    return out;
  }

 private slots:
  void corpusStreamedEqualsWhole() {
    const std::string corpus(embeddedResource("data/corpus.txt"));
    for (const auto& [name, t] : cuttingTokenizers()) {
      QVERIFY2(t->lastSafeCut(corpus) > corpus.size() - 200, name.c_str());
      const Ids whole = t->encodeWithSpecialTokens(corpus);
      for (const auto& [piece, feed] : std::vector<std::pair<std::size_t, std::size_t>>{{64, 7}, {1000, 4096}, {8192, 100000}})
        QVERIFY2(streamed(*t, corpus, piece, feed) == whole, qPrintable(QString::fromStdString(name) + " piece " +
                                                                         QString::number(piece)));
    }
  }

  void syntheticMegabytesStreamedEqualsWhole() {
    const std::string text = syntheticText(std::size_t(3) << 20);
    for (const auto& [name, t] : cuttingTokenizers()) {
      const Ids whole = t->encodeWithSpecialTokens(text);
      QVERIFY2(streamed(*t, text, 4096, 65536) == whole, name.c_str());
      QVERIFY2(streamed(*t, text, DocumentEncoder::kDefaultPieceBytes, 1 << 20) == whole, name.c_str());
    }
  }

  void cutsOnlyBeforeASpaceAfterANonSpace() {
    QCOMPARE(lastSpaceAfterNonSpace("ab cd ef"), std::size_t(5));
    QCOMPARE(lastSpaceAfterNonSpace("ab cd  ef"), std::size_t(5));     // not inside a run of spaces
    QCOMPARE(lastSpaceAfterNonSpace("ab\t cd\n ef"), std::size_t(0));  // nor after other whitespace
    QCOMPARE(lastSpaceAfterNonSpace("ab cd ", 1), std::size_t(5));
    QCOMPARE(lastSpaceAfterNonSpace("ab cd ", 2), std::size_t(2));     // text[p] and one more byte needed
    QCOMPARE(lastSpaceAfterNonSpace("\xC3\xA9 x"), std::size_t(2));    // after a two-byte character
    QCOMPARE(lastSpaceAfterNonSpace("\xE3\x80\x80 x"), std::size_t(0));  // not after an ideographic space
    QCOMPARE(lastSpaceAfterNonSpace("\xE3\x80 x"), std::size_t(0));      // nor after a broken character
    QCOMPARE(lastSpaceAfterNonSpace("nospace"), std::size_t(0));

    auto gpt2 = load(byteLevelJson(), "gpt2.json");
    const std::string tail(20, 'x');
    QCOMPARE(gpt2->lastSafeCut("word" + kSpacedToken + tail), std::size_t(0));  // never inside an added token
    QCOMPARE(gpt2->lastSafeCut("word word" + kSpacedToken + tail), std::size_t(4));

    // No safe cut: a normalizer that strips or prepends, or no split rule.
    json strip = byteLevelJson();
    strip["normalizer"] = {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}};
    QCOMPARE(load(strip, "strip.json")->lastSafeCut("some text here"), std::size_t(0));
    json noSplit = byteLevelJson();
    noSplit["pre_tokenizer"]["use_regex"] = false;
    auto whole = load(noSplit, "nosplit.json");
    QCOMPARE(whole->lastSafeCut("some text here"), std::size_t(0));
    const std::string text = syntheticText(20000);
    QVERIFY(streamed(*whole, text, 64, 100) == whole->encode(text));  // encoded whole at the end
  }

  void tokenStoreInMemoryAndMapped() {
    Ids ids;
    std::mt19937_64 rng(3);
    for (int i = 0; i < 3000000; ++i) ids.push_back(static_cast<int64_t>(rng() % 65536));
    const auto folder = std::filesystem::path(tmp_.path().toStdString()) / "store";
    std::filesystem::create_directories(folder);
    TokenStore memory(65536), file(65536, folder), wide(200000, folder);
    for (std::size_t pos = 0; pos < ids.size(); pos += 100000) {
      const Ids part(ids.begin() + pos, ids.begin() + std::min(ids.size(), pos + 100000));
      memory.append(part);
      file.append(part);
      wide.append(part);
    }
    wide.append({199999});
    for (TokenStore* s : {&memory, &file, &wide}) s->finish();
    QVERIFY(!memory.mapped() && file.mapped() && wide.mapped());
    QCOMPARE(memory.bytesPerToken(), 2);
    QCOMPARE(wide.bytesPerToken(), 4);
    QCOMPARE(file.size(), int64_t(ids.size()));
    QCOMPARE(wide.lastId(), int64_t(199999));
    Ids a(ids.size()), b(ids.size());
    memory.read(0, int64_t(ids.size()), a.data());
    file.read(0, int64_t(ids.size()), b.data());
    QVERIFY(a == ids && b == ids);
    // The files were unlinked as soon as they were created.
    QVERIFY(std::filesystem::is_empty(folder));
    QVERIFY_EXCEPTION_THROWN(memory.append({1}), DataError);
    TokenStore narrow(100);
    QVERIFY_EXCEPTION_THROWN(narrow.append({65536}), DataError);
    QVERIFY_EXCEPTION_THROWN(narrow.append({-1}), DataError);
    // A folder that cannot take the file: the ids stay in memory.
    TokenStore missing(100, folder / "no" / "such");
    missing.append({1, 2, 3});
    missing.finish();
    QVERIFY(!missing.mapped());
    Ids back(3);
    missing.read(0, 3, back.data());
    QVERIFY(back == (Ids{1, 2, 3}));
  }

  // A file that cannot grow (RLIMIT_FSIZE here, a full disk in life): the
  // ids written so far and the rest move to memory.
  void tokenStoreMovesToMemoryWhenTheFileCannotGrow() {
    const auto folder = std::filesystem::path(tmp_.path().toStdString()) / "small";
    std::filesystem::create_directories(folder);
    Ids ids;
    for (int i = 0; i < 2000000; ++i) ids.push_back(i % 60000);
    rlimit old{};
    QVERIFY(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    const auto previousHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 3 << 20;  // 1.5 Mi ids of 2 bytes
    QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    TokenStore store(65536, folder);
    for (std::size_t pos = 0; pos < ids.size(); pos += 250000)
      store.append(Ids(ids.begin() + pos, ids.begin() + std::min(ids.size(), pos + 250000)));
    store.finish();
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previousHandler);
    QVERIFY(!store.mapped());
    QCOMPARE(store.size(), int64_t(ids.size()));
    Ids back(ids.size());
    store.read(0, int64_t(ids.size()), back.data());
    QVERIFY(back == ids);
    QVERIFY(std::filesystem::is_empty(folder));
  }

  void datasetBatchesSameInMemoryAndMapped() {
    const auto path = plab::test::writeTestFile(tmp_, "data.txt", syntheticText(300000)).string();
    const auto folder = std::filesystem::path(tmp_.path().toStdString()) / "run";
    std::filesystem::create_directories(folder);
    auto gpt2 = load(llama3Style(byteLevelJson()), "llama3.json");
    DataConfig config;
    config.path = path;
    config.seed = 9;
    TextDataset memory(config, *gpt2, 31), mapped(config, *gpt2, 31, folder);
    QVERIFY(!memory.tokensMapped() && mapped.tokensMapped());
    QCOMPARE(mapped.bytesPerToken(), 2);
    QCOMPARE(mapped.numTokens(), int64_t(gpt2->encodeWithSpecialTokens(syntheticText(300000)).size()));
    QCOMPARE(mapped.numValBlocks(), memory.numValBlocks());
    std::mt19937_64 r1(4), r2(4);
    for (int i = 0; i < 5; ++i) {
      const auto [x1, y1] = memory.trainBatch(8, r1);
      const auto [x2, y2] = mapped.trainBatch(8, r2);
      QVERIFY(torch::equal(x1, x2) && torch::equal(y1, y2));
    }
    const auto v1 = memory.valBatches(16, 0), v2 = mapped.valBatches(16, 0);
    QCOMPARE(v1.size(), v2.size());
    for (std::size_t i = 0; i < v1.size(); ++i)
      QVERIFY(torch::equal(v1[i].first, v2[i].first) && torch::equal(v1[i].second, v2[i].second));
    QVERIFY(std::filesystem::is_empty(folder));
  }
};

PLAB_TEST_APPLESS_MAIN(TestTokenStream)
}  // namespace test_token_stream
#include "test_token_stream.moc"
