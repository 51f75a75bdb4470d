// Small inputs cannot ask for unbounded memory: a config with a million
// layers is refused with its size before any weight is allocated, a
// tokenizer id far past the vocab is refused before tables are sized by it,
// and a sweep is counted before it is expanded.
#include <QtTest/QtTest>

#include <chrono>
#include <fstream>

#include "support/error_capture.h"
#include "support/test_registry.h"
#include "tokenizer/tokenizer.h"
#include "train/model_inspect.h"
#include "train/model_loading.h"
#include "train/model_memory_check.h"
#include "train/run_config.h"
#include "util/errors.h"

namespace test_input_limits {

using namespace plab;
using plab::test::errorMessageOf;
namespace fs = std::filesystem;

class TestInputLimits : public QObject {
  Q_OBJECT
 private slots:
  // Used to allocate layer after layer until std::bad_alloc.
  void millionLayersAreRefusedWithTheFigure() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "config.json";
    std::ofstream(file) << R"({"model_type": "gpt2", "n_layer": 1000000, "n_embd": 768, "n_head": 12,
                               "vocab_size": 50257, "n_positions": 1024})";
    ModelSpec spec;
    spec.source = "config";
    spec.path = file.string();
    const auto start = std::chrono::steady_clock::now();
    const std::string e = errorMessageOf<ModelError>([&] { loadModelForRun(spec, 0); });
    QVERIFY2(e.find("GiB") != std::string::npos && e.find("parameters") != std::string::npos, e.c_str());
    const std::string inspect = errorMessageOf<ModelError>([&] { inspectModel(spec); });
    QVERIFY2(inspect.find("GiB") != std::string::npos, inspect.c_str());
    QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  }

  void estimateMatchesTheExactCount() {
    const ResolvedModelSource source = resolveModelSource(ModelSpec{});  // the embedded tiny GPT-2
    QCOMPARE(estimatedParameterCount(source.config), double(source.config.parameterCount()));
    ModelConfig c = source.config;
    c.hidden_size = int64_t(1) << 40;
    QVERIFY_THROWS_EXCEPTION(ModelError, estimatedParameterCount(c));
  }

  // A 3 KB tokenizer.json with one id of 10^8 reached 3.2 GB before failing.
  void tokenizerIdFarPastTheVocabIsRefused() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "tokenizer.json";
    std::ofstream(file) << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 100000000}, "merges": []},
                               "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}})";
    const std::string e = errorMessageOf<TokenizerError>([&] { loadTokenizerJson(file); });
    QVERIFY2(e.find("100000000") != std::string::npos && e.find("out of range") != std::string::npos, e.c_str());
  }

  // 9 fields x 10 values once built 10^9 runs in memory.
  void hugeSweepIsCountedFirst() {
    nlohmann::json sweep = nlohmann::json::object();
    for (const char* field : {"seed", "steps", "batch_size", "seq_len", "warmup_steps", "eval_every", "eval_batches",
                              "grad_accum", "checkpoint_every"}) {
      nlohmann::json values = nlohmann::json::array();
      for (int v = 1; v <= 10; ++v) values.push_back(v);
      sweep[field] = values;
    }
    const auto start = std::chrono::steady_clock::now();
    const std::string e =
        errorMessageOf<ConfigError>([&] { loadRunConfigs({{"base", nlohmann::json::object()}, {"sweep", sweep}}); });
    QVERIFY2(e.find("more than 1000 runs") != std::string::npos, e.c_str());
    QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    // Small sweeps still expand.
    QCOMPARE(loadRunConfigs({{"base", nlohmann::json::object()}, {"sweep", {{"seed", {1, 2, 3}}}}}).size(), size_t(3));
  }

  // Issue 19.7: a sweep key of 50 000 dotted parts nested the run that deep
  // and crashed (exit 139).
  void sweepKeyOfManyPartsIsRefused() {
    std::string key = "a";
    for (int i = 1; i < 50000; ++i) key += ".a";
    const std::string e =
        errorMessageOf<ConfigError>([&] { loadRunConfigs({{"sweep", {{key, {1, 2}}}}}); });
    QVERIFY2(e.find("sweep key") != std::string::npos && e.find("longer than 200") != std::string::npos, e.c_str());
    QVERIFY2(e.size() < 400, e.c_str());
    const std::string parts =
        errorMessageOf<ConfigError>([&] { loadRunConfigs({{"sweep", {{"a.b.c.d.e.f.g.h.i", {1, 2}}}}}); });
    QVERIFY2(parts.find("more than 8 dotted parts") != std::string::npos, parts.c_str());
    // Real nested keys still work.
    QCOMPARE(loadRunConfigs({{"sweep", {{"adamw.lr", {1e-3, 1e-4}}}}}).size(), size_t(2));
  }

  // Issue 19.7: a tokenizer id of 3e22 was cast to int64 (undefined
  // behaviour, UBSan in readModel) and then reported as -9223372036854775808.
  void tokenizerIdsOutsideTheIdRangeAreNamed() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "tokenizer.json";
    for (const char* id : {"3e22", "18446744073709551615", "9223372036854775807", "-1", "2.5", "\"7\"", "1e999"}) {
      std::ofstream(file) << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": )" << id
                          << R"(}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}})";
      const std::string e = errorMessageOf<TokenizerError>([&] { loadTokenizerJson(file); });
      QVERIFY2(e.find("-9223372036854775808") == std::string::npos, e.c_str());
      if (std::string(id) == "1e999")
        QVERIFY2(e.find("1e999") != std::string::npos && e.find("range of a double") != std::string::npos, e.c_str());
      else
        QVERIFY2(e.find("not a token id") != std::string::npos && e.find("'b'") != std::string::npos, e.c_str());
    }
    std::ofstream(file) << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                               "added_tokens": [{"content": "<s>", "id": 3e22}]})";
    const std::string added = errorMessageOf<TokenizerError>([&] { loadTokenizerJson(file); });
    QVERIFY2(added.find("added token id is not a token id: 3e+22") != std::string::npos, added.c_str());
    std::ofstream(file) << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                               "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>"}},
                                 {"Sequence": {"id": "A"}}], "special_tokens": {"<s>": {"ids": [3e22]}}}})";
    const std::string special = errorMessageOf<TokenizerError>([&] { loadTokenizerJson(file); });
    QVERIFY2(special.find("not a token id") != std::string::npos, special.c_str());
  }
};

PLAB_TEST_APPLESS_MAIN(TestInputLimits)
}  // namespace test_input_limits
#include "test_input_limits.moc"
