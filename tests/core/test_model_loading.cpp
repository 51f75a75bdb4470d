// Which tokenizer a run gets (model_loading.h): the folder's tokenizer.json
// or vocab.json + merges.txt, bytes for configs without one or when the run
// asks for them, a clear error for a pretrained folder without any; the
// description that run_info.json records; model.tokenizer in the run config.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "support/byte_level_vocab.h"
#include "support/error_capture.h"
#include "support/test_registry.h"
#include "support/tiny_models.h"
#include "train/model_inspect.h"
#include "train/model_loading.h"
#include "util/errors.h"

namespace test_model_loading {

using namespace plab;
using nlohmann::json;
namespace fs = std::filesystem;

using plab::test::errorMessageOf;
using plab::test::mentions;

class TestModelLoading : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;

  // A folder with a tiny GPT-2 config.json (vocab 400, no bos/eos ids: the
  // tiny config's 0 would name a byte as the EOS) and nothing else.
  fs::path modelFolder(const std::string& name) {
    const fs::path dir = fs::path(tmp_.path().toStdString()) / name;
    fs::create_directories(dir);
    json config = test::tinyGpt2Config().toJson();
    config["vocab_size"] = 400;
    config.erase("bos_token_id");
    config.erase("eos_token_id");
    std::ofstream(dir / "config.json") << config.dump();
    return dir;
  }
  static ModelSpec spec(const std::string& source, const fs::path& path, const std::string& tokenizer = "auto") {
    ModelSpec s;
    s.source = source;
    s.path = path.string();
    s.tokenizer = tokenizer;
    return s;
  }

 private slots:
  void pretrainedFolderWithoutTokenizerIsAnError() {
    const fs::path dir = modelFolder("no-tokenizer");
    const std::string msg =
        errorMessageOf<TokenizerError>([&] { tokenizerForSource(resolveModelSource(spec("folder", dir))); });
    QVERIFY2(mentions(msg, dir.string()) && mentions(msg, "\"bytes\""), msg.c_str());
    // Asked for explicitly, bytes are fine.
    std::string description;
    auto bytes = tokenizerForSource(resolveModelSource(spec("folder", dir, "bytes")), &description);
    QCOMPARE(QString::fromStdString(bytes->kind()), QString("bytes"));
    QCOMPARE(QString::fromStdString(description), QString("bytes"));
    // inspect shows the problem instead of failing.
    QVERIFY(inspectModel(spec("folder", dir)).tokenizerKind.rfind("none: ", 0) == 0);
  }

  void configWithoutTokenizerUsesBytes() {
    const fs::path dir = modelFolder("config-only");
    std::string description;
    auto t = tokenizerForSource(resolveModelSource(spec("config", dir / "config.json")), &description);
    QCOMPARE(QString::fromStdString(description), QString("bytes"));
  }

  void vocabAndMergesAreLoadedAndRecorded() {
    const fs::path dir = modelFolder("gpt2-files");
    json vocab = test::byteLevelVocab({{"h", "e"}});  // "he" is 256
    vocab["<|endoftext|>"] = 257;
    std::ofstream(dir / "vocab.json") << vocab.dump();
    std::ofstream(dir / "merges.txt") << "#version: 0.2\nh e\n";
    std::string description;
    auto t = tokenizerForSource(resolveModelSource(spec("folder", dir)), &description);
    QCOMPARE(QString::fromStdString(t->kind()), QString("byte-level-bpe"));
    QVERIFY2(mentions(description, "vocab.json + merges.txt"), description.c_str());
    QVERIFY(t->encode("hehe") == (std::vector<int64_t>{256, 256}));
    QCOMPARE(t->eosId().value(), int64_t(257));
  }

  void runConfigTokenizerField() {
    ModelSpec s = spec("folder", "/m", "bytes");
    QCOMPARE(QString::fromStdString(modelSpecFromJson(toJson(s)).tokenizer), QString("bytes"));
    QCOMPARE(QString::fromStdString(modelSpecFromJson(json{{"source", "embedded"}}).tokenizer), QString("auto"));
    const std::string msg =
        errorMessageOf<ConfigError>([] { modelSpecFromJson(json{{"source", "embedded"}, {"tokenizer", "sp"}}); });
    QVERIFY2(mentions(msg, "model.tokenizer") && mentions(msg, "'sp'"), msg.c_str());
  }
};

PLAB_TEST_APPLESS_MAIN(TestModelLoading)
}  // namespace test_model_loading
#include "test_model_loading.moc"
