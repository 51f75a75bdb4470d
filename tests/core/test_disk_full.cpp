// A disk that fills up (issue 19.6): mid-run, metrics.jsonl, metrics.csv and
// layers.csv each end at their last complete record (a failed append is
// truncated back, never a torn line or a malformed row) and summary.json is
// written from the space reserved at the start, saying "disk full at step N";
// a disk without room for that reserve refuses the run with a message naming
// the folder and its free space. The CLI runs on a small tmpfs in a private
// mount namespace (unshare -rm); the test skips where user namespaces are not
// allowed.
#include <QStandardPaths>
#include <QtTest/QtTest>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_process.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "train/run_config.h"

namespace test_disk_full {

using namespace plab;
namespace fs = std::filesystem;

namespace {

struct FullRun {
  int exitCode = -1;
  std::string err;
  fs::path run;  // the run folder, copied out of the tmpfs
};

std::string readAll(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Every row of a CSV file has the header's column count, and the file ends
// with a newline (its last record complete). Returns the last row's step.
int64_t checkCsvComplete(const fs::path& file) {
  const std::string text = readAll(file);
  if (text.empty()) return -1;
  if (text.back() != '\n') throw std::runtime_error(file.string() + " ends with a torn record");
  const std::vector<std::string> rows = lines(text);
  const auto columns = [](const std::string& r) { return std::count(r.begin(), r.end(), ','); };
  for (size_t i = 1; i < rows.size(); ++i)
    if (columns(rows[i]) != columns(rows[0]))
      throw std::runtime_error(file.string() + ": malformed row " + std::to_string(i + 1) + ": " + rows[i]);
  return rows.size() > 1 ? std::stoll(rows.back().substr(0, rows.back().find(','))) : -1;
}

}  // namespace

class TestDiskFull : public QObject {
  Q_OBJECT

  // Runs the CLI on a tmpfs of the given size (a tmpfs size, e.g. "1m").
  // The default fine-tune in bf16-kahan on batches of 1 x 16 tokens: each
  // step writes the same records as at 8 x 64 (the files fill at the same
  // step) for a fifth of the CPU time.
  FullRun runOnTmpfs(const QString& size, const QTemporaryDir& tmp) {
    FullRun r;
    if (plab::test::cliPath().isEmpty()) return r;
    const QString unshare = QStandardPaths::findExecutable("unshare");
    if (unshare.isEmpty()) return r;
    const fs::path mnt = fs::path(tmp.path().toStdString()) / "mnt", kept = fs::path(tmp.path().toStdString()) / "kept";
    fs::create_directories(mnt);
    fs::create_directories(kept);
    RunConfig config = defaultRunConfig();
    config.mode = OptimizerMode::Bf16Kahan;
    config.batch_size = 1;
    config.seq_len = 16;
    config.eval_batches = 1;
    const fs::path configFile = fs::path(tmp.path().toStdString()) / "config.json";
    std::ofstream(configFile) << config.toJson().dump(2);
    // The mount vanishes with the namespace: copy the run folder out.
    const QString script =
        "mount -t tmpfs -o size=\"$4\" plab-full \"$1\" || exit 77\n"
        "\"$2\" run \"$5\" --steps 100000 --no-pdf --out \"$1/run\"\nrc=$?\n"
        "cp -a \"$1/run\" \"$3/\"\nexit $rc\n";
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMP_NUM_THREADS", "1");
    p.setProcessEnvironment(env);
    p.start(unshare, {"-rm", "sh", "-c", script, "sh", QString::fromStdString(mnt.string()), plab::test::cliPath(),
                      QString::fromStdString(kept.string()), size, QString::fromStdString(configFile.string())});
    if (!p.waitForStarted(10000)) return r;
    if (!p.waitForFinished(300000)) {
      p.kill();
      p.waitForFinished();
      r.err = "the run on a full disk did not end";
      r.exitCode = -2;
      return r;
    }
    r.err = (QString::fromUtf8(p.readAllStandardOutput()) + QString::fromUtf8(p.readAllStandardError())).toStdString();
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -3;
    r.run = kept / "run";
    return r;
  }

  static bool skipped(const FullRun& r) {
    return r.exitCode == -1 || r.exitCode == 77 || r.err.find("unshare:") != std::string::npos;
  }

 private slots:
  // Full mid-run, at two sizes: every file ends at a complete record, all
  // three at the same step, and the summary says where the disk filled.
  void fullMidRunKeepsCompleteRecords_data() {
    QTest::addColumn<QString>("size");
    QTest::newRow("1 MB") << "1m";
    QTest::newRow("2 MB") << "2m";
  }
  void fullMidRunKeepsCompleteRecords() {
    QFETCH(QString, size);
    QTemporaryDir tmp;
    const FullRun r = runOnTmpfs(size, tmp);
    if (skipped(r)) QSKIP(qPrintable("no private tmpfs here: " + QString::fromStdString(r.err)));
    QVERIFY2(r.exitCode == 1, r.err.c_str());
    std::ifstream in(r.run / "summary.json");
    const nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
    QVERIFY2(!summary.is_discarded(), "summary.json is not valid JSON");
    QCOMPARE(summary.value("status", ""), std::string("failed"));
    const std::string message = summary.value("message", "");
    QVERIFY2(message.find("disk full at step ") != std::string::npos, message.c_str());
    QVERIFY2(message.find("No space left") != std::string::npos, message.c_str());

    const std::string jsonl = readAll(r.run / "metrics.jsonl");
    QVERIFY(!jsonl.empty());
    QVERIFY2(jsonl.back() == '\n', "metrics.jsonl ends with a torn record");
    size_t skipped = 0;
    const std::vector<StepMetrics> steps = readMetricsJsonl(r.run / "metrics.jsonl", &skipped);
    QCOMPARE(skipped, size_t(0));
    QCOMPARE(steps.size(), lines(jsonl).size());  // every line a complete record, none dropped
    QVERIFY(!steps.empty());
    QVERIFY(summary.value("steps_done", int64_t(0)) >= int64_t(steps.size()));
    try {
      QCOMPARE(checkCsvComplete(r.run / "metrics.csv"), steps.back().step);
      const int64_t lastLayerStep = checkCsvComplete(r.run / "layers.csv");
      QVERIFY(lastLayerStep >= 1 && lastLayerStep <= steps.back().step);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QVERIFY(fs::exists(r.run / "report.html"));  // written from the released reserve
    QVERIFY(!fs::exists(r.run / ".summary-reserve"));
  }

  // Too little space for the reserve: the run is refused before its first
  // step, with a message naming the folder and its free space.
  void tooLittleSpaceRefusesTheRun_data() {
    QTest::addColumn<QString>("size");
    QTest::newRow("8 KB") << "8k";
    QTest::newRow("100 KB") << "100k";
  }
  void tooLittleSpaceRefusesTheRun() {
    QFETCH(QString, size);
    QTemporaryDir tmp;
    const FullRun r = runOnTmpfs(size, tmp);
    if (skipped(r)) QSKIP(qPrintable("no private tmpfs here: " + QString::fromStdString(r.err)));
    QVERIFY2(r.exitCode == 1, r.err.c_str());
    QVERIFY2(r.err.find("not enough free space in ") != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find(" KiB free") != std::string::npos, r.err.c_str());
    QVERIFY2(r.err.find("failed           0") != std::string::npos || r.err.find("after 0 steps") != std::string::npos,
             r.err.c_str());
    QVERIFY(readAll(r.run / "metrics.jsonl").empty());  // no step ran
    QVERIFY(!fs::exists(r.run / ".summary-reserve"));
  }
};

PLAB_TEST_GUILESS_MAIN(TestDiskFull)
}  // namespace test_disk_full
#include "test_disk_full.moc"
