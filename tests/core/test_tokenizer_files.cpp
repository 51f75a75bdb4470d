// The files around a tokenizer: which EOS a model folder's tokenizer puts
// between documents (tokenizer_config.json's eos_token, else config.json's
// or generation_config.json's eos_token_id, else an added token such as
// <|endoftext|>, never an ordinary vocab entry), and what a folder, FIFO or
// other non-regular file in a tokenizer or config file's place is called.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "model/model_config.h"
#include "support/byte_level_vocab.h"
#include "support/error_capture.h"
#include "support/temp_files.h"
#include "support/test_registry.h"
#include "tokenizer/tokenizer.h"
#include "util/errors.h"

namespace test_tokenizer_files {

using namespace plab;
using nlohmann::json;
namespace fs = std::filesystem;

using plab::test::errorMessageOf;
using plab::test::mentions;

namespace {

// Byte-level tokenizer.json, Gemma style: "</s>" (300) is an ordinary vocab
// entry, text like any other; "<eos>" (301) and "<pad>" (302) are added tokens.
json gemmaLikeTokenizer() {
  json vocab = test::byteLevelVocab({{"h", "e"}});
  vocab["</s>"] = 300;
  json j;
  j["added_tokens"] = json::array({{{"id", 301}, {"content", "<eos>"}, {"special", true}},
                                   {{"id", 302}, {"content", "<pad>"}, {"special", true}}});
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  j["post_processor"] = nullptr;
  j["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({test::byteLevelMerge("h", "e")})}};
  return j;
}

// Runs f, which may block opening `fifo` for reading (the bug this guards
// against): after a few seconds a writer opens and closes the FIFO so that a
// blocked reader sees end of file and f returns instead of hanging the test.
template <typename F>
std::string messageWithoutHanging(const fs::path& fifo, F&& f) {
  std::atomic<bool> done{false};
  std::thread unblock([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (!done && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (done) return;
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // fails at once when no reader waits
    if (fd >= 0) ::close(fd);
  });
  const std::string message = f();
  done = true;
  unblock.join();
  return message;
}

}  // namespace

class TestTokenizerFiles : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

  fs::path dir(const std::string& name) const { return fs::path(tmp_.path().toStdString()) / name; }
  fs::path write(const std::string& name, const std::string& text) {
    return plab::test::writeTestFile(tmp_, name, text);
  }

 private slots:
  void eosNeverGuessesAnOrdinaryToken() {
    write("plain/tokenizer.json", gemmaLikeTokenizer().dump());
    // No file names the EOS: "</s>" is text here, so there is none.
    QVERIFY(!loadTokenizerForModel(dir("plain"))->eosId().has_value());
    QVERIFY(!loadTokenizerForModel(dir("plain"))->eosIsTokenizers());
    // loadTokenizerJson alone guesses among the added tokens only as well.
    QVERIFY(!loadTokenizerJson(dir("plain") / "tokenizer.json")->eosId().has_value());
  }

  void eosFromConfigJsonWhenTokenizerConfigNamesNone() {
    write("gemma/tokenizer.json", gemmaLikeTokenizer().dump());
    write("gemma/config.json", R"({"model_type": "gemma", "eos_token_id": 301, "bos_token_id": 2})");
    QCOMPARE(loadTokenizerForModel(dir("gemma"))->eosId().value(), int64_t(301));
    // A list of EOS ids (newer configs): the first.
    write("gemma/config.json", R"({"model_type": "gemma", "eos_token_id": [302, 301]})");
    QCOMPARE(loadTokenizerForModel(dir("gemma"))->eosId().value(), int64_t(302));
    // generation_config.json when config.json has none.
    write("gemma/config.json", R"({"model_type": "gemma", "eos_token_id": null})");
    write("gemma/generation_config.json", R"({"eos_token_id": [301, 302]})");
    QCOMPARE(loadTokenizerForModel(dir("gemma"))->eosId().value(), int64_t(301));
    // tokenizer_config.json's eos_token comes first, as in transformers.
    write("gemma/config.json", R"({"model_type": "gemma", "eos_token_id": 301})");
    write("gemma/tokenizer_config.json", R"({"eos_token": "<pad>"})");
    QCOMPARE(loadTokenizerForModel(dir("gemma"))->eosId().value(), int64_t(302));
  }

  // config.json's eos_token_id is only the project's fallback separator
  // (transformers' tokenizer never reads it, and the model's config only
  // warns about such ids): an unusable one is passed over and named.
  void badConfigEosIdsAreNamed() {
    write("bad/tokenizer.json", gemmaLikeTokenizer().dump());
    for (const std::string config : {R"({"eos_token_id": 5000})", R"({"eos_token_id": -1})",
                                     R"({"eos_token_id": "301"})", R"({"eos_token_id": []})",
                                     R"({"eos_token_id": [301, 1.5]})", R"({"eos_token_id": 290})"}) {
      write("bad/config.json", config);
      const auto t = loadTokenizerForModel(dir("bad"));
      QVERIFY2(!t->eosId().has_value() && !t->eosIsTokenizers(), config.c_str());
      const std::string origin = t->eosOrigin();
      QVERIFY2(mentions(origin, "eos_token_id") && mentions(origin, "config.json"), (config + " -> " + origin).c_str());
    }
    write("bad/config.json", R"({"eos_token_id": 290})");
    QVERIFY(mentions(loadTokenizerForModel(dir("bad"))->eosOrigin(), "no token"));  // a gap in the ids
  }

  // The special tokens tokenizer_config.json and special_tokens_map.json
  // name are registered as transformers registers them (checked against
  // AutoTokenizer by tests/reference/tokenizers_vs_hf.py): an EOS the
  // vocabulary lacks gets the next id and is matched in the text; an
  // ordinary vocabulary entry named a special token keeps its id and is
  // matched whole; special_tokens_map.json wins.
  void namedSpecialTokensAsTransformers() {
    write("named/tokenizer.json", gemmaLikeTokenizer().dump());
    const auto base = loadTokenizerForModel(dir("named"));
    write("named/tokenizer_config.json", R"({"eos_token": "<|im_end|>", "pad_token": "</s>"})");
    auto t = loadTokenizerForModel(dir("named"));
    QCOMPARE(t->vocabSize(), base->vocabSize() + 1);
    QCOMPARE(t->eosId().value(), base->vocabSize());
    QVERIFY(t->eosIsTokenizers());
    QVERIFY(mentions(t->eosOrigin(), "tokenizer_config.json"));
    const auto ids = t->encode("a<|im_end|>b");
    QVERIFY(std::find(ids.begin(), ids.end(), base->vocabSize()) != ids.end());
    write("named/special_tokens_map.json", R"({"eos_token": {"content": "</s>"}})");
    t = loadTokenizerForModel(dir("named"));
    QVERIFY(mentions(t->eosOrigin(), "special_tokens_map.json"));
    QCOMPARE(t->encode("</s>").size(), std::size_t(1));  // a vocabulary entry, now matched as a special token
  }

  void foldersAndFifosAreNamedAsSuch() {
    fs::create_directories(dir("folder-as-file/tokenizer.json"));
    std::string msg = errorMessageOf<TokenizerError>([&] { loadTokenizerJson(dir("folder-as-file/tokenizer.json")); });
    QVERIFY2(mentions(msg, "is a directory") && !mentions(msg, "JSON"), msg.c_str());
    msg = errorMessageOf<TokenizerError>([&] { loadTokenizerForModel(dir("folder-as-file")); });
    QVERIFY2(mentions(msg, "tokenizer.json") && mentions(msg, "is a directory"), msg.c_str());

    fs::create_directories(dir("folder-config/config.json"));
    msg = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(dir("folder-config/config.json")); });
    QVERIFY2(mentions(msg, "config.json") && mentions(msg, "is a directory"), msg.c_str());

    // GPT-2 files: merges.txt as a folder once loaded with no merges at all.
    write("gpt2/vocab.json", test::byteLevelVocab({}).dump());
    fs::create_directories(dir("gpt2/merges.txt"));
    msg = errorMessageOf<TokenizerError>([&] { loadTokenizerForModel(dir("gpt2")); });
    QVERIFY2(mentions(msg, "merges.txt") && mentions(msg, "is a directory"), msg.c_str());

    const fs::path fifo = dir("fifo.json");
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    msg = messageWithoutHanging(fifo, [&] { return errorMessageOf<TokenizerError>([&] { loadTokenizerJson(fifo); }); });
    QVERIFY2(mentions(msg, "fifo.json") && mentions(msg, "FIFO"), msg.c_str());
    msg = messageWithoutHanging(fifo, [&] { return errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(fifo); }); });
    QVERIFY2(mentions(msg, "fifo.json") && mentions(msg, "FIFO"), msg.c_str());

    // A tokenizer_config.json folder is reported, not skipped.
    write("cfg-folder/tokenizer.json", gemmaLikeTokenizer().dump());
    fs::create_directories(dir("cfg-folder/tokenizer_config.json"));
    msg = errorMessageOf<TokenizerError>([&] { loadTokenizerForModel(dir("cfg-folder")); });
    QVERIFY2(mentions(msg, "tokenizer_config.json") && mentions(msg, "is a directory"), msg.c_str());
  }
};

PLAB_TEST_APPLESS_MAIN(TestTokenizerFiles)
}  // namespace test_tokenizer_files
#include "test_tokenizer_files.moc"
