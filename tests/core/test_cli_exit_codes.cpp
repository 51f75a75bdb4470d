// The documented exit codes of the real precision-lab-cli binary (0 ok, 1 a
// run or command failed, 2 usage or config error, 130 interrupted), with the
// full report (PNG/PDF) and stdout going to a pipe, as in scripts.
#include <QtTest/QtTest>

#include <signal.h>

#include <fstream>

#include "support/cli_process.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "train/torch_runtime.h"

namespace test_cli_exit_codes {

using namespace plab;
using plab::test::CliOutcome;
using plab::test::runCli;
namespace fs = std::filesystem;

namespace {

QString str(const fs::path& p) { return QString::fromStdString(p.string()); }

nlohmann::json readJson(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in, nullptr, false);
}

}  // namespace

class TestCliExitCodes : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
  }

  // Used to end in SIGSEGV (139) in ~QApplication after main() returned,
  // losing the buffered summary table when stdout was not a terminal.
  void fullReportRunExitsZeroAndKeepsTheSummary() {
    QTemporaryDir tmp;
    const fs::path out = fs::path(tmp.path().toStdString()) / "run";
    const CliOutcome o = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "2", "--out", str(out)});
    QVERIFY2(o.exitCode == 0, o.describe());
    QVERIFY2(o.out.contains("state saved") && o.out.contains("report:"), o.describe());  // the summary table
    QVERIFY(fs::is_regular_file(out / "report.html"));
    if (fs::exists(out / "report.pdf")) QVERIFY(fs::file_size(out / "report.pdf") > 0);  // GUI builds
    // Nothing half-written is left behind.
    for (const auto& e : fs::recursive_directory_iterator(out))
      QVERIFY2(e.path().filename().string().find(".tmp") == std::string::npos, e.path().c_str());
  }

  void everyCommandHasItsExitCode() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    QCOMPARE(runCli({"--version"}).exitCode, 0);
    QCOMPARE(runCli({"default-config"}).exitCode, 0);
    QCOMPARE(runCli({"inspect", "embedded"}).exitCode, 0);
    QCOMPARE(runCli({}).exitCode, 2);
    QCOMPARE(runCli({"nonsense"}).exitCode, 2);
    QCOMPARE(runCli({"inspect"}).exitCode, 2);
    QCOMPARE(runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "0"}).exitCode, 2);
    QCOMPARE(runCli({"bench", "--steps", "x"}).exitCode, 2);
    QCOMPARE(runCli({"download"}).exitCode, 2);
    const CliOutcome failed = runCli({"inspect", str(dir / "no-such-model")});
    QVERIFY2(failed.exitCode == 1 || failed.exitCode == 2, failed.describe());
    QVERIFY2(!failed.crashed, failed.describe());
  }

  // bench's PyTorch reference: a missing, broken or incomplete file is a
  // usage error that names what is wrong, before any training starts.
  // A device the process cannot use is a usage error before any run trains.
  void unusableDeviceIsRefusedUpFront() {
    if (plab::deviceProblem("cuda").empty()) QSKIP("this machine has CUDA");
    QTemporaryDir tmp;
    const CliOutcome o = runCli({"run", "--default", "--device", "cuda", "--out", tmp.filePath("out"), "--no-pdf"});
    QVERIFY2(o.exitCode == 2 && o.err.contains("CUDA is not available"), qPrintable(o.err));
    QVERIFY(!QFileInfo::exists(tmp.filePath("out/runs")));
  }

  void benchRefusesABadPytorchReference() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const auto write = [&](const char* name, const std::string& text) {
      std::ofstream(dir / name) << text;
      return str(dir / name);
    };
    const std::vector<std::pair<QString, QString>> cases = {
        {str(dir / "missing.json"), "not a small regular file"},
        {str(dir), "not a small regular file"},
        {write("broken.json", "{\"tokens_per_second\": "), "not a JSON object"},
        {write("no-bf16.json", R"({"tokens_per_second": {"fp32": 10}, "batch_size": 8, "seq_len": 64})"),
         "tokens_per_second.bf16"},
        {write("zero.json", R"({"tokens_per_second": {"fp32": 0, "bf16": 5}, "batch_size": 8, "seq_len": 64})"),
         "tokens_per_second.fp32"},
        {write("deep.json", std::string(100, '[') + std::string(100, ']')), "nest"}};
    for (const auto& [file, message] : cases) {
      const CliOutcome o = runCli({"bench", "--steps", "3", "--pytorch", file});
      QVERIFY2(o.exitCode == 2 && o.err.contains(message), o.describe());
    }
    // One source for the PyTorch figure; and enough steps for the loop to time one.
    const CliOutcome both = runCli({"bench", "--steps", "3", "--no-pytorch", "--python", "python3"});
    QVERIFY2(both.exitCode == 2 && both.err.contains("give one of"), both.describe());
    QCOMPARE(runCli({"bench", "--steps", "2", "--no-pytorch"}).exitCode, 2);
  }

  // bench --torch-step: a known step form is named in the header; another is a usage error.
  void benchTakesATorchStep() {
    const CliOutcome bad = runCli({"bench", "--steps", "3", "--no-pytorch", "--torch-step", "foreach"});
    QVERIFY2(bad.exitCode == 2 && bad.err.contains("--torch-step"), bad.describe());
    const CliOutcome ok =
        runCli({"bench", "--steps", "3", "--no-pytorch", "--modes", "bf16", "--torch-step", "fused"});
    QVERIFY2(ok.exitCode == 0 && ok.out.contains("adamw.torch_step fused"), ok.describe());
  }

  // Ctrl-C during training: the run stops, the report is written, exit 130.
  void interruptedRunExits130WithReport() {
    QTemporaryDir tmp;
    const fs::path out = fs::path(tmp.path().toStdString()) / "run";
    const CliOutcome o = plab::test::runCliWith(
        {"run", "--default", "--mode", "bf16-kahan", "--steps", "100000", "--out", str(out)}, [](QProcess& p, const QString& err) {
          if (!err.contains("step 1/")) return false;  // plain progress: step 1, then every 5%
          ::kill(pid_t(p.processId()), SIGINT);
          return true;
        });
    QVERIFY2(o.exitCode == 130, o.describe());
    QCOMPARE(readJson(out / "summary.json").value("status", ""), std::string("stopped"));
    QVERIFY(fs::is_regular_file(out / "report.html"));
    QVERIFY(readMetricsJsonl(out / "metrics.jsonl").size() >= 1);
  }

  // Ctrl-C while the report is being written: still handled (exit 130), the
  // report completes and the streamed metrics are untouched.
  void interruptDuringReportIsHandled() {
    for (int attempt = 0; attempt < 3; ++attempt) {
      QTemporaryDir tmp;
      const fs::path out = fs::path(tmp.path().toStdString()) / "run";
      bool signalled = false;
      const CliOutcome o = plab::test::runCliWith(
          {"run", "--default", "--mode", "bf16-kahan", "--steps", "3", "--out", str(out)}, [&](QProcess& p, const QString& err) {
            if (!err.contains("completed after")) return false;  // the trainer's last line
            signalled = p.state() == QProcess::Running && ::kill(pid_t(p.processId()), SIGINT) == 0;
            return true;
          });
      if (!signalled || o.exitCode == 0) continue;  // the report was already done: try again
      QVERIFY2(o.exitCode == 130, o.describe());
      QCOMPARE(readMetricsJsonl(out / "metrics.jsonl").size(), size_t(3));
      QVERIFY(fs::is_regular_file(out / "report.html"));
      QCOMPARE(readJson(out / "summary.json").value("steps_done", 0), 3);
      return;
    }
    QSKIP("the report was written before the signal arrived in every attempt");
  }
};

PLAB_TEST_GUILESS_MAIN(TestCliExitCodes)
}  // namespace test_cli_exit_codes
#include "test_cli_exit_codes.moc"
