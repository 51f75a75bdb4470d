// Deeply nested JSON (80 000 levels of '[') in a safetensors header, a
// config.json, tokenizer.json, a shard index or a run config used to
// overflow the stack (SIGSEGV). Nesting is capped before parsing, and error
// messages show a short escaped excerpt of a bad value.
#include <QtTest/QtTest>

#include <cstring>
#include <fstream>

#include "model/model_config.h"
#include "model/safetensors.h"
#include "support/cli_process.h"
#include "support/error_capture.h"
#include "support/test_registry.h"
#include "tokenizer/tokenizer.h"
#include "util/errors.h"
#include "util/json_file.h"
#include "util/json_limits.h"

namespace test_json_limits {

using namespace plab;
using plab::test::errorMessageOf;
namespace fs = std::filesystem;

namespace {

constexpr int kDeep = 80000;

// A gpt2 config.json, valid up to an n_embd string value that follows.
const char* const kValidUntilEmbd =
    "{\"model_type\": \"gpt2\", \"vocab_size\": 100, \"n_layer\": 1, \"n_head\": 1, \"n_positions\": 16, "
    "\"n_embd\": \"";

std::string deepArray() { return std::string(kDeep, '[') + std::string(kDeep, ']'); }


void writeSafetensorsWithHeader(const fs::path& file, const std::string& header) {
  std::ofstream out(file, std::ios::binary);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(char((n >> (8 * i)) & 0xff));
  out << header;
}

}  // namespace

class TestJsonLimits : public QObject {
  Q_OBJECT
 private slots:
  void nestingCheck() {
    QVERIFY(jsonNestingProblem("{\"a\": [[1, 2], {\"b\": \"[[[[[\"}]}").empty());
    QVERIFY(jsonNestingProblem(std::string(kMaxJsonDepth, '[')).empty());
    QVERIFY(!jsonNestingProblem(std::string(kMaxJsonDepth + 1, '[')).empty());
    QVERIFY(jsonNestingProblem("\"\\\"[[[[\"").empty());  // brackets inside a string with an escaped quote
  }

  void deepSafetensorsHeader() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "model.safetensors";
    writeSafetensorsWithHeader(file, "{\"w\": {\"dtype\": \"F32\", \"shape\": " + deepArray() +
                                         ", \"data_offsets\": [0, 4]}}");
    const std::string e = errorMessageOf<SafetensorsError>([&] { SafetensorsFile f(file); });
    QVERIFY2(e.find("nested deeper") != std::string::npos, e.c_str());
  }

  void deepConfigField() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "config.json";
    std::ofstream(file) << "{\"model_type\": \"gpt2\", \"n_embd\": " << deepArray() << "}";
    const std::string e = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(file); });
    QVERIFY2(e.find("nested deeper") != std::string::npos, e.c_str());
  }

  void deepTokenizerJson() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "tokenizer.json";
    std::ofstream(file) << "{\"model\": {\"type\": \"BPE\", \"vocab\": " << deepArray() << "}}";
    const std::string e = errorMessageOf<TokenizerError>([&] { loadTokenizerJson(file); });
    QVERIFY2(e.find("nested deeper") != std::string::npos, e.c_str());
  }

  void deepRunConfigIsAUsageError() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "run.json";
    std::ofstream(file) << "{\"name\": \"deep\", \"plan\": " << deepArray() << "}";
    const plab::test::CliOutcome o = plab::test::runCli({"run", QString::fromStdString(file.string()), "--no-pdf"});
    QVERIFY2(o.exitCode == 2 && o.err.contains("nested deeper"), o.describe());
  }

  // A bad value is shown as a short excerpt, not dumped whole.
  void errorMessagesShowAnExcerpt() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "config.json";
    std::ofstream(file) << kValidUntilEmbd << std::string(1 << 20, 'x') << "\"}";
    const std::string e = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(file); });
    QVERIFY2(e.find("n_embd") != std::string::npos, e.c_str());
    QVERIFY2(e.size() < 600, std::to_string(e.size()).c_str());
    // The parser's own message quotes the bad token: a 1 MB string with a
    // non-UTF-8 byte at its end.
    std::ofstream(file) << kValidUntilEmbd << std::string(1 << 20, 'x') << "\xff\"}";
    const std::string bad = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(file); });
    QVERIFY2(bad.size() < 600, std::to_string(bad.size()).c_str());
    QVERIFY2(bad.find('\xff') == std::string::npos, bad.c_str());
    QCOMPARE(textExcerpt("a\xff\n"), std::string("a\\xff\\x0a"));
    QCOMPARE(jsonExcerpt(std::string(100, 'y'), 10), std::string("\"yyyyyyyyy..."));
  }

  // Issue 19.7: 1e999 escaped as the library's "[json.exception.out_of_range
  // .406]" from a safetensors header (only parse errors were caught).
  void numberPastADoubleIsNamed() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "model.safetensors";
    writeSafetensorsWithHeader(file, R"({"w": {"dtype": "F32", "shape": [1e999], "data_offsets": [0, 4]}})");
    const std::string e = errorMessageOf<SafetensorsError>([&] { SafetensorsFile f(file); });
    QVERIFY2(e.find("number 1e999 is beyond the range of a double") != std::string::npos, e.c_str());
    QVERIFY2(e.find("json.exception") == std::string::npos, e.c_str());
    const fs::path sharded = fs::path(tmp.path().toStdString()) / "sharded";
    fs::create_directories(sharded);
    std::ofstream(sharded / "model.safetensors.index.json") << R"({"metadata": {"total_size": 1e999}, "weight_map": {}})";
    const std::string i = errorMessageOf<SafetensorsError>([&] { SafetensorsCheckpoint c(sharded); });
    QVERIFY2(i.find("1e999") != std::string::npos && i.find("json.exception") == std::string::npos, i.c_str());
    const fs::path tokenizer = fs::path(tmp.path().toStdString()) / "tokenizer.json";
    std::ofstream(tokenizer) << R"({"model": {"type": "BPE", "vocab": {"a": -1e999}, "merges": []}})";
    const std::string t = errorMessageOf<TokenizerError>([&] { loadTokenizerJson(tokenizer); });
    QVERIFY2(t.find("-1e999 in 'model.vocab.a' is beyond") != std::string::npos, t.c_str());  // the field named (issue 37.7)
    try {
      const nlohmann::json never = nlohmann::json::parse("[1, 2, oops]");
      QFAIL(never.dump().c_str());
    } catch (const nlohmann::json::exception& parseError) {
      const std::string text = jsonErrorText(parseError);
      QVERIFY2(text.find("json.exception") == std::string::npos && text.find("line 1") != std::string::npos,
               text.c_str());
    }
  }

  void numberPastADoubleInARunConfigIsAUsageError() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "run.json";
    std::ofstream(file) << R"({"name": "big", "adamw": {"lr": 1e999}})";
    const plab::test::CliOutcome o = plab::test::runCli({"run", QString::fromStdString(file.string()), "--no-pdf"});
    QVERIFY2(o.exitCode == 2 && o.err.contains("run.json") && !o.err.contains("json.exception"), o.describe());
    // Issue 37.7: the field was not named.
    QVERIFY2(o.err.contains("number 1e999 in 'adamw.lr' is beyond the range of a double"), o.describe());
  }

  // Where parsing stops, as a field path; "" when it does not.
  void errorPathNamesTheField() {
    QCOMPARE(jsonPathAtError(R"({"adamw": {"lr": 1e999}})"), std::string("adamw.lr"));
    QCOMPARE(jsonPathAtError(R"({"runs": [{"steps": 1}, {"steps": 1e999}]})"), std::string("runs[1].steps"));
    QCOMPARE(jsonPathAtError(R"({"a": [1, 2, oops]})"), std::string("a[2]"));
    QCOMPARE(jsonPathAtError(R"(1e999)"), std::string());
    QCOMPARE(jsonPathAtError(R"({"a": 1})"), std::string());
    QCOMPARE(jsonPathAtError(std::string(100, '[')), std::string());  // past the nesting cap: not walked
    nlohmann::json value;
    const std::string problem = parseJsonText(R"({"plan": {"overrides": {"x": -1e400}}})", value);
    QVERIFY2(problem.find("number -1e400 in 'plan.overrides.x' is beyond the range") != std::string::npos, problem.c_str());
  }

  // The parser keeps the last of two keys silently; the tool's own formats refuse them.
  void duplicateKeysAreFound() {
    QCOMPARE(jsonDuplicateKey(R"({"mode": "fp32", "mode": "bf16"})"), std::string("mode"));
    QCOMPARE(jsonDuplicateKey(R"({"adamw": {"lr": 1, "lr": 2}})"), std::string("adamw.lr"));
    QCOMPARE(jsonDuplicateKey(R"({"runs": [{"a": 1}, {"a": 1, "b": 2, "a": 3}]})"), std::string("runs[1].a"));
    QCOMPARE(jsonDuplicateKey(R"({"a": {"x": 1}, "b": {"x": 1}})"), std::string());
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "run.json";
    std::ofstream(file) << R"({"name": "a", "mode": "fp32", "mode": "bf16"})";
    const JsonFile read = readJsonFile(file, kMaxJsonFileBytes, /*refuseDuplicateKeys=*/true);
    QVERIFY(read.status == JsonFileStatus::Malformed);
    QVERIFY2(read.problem.find("gives 'mode' twice") != std::string::npos, read.problem.c_str());
    QVERIFY(readJsonFile(file).ok());  // third-party formats keep the parser's rule
  }
};

PLAB_TEST_APPLESS_MAIN(TestJsonLimits)
}  // namespace test_json_limits
#include "test_json_limits.moc"
