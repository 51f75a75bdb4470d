// Tokenizers: the byte fallback, the split scanners against piece lists
// worked out by hand from the GPT-2 / Llama-3 / Qwen2 regexes, and a small
// hand-built byte-level BPE tokenizer.json whose expected ids follow from
// its merge ranks (vocab id of a single byte == the byte value).
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>

#include "support/byte_level_vocab.h"
#include "support/error_capture.h"
#include "support/temp_files.h"
#include "support/test_registry.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/split_regex.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode_tables.h"
#include "util/errors.h"

namespace test_tokenizer {

using namespace plab;
using nlohmann::json;
using Ids = std::vector<int64_t>;
using Pieces = std::vector<std::string>;

using plab::test::errorMessageOf;
using plab::test::mentions;

namespace {

std::string spell(const std::string& raw) { return byte_level::encodeBytes(raw); }

// Merges in rank order; the merged tokens get ids 256, 257, ...
const std::vector<std::pair<std::string, std::string>> kMerges = {
    {" ", "t"},        // 0 -> 256 " t"
    {"h", "e"},        // 1 -> 257 "he"
    {" t", "he"},      // 2 -> 258 " the"
    {"d", "o"},        // 3 -> 259 "do"
    {"'", "t"},        // 4 -> 260 "'t"
    {"l", "l"},        // 5 -> 261 "ll"
    {"'", "ll"},       // 6 -> 262 "'ll"
    {"w", "e"},        // 7 -> 263 "we"
    {" ", "c"},        // 8 -> 264 " c"
    {"a", "f"},        // 9 -> 265 "af"
    {"\xC3", "\xA9"},  // 10 -> 266 "é" (its two UTF-8 bytes)
    {"1", "2"},        // 11 -> 267 "12"
    {"3", "4"},        // 12 -> 268 "34"
};
constexpr int64_t kEndOfText = 300;
constexpr int64_t kImEnd = 301;

json baseTokenizerJson(bool arrayMerges) {
  const json vocab = test::byteLevelVocab(kMerges);
  json merges = json::array();
  for (const auto& [a, b] : kMerges)
    merges.push_back(arrayMerges ? json::array({spell(a), spell(b)}) : json(test::byteLevelMerge(a, b)));
  json j;
  j["version"] = "1.0";
  j["added_tokens"] = json::array({{{"id", kEndOfText}, {"content", "<|endoftext|>"}, {"special", true}},
                                   {{"id", kImEnd}, {"content", "<|im_end|>"}, {"special", true}}});
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  j["post_processor"] = nullptr;
  j["decoder"] = {{"type", "ByteLevel"}};
  j["model"] = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"vocab", vocab}, {"merges", merges}};
  return j;
}

json llama3Style(json j) {
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         json::array({{{"type", "Split"},
                                       {"pattern", {{"Regex", kLlama3SplitRegex}}},
                                       {"behavior", "Isolated"},
                                       {"invert", false}},
                                      {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}};
  return j;
}

}  // namespace

class TestTokenizer : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

  std::filesystem::path write(const std::string& name, const std::string& text) {
    return plab::test::writeTestFile(tmp_, name, text);
  }
  std::unique_ptr<Tokenizer> load(const json& j, const std::string& name = "tokenizer.json") {
    return loadTokenizerJson(write(name, j.dump()));
  }

 private slots:
  void byteTokenizerRoundTripsAnyBytes() {
    auto t = makeByteTokenizer();
    QCOMPARE(t->vocabSize(), int64_t(257));
    QCOMPARE(t->eosId().value(), int64_t(256));
    QCOMPARE(QString::fromStdString(t->kind()), QString("bytes"));
    const std::string text = "h\xC3\xA9llo \xFF\xFE\x80 \x00 end";
    const std::string withNul(text.data(), text.size());
    const Ids ids = t->encode(withNul);
    QCOMPARE(ids.size(), withNul.size());
    for (std::size_t i = 0; i < ids.size(); ++i) QCOMPARE(ids[i], int64_t(static_cast<unsigned char>(withNul[i])));
    QVERIFY(t->decode(ids) == withNul);
    QCOMPARE(QString::fromStdString(t->decode({104, 256, 105})), QString("h<|endoftext|>i"));
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { t->decode({257}); }), "257"));
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { t->decode({-1}); }), "-1"));
  }

  void unicodeClasses() {
    using namespace plab::unicode;
    QVERIFY(isLetter('a') && isLetter('Z') && isLetter(0xE9) && isLetter(0x65E5) && isLetter(0x0416));
    QVERIFY(!isLetter('1') && !isLetter(' ') && !isLetter('!') && !isLetter(0x1F642) && !isLetter(kInvalidCodePoint));
    QVERIFY(isNumber('7') && isNumber(0x0663) && isNumber(0x00B2) && isNumber(0x2167));  // Nd, No, Nl
    QVERIFY(!isNumber('a') && !isNumber(0x65E5));
    // Tables from current Unicode (17.0): Nag Mundari letters and digits arrived in 15.0.
    QVERIFY(isLetter(0x1E4D0) && isNumber(0x1E4F0));
    QCOMPARE(QString(kUnicodeVersion), QString("17.0"));
    QVERIFY(isWhitespace(' ') && isWhitespace('\n') && isWhitespace('\t') && isWhitespace(0x3000) &&
            isWhitespace(0xA0) && isWhitespace(0x2009));
    QVERIFY(!isWhitespace(0x200B) && !isWhitespace('x'));  // zero width space is not White_Space
  }

  void gpt2Splits() {
    const auto split = [](const std::string& s) { return preTokenize(s, SplitRule::Gpt2); };
    QVERIFY(split("Hello world") == (Pieces{"Hello", " world"}));
    QVERIFY(split("don't we'll I'M") == (Pieces{"don", "'t", " we", "'ll", " I", "'", "M"}));  // case-sensitive
    QVERIFY(split("a  b\n\n c") == (Pieces{"a", " ", " b", "\n\n", " c"}));
    QVERIFY(split("x   ") == (Pieces{"x", "   "}));  // trailing spaces stay together at the end
    QVERIFY(split("foo!!\n\nbar") == (Pieces{"foo", "!!", "\n", "\n", "bar"}));
    QVERIFY(split("12345 678") == (Pieces{"12345", " 678"}));
    QVERIFY(split("hello,world") == (Pieces{"hello", ",", "world"}));
    QVERIFY(split("a\tb") == (Pieces{"a", "\t", "b"}));
    QVERIFY(split("caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC") ==
            (Pieces{"caf\xC3\xA9", " na\xC3\xAFve", " \xE6\x97\xA5\xE6\x9C\xAC"}));
    QVERIFY(split("hi \xF0\x9F\x99\x82!") == (Pieces{"hi", " \xF0\x9F\x99\x82!"}));
    QVERIFY(split("a\xFF\xFE" "b") == (Pieces{"a", "\xFF\xFE", "b"}));  // invalid bytes are "other"
    QVERIFY(split("").empty());
  }

  void llama3Splits() {
    const auto split = [](const std::string& s) { return preTokenize(s, SplitRule::Llama3); };
    QVERIFY(split("12345") == (Pieces{"123", "45"}));
    QVERIFY(split("abc1234def") == (Pieces{"abc", "123", "4", "def"}));
    QVERIFY(split("DON'T we'LL") == (Pieces{"DON", "'T", " we", "'LL"}));  // (?i) contractions
    QVERIFY(split("hello,world") == (Pieces{"hello", ",world"}));       // one non-letter prefix
    QVERIFY(split("a\tb") == (Pieces{"a", "\tb"}));
    QVERIFY(split("a  b\n\n c") == (Pieces{"a", " ", " b", "\n\n", " c"}));
    QVERIFY(split("x \n\n y") == (Pieces{"x", " \n\n", " y"}));      // \s*[\r\n]+
    QVERIFY(split("foo!!\n\nbar") == (Pieces{"foo", "!!\n\n", "bar"}));  // punctuation keeps its newlines
    QVERIFY(split("line\r\nnext") == (Pieces{"line", "\r\n", "next"}));
    QVERIFY(split(" 123") == (Pieces{" ", "123"}));
    QVERIFY(split("\xD9\xA3\xD9\xA4\xD9\xA5\xD9\xA6") == (Pieces{"\xD9\xA3\xD9\xA4\xD9\xA5", "\xD9\xA6"}));  // Arabic-Indic digits
    QVERIFY(preTokenize("12345", SplitRule::Qwen2) == (Pieces{"1", "2", "3", "4", "5"}));
    QVERIFY(splitRuleForRegex(kLlama3SplitRegex) == SplitRule::Llama3);
    QVERIFY(!splitRuleForRegex("\\d+").has_value());
  }

  void splitsConcatenateBackToTheText() {
    const std::vector<std::string> samples = {"The quick  brown\tfox\r\n\r\n  jumps!!", "  leading", "trailing  \n",
                                              "mixed123abc 4567 'S 'quoted'", "\xFF\x80 broken \xC3", "\n\n\n"};
    for (SplitRule rule : {SplitRule::Gpt2, SplitRule::Llama3, SplitRule::Qwen2})
      for (const auto& s : samples) {
        std::string joined;
        for (const auto& p : preTokenize(s, rule)) {
          QVERIFY(!p.empty());
          joined += p;
        }
        QVERIFY(joined == s);
      }
  }

  // Oniguruma runs the three scanner regexes to the same pieces (the
  // reference tests compare both with the tokenizers library on the
  // multilingual corpus; this is the quick check here).
  void regexEngineAgreesWithTheScanners() {
    const std::vector<std::string> samples = {"The quick  brown\tfox\r\n\r\n  jumps!!", "  leading", "trailing  \n",
                                              "mixed123abc 4567 'S 'quoted' DON'T", "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC!",
                                              "\n\n\n", "x \n\n y", "\xD9\xA3\xD9\xA4\xD9\xA5\xD9\xA6 12345"};
    const std::pair<SplitRule, const char*> rules[] = {
        {SplitRule::Gpt2, kGpt2SplitRegex}, {SplitRule::Llama3, kLlama3SplitRegex}, {SplitRule::Qwen2, kQwen2SplitRegex}};
    for (const auto& [rule, pattern] : rules) {
      const SplitRegex regex(pattern, "test");
      for (const auto& text : samples) {
        std::vector<TextSpan> scanned;
        preTokenizeSpans(text, rule, scanned);
        std::vector<MatchSpan> matches;
        regex.findMatches(text, matches);
        std::vector<TextSpan> pieces;
        piecesFromMatches(matches, SplitBehavior::Isolated, false, pieces);
        QCOMPARE(pieces.size(), scanned.size());
        for (std::size_t i = 0; i < pieces.size(); ++i) {
          QCOMPARE(pieces[i].begin, scanned[i].begin);
          QCOMPARE(pieces[i].end, scanned[i].end);
        }
      }
    }
  }

  // A tokenizer.json regex is hostile input: one that does not compile is
  // refused naming Oniguruma's reason; one that backtracks exponentially
  // stops at the retry limit with an error instead of running for hours;
  // bytes that are not UTF-8 are matched as U+FFFD.
  void hostileRegexes() {
    std::string msg = errorMessageOf<TokenizerError>([] { SplitRegex("(\\p{L}+", "t.json"); });
    QVERIFY2(mentions(msg, "t.json") && mentions(msg, "does not compile"), msg.c_str());
    msg = errorMessageOf<TokenizerError>([] { SplitRegex(std::string(SplitRegex::kMaxPatternBytes + 1, 'a'), "t.json"); });
    QVERIFY2(mentions(msg, "at most"), msg.c_str());
    const SplitRegex exponential("(\\p{L}|\\p{Ll})*\\d", "t.json");
    std::vector<MatchSpan> out;
    QElapsedTimer timer;
    timer.start();
    msg = errorMessageOf<TokenizerError>([&] { exponential.findMatches(std::string(60, 'a'), out); });
    QVERIFY2(mentions(msg, "gave up"), msg.c_str());
    QVERIFY(timer.elapsed() < 120000);
    const SplitRegex letters("\\p{L}+", "t.json");
    letters.findMatches("ab\xFF" "cd\xC3", out);  // an invalid byte and a truncated sequence
    std::vector<TextSpan> pieces;
    piecesFromMatches(out, SplitBehavior::Isolated, false, pieces);
    QCOMPARE(pieces.size(), std::size_t(4));
    QCOMPARE(pieces[1].begin, std::size_t(2));
    QCOMPARE(pieces[1].end, std::size_t(3));
    QCOMPARE(pieces[3].begin, std::size_t(5));
    QCOMPARE(pieces[3].end, std::size_t(6));
  }

  // Empty matches are stepped over as the onig crate's find_iter steps
  // over them: each empty match is kept once, the text between them is a
  // piece.
  void emptyMatches() {
    const SplitRegex maybe("x*", "t.json");
    std::vector<MatchSpan> out;
    maybe.findMatches("abc", out);
    std::vector<TextSpan> pieces;
    piecesFromMatches(out, SplitBehavior::Isolated, false, pieces);
    QCOMPARE(pieces.size(), std::size_t(3));
    piecesFromMatches(out, SplitBehavior::Removed, false, pieces);
    QCOMPARE(pieces.size(), std::size_t(3));  // the removed matches are empty
    out.clear();
    maybe.findMatches("", out);
    QCOMPARE(out.size(), std::size_t(1));
    QVERIFY(!out[0].isMatch);
  }

  void bpeExpectedIds() {
    auto t = load(baseTokenizerJson(false));
    QCOMPARE(QString::fromStdString(t->kind()), QString("byte-level-bpe"));
    QCOMPARE(t->vocabSize(), int64_t(302));
    QCOMPARE(t->eosId().value(), kEndOfText);
    QVERIFY(t->encode("the") == (Ids{116, 257}));
    QVERIFY(t->encode(" the") == (Ids{258}));
    QVERIFY(t->encode("don't") == (Ids{259, 110, 260}));
    QVERIFY(t->encode("we'll") == (Ids{263, 262}));
    QVERIFY(t->encode("a  b\n\n c") == (Ids{97, 32, 32, 98, 10, 10, 264}));
    QVERIFY(t->encode("caf\xC3\xA9") == (Ids{99, 265, 266}));
    QVERIFY(t->encode("caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC") ==
            (Ids{99, 265, 266, 32, 110, 97, 195, 175, 118, 101, 32, 230, 151, 165, 230, 156, 172}));
    QVERIFY(t->encode("hi \xF0\x9F\x99\x82!") == (Ids{104, 105, 32, 240, 159, 153, 130, 33}));
    QVERIFY(t->encode("hi<|endoftext|>there") == (Ids{104, 105, kEndOfText, 116, 257, 114, 101}));
    QVERIFY(t->encode("<|im_end|><|endoftext|>") == (Ids{kImEnd, kEndOfText}));
    QVERIFY(t->encode("1234 12") == (Ids{267, 268, 32, 267}));
    QVERIFY(t->encode("").empty());
  }

  void arrayMergesGiveTheSameIds() {
    auto a = load(baseTokenizerJson(false), "a.json");
    auto b = load(baseTokenizerJson(true), "b.json");
    for (const std::string s : {"the don't we'll", "caf\xC3\xA9 1234", "a  b\n\n c"}) QVERIFY(a->encode(s) == b->encode(s));
  }

  void llama3StyleTokenizer() {
    auto t = load(llama3Style(baseTokenizerJson(false)));
    // Digits split in threes before merging: "123" + "4" cannot use the "34" merge.
    QVERIFY(t->encode("1234") == (Ids{267, 51, 52}));
    QVERIFY(load(baseTokenizerJson(false), "g.json")->encode("1234") == (Ids{267, 268}));
    QVERIFY(t->encode("DON'T") == (Ids{68, 79, 78, 39, 84}));
    QVERIFY(t->encode("don't") == (Ids{259, 110, 260}));
    QVERIFY(t->decode(t->encode("x \n\n y,z")) == "x \n\n y,z");
  }

  void splitBehaviors() {
    // The supported regexes match every character, so these behaviors all
    // give the matches as pieces (checked with the tokenizers package).
    const std::string text = "Hello  world, 1234 DON'T!!\n\n  x y\tz  caf\xC3\xA9 ";
    const json isolated = llama3Style(baseTokenizerJson(false));
    const Ids expected = load(isolated, "isolated.json")->encode(text);
    const auto withBehavior = [&](const json& behavior, const json& invert) {
      json j = isolated;
      j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = behavior;
      j["pre_tokenizer"]["pretokenizers"][0]["invert"] = invert;
      return j;
    };
    // cl100k as tiktoken conversions write it: Removed with invert: true.
    auto cl100k = load(withBehavior("Removed", true), "cl100k.json");
    QVERIFY(cl100k->encode("1234") == (Ids{267, 51, 52}));  // digits in threes, as Llama-3
    QVERIFY(cl100k->encode(text) == expected);
    int n = 0;
    for (const auto& [behavior, invert] : std::vector<std::pair<std::string, bool>>{
             {"Isolated", true}, {"MergedWithPrevious", false}, {"MergedWithPrevious", true},
             {"MergedWithNext", false}, {"MergedWithNext", true}})
      QVERIFY2(load(withBehavior(behavior, invert), "b" + std::to_string(n++) + ".json")->encode(text) == expected,
               (behavior + (invert ? " inverted" : "")).c_str());
    // Removed alone drops the whole text (every character is in a match);
    // Contiguous joins it into one piece, which the regex engine runs (the
    // ids against the tokenizers library: tests/reference/tokenizers_vs_hf.py).
    QVERIFY(load(withBehavior("Removed", false), "removed.json")->encode(text).empty());
    for (const bool invert : {false, true}) {
      const auto contiguous = load(withBehavior("Contiguous", invert), "contiguous.json");
      QVERIFY(contiguous->decode(contiguous->encode(text)) == text);
    }
    const std::string unknown = errorMessageOf<TokenizerError>([&] { load(withBehavior("Sideways", false), "s.json"); });
    QVERIFY2(mentions(unknown, "Sideways") && mentions(unknown, "s.json") && mentions(unknown, "Contiguous"),
             unknown.c_str());
    const std::string msg = errorMessageOf<TokenizerError>([&] { load(withBehavior("Removed", "yes"), "odd.json"); });
    QVERIFY2(mentions(msg, "odd.json") && mentions(msg, "'invert'"), msg.c_str());
  }

  void decodeInvertsEncode() {
    auto gpt2 = load(baseTokenizerJson(false), "g.json");
    auto llama = load(llama3Style(baseTokenizerJson(false)), "l.json");
    const std::vector<std::string> samples = {
        "", "the the the", " don't WE'LL they've", "a  b\n\n c", "caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC",
        "emoji \xF0\x9F\x99\x82\xF0\x9F\x8E\x89!!", "hi<|endoftext|>there<|im_end|>", "<|endoftext|", "1234567890 12",
        "tabs\tand\r\nlines\n", "invalid \xFF\xFE\x80 bytes \xC3", std::string("nul\0byte", 8), "   ", "\n"};
    for (const auto& s : samples) {
      QVERIFY2(gpt2->decode(gpt2->encode(s)) == s, s.c_str());
      QVERIFY2(llama->decode(llama->encode(s)) == s, s.c_str());
    }
    QVERIFY(gpt2->decode({258, kEndOfText, 264}) == " the<|endoftext|> c");
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { gpt2->decode({5000}); }), "5000"));
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { gpt2->decode({290}); }), "290"));  // a gap in the ids
  }

  void loadForModelDir() {
    const auto dir = std::filesystem::path(tmp_.path().toStdString()) / "model-a";
    std::filesystem::create_directories(dir);
    // A folder without any tokenizer is an error that says how to ask for bytes.
    const std::string none = errorMessageOf<TokenizerError>([&] { loadTokenizerForModel(dir); });
    QVERIFY2(mentions(none, dir.string()) && mentions(none, "\"bytes\""), none.c_str());
    write("model-a/tokenizer.json", baseTokenizerJson(false).dump());
    auto t = loadTokenizerForModel(dir);
    QCOMPARE(QString::fromStdString(t->kind()), QString("byte-level-bpe"));
    QCOMPARE(t->eosId().value(), kEndOfText);
    write("model-a/tokenizer_config.json", R"({"eos_token": {"content": "<|im_end|>", "special": true}})");
    QCOMPARE(loadTokenizerForModel(dir)->eosId().value(), kImEnd);
  }

  void errorsNameTheFile() {
    const std::string missing = (std::filesystem::path(tmp_.path().toStdString()) / "nope.json").string();
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { loadTokenizerJson(missing); }), missing));

    const auto broken = write("broken.json", "{\"model\": {");
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { loadTokenizerJson(broken); }), broken.string()));

    json wordPiece = baseTokenizerJson(false);
    wordPiece["model"]["type"] = "WordPiece";
    std::string msg = errorMessageOf<TokenizerError>([&] { load(wordPiece, "wp.json"); });
    QVERIFY2(mentions(msg, "WordPiece") && mentions(msg, "wp.json"), msg.c_str());

    json unigram = baseTokenizerJson(false);
    unigram["model"]["type"] = "Unigram";
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { load(unigram, "uni.json"); }), "Unigram"));

    json oddRegex = llama3Style(baseTokenizerJson(false));
    oddRegex["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(\\p{L}+|\\d";  // unbalanced
    msg = errorMessageOf<TokenizerError>([&] { load(oddRegex, "odd.json"); });
    QVERIFY2(mentions(msg, "odd.json") && mentions(msg, "(\\p{L}+|\\d") && mentions(msg, "does not compile"),
             msg.c_str());

    json whitespace = baseTokenizerJson(false);
    whitespace["pre_tokenizer"] = {{"type", "Whitespace"}};
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { load(whitespace, "ws.json"); }), "Whitespace"));

    json bert = baseTokenizerJson(false);
    bert["normalizer"] = {{"type", "BertNormalizer"}};
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { load(bert, "bert.json"); }), "BertNormalizer"));
    json regexReplace = baseTokenizerJson(false);
    regexReplace["normalizer"] = {{"type", "Replace"}, {"pattern", {{"Regex", " +"}}}, {"content", " "}};
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { load(regexReplace, "rr.json"); }), "Regex"));
    json processor = baseTokenizerJson(false);
    processor["post_processor"] = {{"type", "Mystery"}};
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { load(processor, "pp.json"); }), "Mystery"));

    json noBytes = baseTokenizerJson(false);
    noBytes["model"]["vocab"].erase(spell("a"));
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { load(noBytes, "nobytes.json"); }), "nobytes.json"));

    json badMerge = baseTokenizerJson(false);
    badMerge["model"]["merges"].push_back("q z");  // "qz" is not in the vocab
    QVERIFY(mentions(errorMessageOf<TokenizerError>([&] { load(badMerge, "merge.json"); }), "q z"));
  }
};

PLAB_TEST_APPLESS_MAIN(TestTokenizer)
}  // namespace test_tokenizer
#include "test_tokenizer.moc"
