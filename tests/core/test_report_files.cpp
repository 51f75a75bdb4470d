// What the tool guarantees about its files: metrics are append-only and
// never rewritten by the report; every derived file is replaced whole
// (temporary name + rename); a summary is valid JSON whatever its message.
#include <QtTest/QtTest>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "report/run_report.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "util/atomic_file.h"
#include "util/errors.h"

namespace test_report_files {

using namespace plab;
namespace fs = std::filesystem;

namespace {

StepMetrics stepAt(int64_t step) {
  StepMetrics m;
  m.step = step;
  m.loss = 4.0 / double(step);
  m.layers.push_back({"lm_head", 0.25, 0.9});
  return m;
}

RunRecord recordWithSteps(int steps) {
  RunRecord r;
  r.config = defaultRunConfig();
  r.config.name = "files";
  r.info.runName = "files";
  r.info.layers = {"lm_head"};
  for (int s = 1; s <= steps; ++s) r.steps.push_back(stepAt(s));
  r.result.stepsDone = steps;
  r.result.finalLoss = r.steps.empty() ? 0.0 : r.steps.back().loss;
  return r;
}

std::string readAll(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ino_t inodeOf(const fs::path& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 ? st.st_ino : 0;
}

bool hasTemporaries(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find("tmp") != std::string::npos) return true;
  return false;
}

}  // namespace

class TestReportFiles : public QObject {
  Q_OBJECT
 private slots:
  // The report used to rebuild metrics.* in place from the records: a kill
  // during report writing left 22 of 120 lines or a torn line.
  void reportNeverRewritesStreamedMetrics() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    {
      MetricsWriter streamed(dir);
      for (int s = 1; s <= 5; ++s) streamed.write(stepAt(s));
    }
    const std::string jsonl = readAll(dir / "metrics.jsonl"), csv = readAll(dir / "metrics.csv"),
                      layers = readAll(dir / "layers.csv");
    const ino_t jsonlInode = inodeOf(dir / "metrics.jsonl");
    writeRunReport(dir, recordWithSteps(3));  // records differ from what streamed
    QCOMPARE(readAll(dir / "metrics.jsonl"), jsonl);
    QCOMPARE(readAll(dir / "metrics.csv"), csv);
    QCOMPARE(readAll(dir / "layers.csv"), layers);
    QCOMPARE(inodeOf(dir / "metrics.jsonl"), jsonlInode);
    QVERIFY(fs::is_regular_file(dir / "report.html"));
    QVERIFY(!hasTemporaries(dir));
  }

  // A folder without streamed metrics (an export) still gets them.
  void exportWritesMissingMetrics() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "export";
    writeRunReport(dir, recordWithSteps(4));
    QCOMPARE(readMetricsJsonl(dir / "metrics.jsonl").size(), size_t(4));
    QVERIFY(!hasTemporaries(dir));
  }

  // Derived files are renamed into place, never truncated and refilled: a
  // reader holding the old file (here a hard link) still sees it whole.
  void derivedFilesAreReplacedByRename() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    writeRunReport(dir, recordWithSteps(2));
    for (const char* f : {"summary.json", "config.json", "report.html"}) {
      fs::create_hard_link(dir / f, dir / (std::string(f) + ".old"));
    }
    const std::string oldSummary = readAll(dir / "summary.json");
    RunRecord again = recordWithSteps(2);
    again.result.message = "second report";
    writeRunReport(dir, again);
    QCOMPARE(readAll(dir / "summary.json.old"), oldSummary);
    QVERIFY(readAll(dir / "summary.json").find("second report") != std::string::npos);
    for (const char* f : {"summary.json", "config.json", "report.html"})
      QVERIFY2(inodeOf(dir / f) != inodeOf(dir / (std::string(f) + ".old")), f);
  }

  // Reopening a writer (a resumed run) appends; it never truncates.
  void metricsWriterAppends() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    {
      MetricsWriter w(dir);
      for (int s = 1; s <= 3; ++s) w.write(stepAt(s));
    }
    {
      MetricsWriter w(dir);
      w.write(stepAt(4));
    }
    QCOMPARE(readMetricsJsonl(dir / "metrics.jsonl").size(), size_t(4));
    const std::string csv = readAll(dir / "metrics.csv");
    QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 5L);  // one header + 4 rows
  }

  // A non-UTF-8 byte in an error message left summary.json empty (the JSON
  // dump threw) and no report.html.
  void invalidUtf8MessageStillGivesValidFiles() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    RunRecord r = recordWithSteps(2);
    r.result.status = RunStatus::Failed;
    r.result.message = "cannot read \xff\xfe.txt";
    writeRunReport(dir, r);
    std::ifstream in(dir / "summary.json");
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    QVERIFY(!j.is_discarded());
    QVERIFY(j.at("message").get<std::string>().find("cannot read") == 0);
    QVERIFY(fs::file_size(dir / "report.html") > 0);
  }

  void atomicWriteFailureNamesTheFileAndLeavesNoTemporary() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    writeFileAtomically(dir / "a.txt", "old");
    fs::create_directory(dir / "b.txt");  // a folder cannot be replaced by a file
    try {
      writeFileAtomically(dir / "b.txt", "new");
      QFAIL("expected IoError");
    } catch (const IoError& e) {
      QVERIFY2(std::string(e.what()).find("b.txt") != std::string::npos, e.what());
    }
    QCOMPARE(readAll(dir / "a.txt"), std::string("old"));
    QVERIFY(!hasTemporaries(dir));
  }
};

PLAB_TEST_APPLESS_MAIN(TestReportFiles)
}  // namespace test_report_files
#include "test_report_files.moc"
