// Tokenizer formats beyond plain byte-level BPE: SentencePiece-style BPE
// (Llama-2 normalizers, Mistral Metaspace, byte fallback, unknown tokens),
// the Unicode normalizers, post-processor templates (BOS), GPT-2's
// vocab.json + merges.txt, duplicate merges, the merge loop on very long
// words, and long SentencePiece pieces merged word by word where no merge
// joins across (the same ids as the whole piece). Expected ids were checked
// against the Hugging Face tokenizers library (Rust, through its npm
// binding) on the same tiny files.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string_view>
#include <unordered_map>

#include "support/byte_level_vocab.h"
#include "support/error_capture.h"
#include "support/temp_files.h"
#include "support/test_registry.h"
#include "tokenizer/bpe_merge.h"
#include "tokenizer/merge_boundaries.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode_normalization.h"
#include "util/errors.h"

namespace test_tokenizer_formats {

using namespace plab;
using nlohmann::json;
using Ids = std::vector<int64_t>;

using plab::test::errorMessageOf;
using plab::test::mentions;

namespace {

const std::string kMarker = "\xE2\x96\x81";  // "▁"

json addedToken(int64_t id, const std::string& content) {
  return {{"id", id}, {"content", content}, {"special", true}, {"single_word", false},
          {"lstrip", false}, {"rstrip", false}, {"normalized", false}};
}

// SentencePiece-style vocabulary: <unk> 0, <s> 1, </s> 2, <0x00>..<0xFF> 3..258,
// ▁ a b c h e l o é 259..267, then merges ▁h 268, ll 269, ell 270, ▁hell 271,
// ▁hello 272, ▁▁ 273.
json sentencePieceJson(bool byteFallback, bool fuseUnk) {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  char name[8];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  int64_t next = 259;
  for (const std::string& c : {kMarker, std::string("a"), std::string("b"), std::string("c"), std::string("h"),
                              std::string("e"), std::string("l"), std::string("o"), std::string("\xC3\xA9")})
    vocab[c] = next++;
  const std::vector<std::pair<std::string, std::string>> merges = {
      {kMarker, "h"}, {"l", "l"}, {"e", "ll"}, {kMarker + "h", "ell"}, {kMarker + "hell", "o"}, {kMarker, kMarker}};
  json mergeList = json::array();
  for (const auto& [a, b] : merges) {
    vocab[a + b] = next++;
    mergeList.push_back(a + " " + b);
  }
  json j;
  j["added_tokens"] = json::array({addedToken(0, "<unk>"), addedToken(1, "<s>"), addedToken(2, "</s>")});
  j["model"] = {{"type", "BPE"}, {"unk_token", "<unk>"}, {"fuse_unk", fuseUnk}, {"byte_fallback", byteFallback},
                {"vocab", vocab}, {"merges", mergeList}};
  // Llama-2: Prepend + Replace normalizers, no pre-tokenizer, BOS template.
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers", json::array({{{"type", "Prepend"}, {"prepend", kMarker}},
                                                  {{"type", "Replace"}, {"pattern", {{"String", " "}}},
                                                   {"content", kMarker}}})}};
  j["pre_tokenizer"] = nullptr;
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                              {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
      {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}};
  return j;
}

// Mistral: no normalizer, Metaspace pre-tokenizer.
json metaspaceJson(const std::string& scheme, bool split) {
  json j = sentencePieceJson(true, true);
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", kMarker}, {"prepend_scheme", scheme}, {"split", split}};
  return j;
}

// Byte-level vocabulary: the 256 bytes (id == byte value), then one token per
// merge in order from 256 (a merge listed twice keeps its first token id).
json byteLevelJson(const std::vector<std::pair<std::string, std::string>>& merges) {
  const json vocab = test::byteLevelVocab(merges);
  json mergeList = json::array();
  for (const auto& [a, b] : merges) mergeList.push_back(test::byteLevelMerge(a, b));
  json j;
  j["added_tokens"] = json::array({addedToken(300, "<|endoftext|>"), addedToken(302, "<|begin_of_text|>")});
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  j["post_processor"] = nullptr;
  j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", mergeList}};
  return j;
}

Ids bytesOf(const std::string& s) {
  Ids ids;
  for (unsigned char c : s) ids.push_back(c);
  return ids;
}

// The textbook merge loop (lowest rank first, all its occurrences left to
// right, rescanning after each), as the reference for the priority queue.
void naiveMerges(std::vector<int64_t>& symbols, const BpeMergeTable& merges) {
  while (symbols.size() > 1) {
    int best = std::numeric_limits<int>::max();
    int64_t left = 0, right = 0, merged = 0;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      auto it = merges.find(bpePairKey(symbols[i], symbols[i + 1]));
      if (it != merges.end() && it->second.rank < best) {
        best = it->second.rank;
        left = symbols[i];
        right = symbols[i + 1];
        merged = it->second.merged;
      }
    }
    if (best == std::numeric_limits<int>::max()) return;
    std::vector<int64_t> out;
    for (std::size_t i = 0; i < symbols.size();) {
      if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
        out.push_back(merged);
        i += 2;
      } else {
        out.push_back(symbols[i++]);
      }
    }
    symbols = std::move(out);
  }
}

}  // namespace

class TestTokenizerFormats : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

  std::filesystem::path write(const std::string& name, const std::string& text) {
    return plab::test::writeTestFile(tmp_, name, text);
  }
  std::unique_ptr<Tokenizer> load(const json& j, const std::string& name) {
    return loadTokenizerJson(write(name, j.dump()));
  }

 private slots:
  void llama2StyleSentencePiece() {
    auto t = load(sentencePieceJson(true, true), "llama2.json");
    QCOMPARE(QString::fromStdString(t->kind()), QString("sentencepiece-bpe"));
    QCOMPARE(t->eosId().value(), int64_t(2));
    QVERIFY(t->encode("hello") == (Ids{272}));
    QVERIFY(t->encode("hello hello") == (Ids{272, 272}));
    QVERIFY(t->encode("a\nb") == (Ids{259, 260, 3 + 0x0A, 261}));                     // byte fallback <0x0A>
    QVERIFY(t->encode("\xE6\x97\xA5") == (Ids{259, 3 + 0xE6, 3 + 0x97, 3 + 0xA5}));  // 日 as three bytes
    QVERIFY(t->encode("hello</s>hello") == (Ids{272, 2, 272}));  // each piece gets its ▁ (legacy Llama-2)
    QVERIFY(t->encode(" x") == (Ids{273, 3 + 'x'}));
    QVERIFY(t->encode("  hello") == (Ids{273, 272}));
    QVERIFY(t->encode("hello a") == (Ids{272, 259, 260}));
    QVERIFY(t->encode("").empty());
    // add_special_tokens=True: the template's BOS.
    QVERIFY(t->encodeWithSpecialTokens("hello") == (Ids{1, 272}));
    QVERIFY(t->encodeWithSpecialTokens("") == (Ids{1}));
    for (const std::string s : {"hello hello", "a\nb \xE6\x97\xA5", " x", "  hello", "hello a", "caf\xC3\xA9"})
      QVERIFY2(t->decode(t->encode(s)) == s, s.c_str());
    QVERIFY(t->decode({1, 272}) == "<s> hello");
  }

  void unknownTokenWithoutByteFallback() {
    auto fused = load(sentencePieceJson(false, true), "fused.json");
    QVERIFY(fused->encode("a\nb") == (Ids{259, 260, 0, 261}));
    QVERIFY(fused->encode("\xE6\x97\xA5\xE6\x97\xA5") == (Ids{259, 0}));  // fuse_unk: one <unk>
    auto unfused = load(sentencePieceJson(false, false), "unfused.json");
    QVERIFY(unfused->encode("\xE6\x97\xA5\xE6\x97\xA5") == (Ids{259, 0, 0}));
  }

  void mistralStyleMetaspace() {
    auto first = load(metaspaceJson("first", false), "first.json");
    QVERIFY(first->encode("hello hello") == (Ids{272, 272}));
    // prepend_scheme "first": only the start of the input gets a ▁.
    QVERIFY(first->encode("hello</s>hello") == (Ids{272, 2, 263, 270, 266}));
    QVERIFY(first->encode(" x") == (Ids{259, 3 + 'x'}));  // already starts with ▁
    QVERIFY(first->encode("  hello") == (Ids{259, 272}));
    QVERIFY(first->encodeWithSpecialTokens("hello") == (Ids{1, 272}));
    auto always = load(metaspaceJson("always", true), "always.json");
    QVERIFY(always->encode("hello</s>hello") == (Ids{272, 2, 272}));
    QVERIFY(always->encode("hello hello") == (Ids{272, 272}));
    json legacy = metaspaceJson("first", true);
    legacy["pre_tokenizer"].erase("prepend_scheme");
    legacy["pre_tokenizer"]["add_prefix_space"] = true;
    QVERIFY(load(legacy, "legacy.json")->encode("hello</s>hello") == (Ids{272, 2, 272}));
  }

  void unicodeNormalizers() {
    using unicode::NormalForm;
    QVERIFY(unicode::normalize("e\xCC\x81", NormalForm::NFC) == "\xC3\xA9");
    QVERIFY(unicode::normalize("\xC3\xA9", NormalForm::NFD) == "e\xCC\x81");
    QVERIFY(unicode::normalize("\xEF\xAC\x81", NormalForm::NFKC) == "fi");        // ﬁ ligature
    QVERIFY(unicode::normalize("\xE2\x91\xA0", NormalForm::NFKD) == "1");         // ①
    QVERIFY(unicode::normalize("a\xFF" "e\xCC\x81", NormalForm::NFC) == "a\xFF\xC3\xA9");  // invalid byte kept
    QVERIFY(unicode::lowercase("\xC4\xB0") == "i\xCC\x87");  // İ
    QVERIFY(unicode::lowercase("\xCE\xA3\xCE\x9F\xCE\xA3") == "\xCF\x83\xCE\xBF\xCF\x83");  // ΣΟΣ -> σοσ, no final ς

    // Qwen2 declares NFC: "e" + combining acute is the "é" token, as the reference.
    json qwen = byteLevelJson({{"\xC3", "\xA9"}});
    QVERIFY(load(qwen, "plain.json")->encode("e\xCC\x81") == (Ids{101, 204, 129}));
    qwen["normalizer"] = {{"type", "NFC"}};
    QVERIFY(load(qwen, "nfc.json")->encode("e\xCC\x81") == (Ids{256}));

    json seq = byteLevelJson({});
    seq["normalizer"] = {{"type", "Sequence"},
                         {"normalizers", json::array({{{"type", "NFKC"}},
                                                      {{"type", "Lowercase"}},
                                                      {{"type", "Strip"}, {"strip_left", true}, {"strip_right", true}},
                                                      {{"type", "Replace"}, {"pattern", {{"String", "q"}}},
                                                       {"content", "k"}}})}};
    // Reference output: "fi don't k i̇ σοσ 1".
    QVERIFY(load(seq, "seq.json")->encode("  \xEF\xAC\x81 DON'T Q \xC4\xB0 \xCE\xA3\xCE\x9F\xCE\xA3 \xE2\x91\xA0 ") ==
            bytesOf("fi don't k i\xCC\x87 \xCF\x83\xCE\xBF\xCF\x83 1"));
  }

  void postProcessorTemplates() {
    json llama3 = byteLevelJson({});
    llama3["post_processor"] = {
        {"type", "Sequence"},
        {"processors",
         json::array({{{"type", "ByteLevel"}, {"trim_offsets", false}},
                      {{"type", "TemplateProcessing"},
                       {"single", json::array({{{"SpecialToken", {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}},
                                               {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
                       {"special_tokens",
                        {{"<|begin_of_text|>", {{"id", "<|begin_of_text|>"}, {"ids", {302}}, {"tokens", {"x"}}}}}}}})}};
    auto t = load(llama3, "llama3.json");
    QVERIFY(t->encode("hi") == (Ids{104, 105}));
    QVERIFY(t->encodeWithSpecialTokens("hi") == (Ids{302, 104, 105}));
    json roberta = byteLevelJson({});
    roberta["post_processor"] = {{"type", "RobertaProcessing"}, {"cls", {"<|begin_of_text|>", 302}},
                                 {"sep", {"<|endoftext|>", 300}}};
    QVERIFY(load(roberta, "roberta.json")->encodeWithSpecialTokens("hi") == (Ids{302, 104, 105, 300}));
    QVERIFY(load(byteLevelJson({}), "none.json")->encodeWithSpecialTokens("hi") == (Ids{104, 105}));
  }

  void duplicateMergesKeepTheLastRank() {
    // x y is listed at ranks 0 and 2, y z at 1: the reference uses rank 2.
    auto t = load(byteLevelJson({{"x", "y"}, {"y", "z"}, {"x", "y"}}), "dup.json");
    QVERIFY(t->encode("xyz") == (Ids{'x', 257}));
    QVERIFY(t->encode("xyxyz") == (Ids{256, 'x', 257}));
  }

  void vocabJsonAndMergesTxt() {
    const std::vector<std::pair<std::string, std::string>> merges = {{" ", "t"}, {"h", "e"}, {" t", "he"}, {"'", "t"}};
    const json j = byteLevelJson(merges);
    json vocab = j["model"]["vocab"];
    vocab["<|endoftext|>"] = 300;
    write("gpt2-files/vocab.json", vocab.dump());
    std::string mergesTxt = "#version: 0.2\n";
    for (const auto& m : j["model"]["merges"]) mergesTxt += m.get<std::string>() + "\n";
    write("gpt2-files/merges.txt", mergesTxt);
    const auto dir = std::filesystem::path(tmp_.path().toStdString()) / "gpt2-files";
    QVERIFY(hasTokenizerFiles(dir));
    auto files = loadTokenizerForModel(dir);
    auto reference = load(j, "gpt2-files-ref.json");
    QCOMPARE(QString::fromStdString(files->kind()), QString("byte-level-bpe"));
    QCOMPARE(files->eosId().value(), int64_t(300));
    for (const std::string s : {"the don't", " the the", "hi there", "a  b\n\n c"})
      QVERIFY2(files->encode(s) == reference->encode(s), s.c_str());
    QVERIFY(files->encode("hi<|endoftext|>") == (Ids{'h', 'i', 300}));
    write("gpt2-files/merges.txt", "#version: 0.2\nnot-a-pair\n");
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { loadTokenizerForModel(dir); }), "merges.txt:2"));
  }

  void priorityQueueMergesEqualTheTextbookLoop() {
    // Random merge tables over a 4-symbol alphabet with overlapping pairs.
    std::mt19937 rng(7);
    for (int table = 0; table < 20; ++table) {
      BpeMergeTable merges;
      int64_t next = 4;
      std::vector<int64_t> tokens = {0, 1, 2, 3};
      for (int rank = 0; rank < 40; ++rank) {
        const int64_t a = tokens[rng() % tokens.size()], b = tokens[rng() % tokens.size()];
        if (merges.count(bpePairKey(a, b))) continue;
        merges[bpePairKey(a, b)] = BpeMerge{rank, next};
        tokens.push_back(next++);
      }
      for (int word = 0; word < 50; ++word) {
        std::vector<int64_t> symbols(1 + rng() % 80);
        for (auto& s : symbols) s = static_cast<int64_t>(rng() % 4);
        std::vector<int64_t> fast = symbols, slow = symbols;
        applyBpeMerges(fast, merges);
        naiveMerges(slow, merges);
        QVERIFY(fast == slow);
      }
    }
  }

  void longPiecesSplitWhereNoMergeJoins() {
    // The sentencePieceJson vocabulary: its merges join ▁h, ll, e+ll, ▁h+ell,
    // ▁hell+o and ▁▁; nothing ever follows another character with a ▁.
    const json sp = sentencePieceJson(true, true);
    std::unordered_map<std::string, int64_t> vocab;
    for (const auto& [token, id] : sp["model"]["vocab"].items()) vocab.emplace(token, id.get<int64_t>());
    std::vector<std::pair<std::string, std::string>> merges;
    for (const auto& m : sp["model"]["merges"]) {
      const std::string pair = m.get<std::string>();
      merges.emplace_back(pair.substr(0, pair.find(' ')), pair.substr(pair.find(' ') + 1));
    }
    const MergeBoundaries cuts(vocab, merges);
    const auto words = [&](const std::string& piece) {
      std::vector<std::string> out;
      for (std::string_view w : cuts.split(piece)) out.emplace_back(w);
      return out;
    };
    const std::string m = kMarker;
    // Cut before a ▁ that follows another character, never inside ▁▁ or
    // ▁h-e-l-l-o, and between characters that no merge joins (▁ a, a b c).
    QVERIFY(words(m + "hello" + m + m + "hello" + m + "a") ==
            (std::vector<std::string>{m + "hello", m + m + "hello", m, "a"}));
    QVERIFY(words("abc") == (std::vector<std::string>{"a", "b", "c"}));
    QVERIFY(words("hell") == (std::vector<std::string>{"hell"}));
    // Characters outside the vocab (byte fallback, <unk>) are never cut around.
    QVERIFY(words("a\xE6\x97\xA5" + m + "x" + m) == (std::vector<std::string>{"a\xE6\x97\xA5" + m + "x" + m}));
    QVERIFY(words("").empty());
    // A vocab where two spellings share an id: no cuts at all.
    vocab["duplicate"] = vocab.at("a");
    QVERIFY(MergeBoundaries(vocab, merges).split("abc").size() == 1);
  }

  void longPiecesGiveTheIdsOfTheWholePieceMerge() {
    // Random SentencePiece-style vocabularies over a b ▁ whose merges may
    // join across a ▁ (a▁, ▁▁b, ...): documents far longer than the cached
    // piece size, encoded word by word, must equal the textbook merge of
    // the whole piece (no pre-tokenizer, no normalizer).
    std::mt19937 rng(11);
    const std::vector<std::string> alphabet = {"a", "b", kMarker};
    for (int table = 0; table < 20; ++table) {
      json vocab = json::object();
      std::vector<std::string> tokens = alphabet;
      for (std::size_t i = 0; i < alphabet.size(); ++i) vocab[alphabet[i]] = int64_t(i);
      json mergeList = json::array();
      BpeMergeTable mergeTable;
      for (int rank = 0; rank < 30; ++rank) {
        const std::string l = tokens[rng() % tokens.size()], r = tokens[rng() % tokens.size()];
        if (vocab.contains(l + r)) continue;
        const int64_t id = static_cast<int64_t>(tokens.size());
        vocab[l + r] = id;
        tokens.push_back(l + r);
        mergeList.push_back(l + " " + r);
        mergeTable[bpePairKey(vocab[l].get<int64_t>(), vocab[r].get<int64_t>())] = BpeMerge{rank, id};
      }
      json j;
      j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", mergeList}};
      j["pre_tokenizer"] = nullptr;
      auto t = load(j, "cross" + std::to_string(table) + ".json");
      for (int doc = 0; doc < 5; ++doc) {
        std::string text;
        std::vector<int64_t> symbols;
        for (int k = 0; k < 600; ++k) {
          const std::size_t c = rng() % 3;
          text += alphabet[c];
          symbols.push_back(static_cast<int64_t>(c));
        }
        naiveMerges(symbols, mergeTable);
        QVERIFY(t->encode(text) == symbols);
      }
    }
  }

  void longWordsEncodeInNearLinearTime() {
    // 676 letter pairs, 20000 pairs of pairs, 20000 pairs of those: thousands
    // of distinct ranks apply inside one word, which made the old rescanning
    // loop quadratic (about 19 s CPU for this word, 1.2 s for a quarter of it).
    std::vector<std::pair<std::string, std::string>> valid;
    for (char a = 'a'; a <= 'z'; ++a)
      for (char b = 'a'; b <= 'z'; ++b) valid.push_back({std::string(1, a), std::string(1, b)});
    std::mt19937 rng(3);
    std::vector<std::string> level2;
    for (int i = 0; i < 20000; ++i) {
      const auto x = valid[rng() % 676];
      const auto y = valid[rng() % 676];
      valid.push_back({x.first + x.second, y.first + y.second});
      level2.push_back(x.first + x.second + y.first + y.second);
    }
    for (int i = 0; i < 20000; ++i) valid.push_back({level2[rng() % level2.size()], level2[rng() % level2.size()]});
    json j = byteLevelJson(valid);
    j["added_tokens"] = json::array();  // the merged tokens' ids run past 300
    auto t = load(j, "long.json");
    std::string word(200000, 'a');
    for (char& c : word) c = static_cast<char>('a' + rng() % 26);
    // CPU time, not wall time: build machines are shared with compilers.
    const std::clock_t start = std::clock();
    const Ids ids = t->encode(word);
    const double seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
    qInfo("200000-letter word: %zu tokens in %.3f s CPU", ids.size(), seconds);
    QVERIFY(t->decode(ids) == word);
    QVERIFY(ids.size() < 150000);  // letter pairs (and pairs of them) merged
    QVERIFY2(seconds < 2.0, std::to_string(seconds).c_str());  // the rescanning loop took ~1 min
  }
};

PLAB_TEST_APPLESS_MAIN(TestTokenizerFormats)
}  // namespace test_tokenizer_formats
#include "test_tokenizer_formats.moc"
