// A disk that fills up mid-run: every complete metrics line is kept and
// summary.json is still valid JSON saying why the run ended (it used to be 0
// bytes). The CLI runs on a small tmpfs in a private mount namespace
// (unshare -rm); the test skips where user namespaces are not allowed.
#include <QStandardPaths>
#include <QtTest/QtTest>

#include <fstream>

#include "support/cli_process.h"
#include "train/metrics_writer.h"

using namespace plab;
namespace fs = std::filesystem;

class TestDiskFull : public QObject {
  Q_OBJECT
 private slots:
  void fullDiskStillWritesSummary() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    const QString unshare = QStandardPaths::findExecutable("unshare");
    if (unshare.isEmpty()) QSKIP("unshare not available");
    QTemporaryDir tmp;
    const fs::path mnt = fs::path(tmp.path().toStdString()) / "mnt", kept = fs::path(tmp.path().toStdString()) / "kept";
    fs::create_directories(mnt);
    fs::create_directories(kept);
    // The mount vanishes with the namespace: copy the run folder out.
    const QString script =
        "mount -t tmpfs -o size=256k plab-full \"$1\" || exit 77\n"
        "\"$2\" run --default --mode bf16-kahan --steps 100000 --no-pdf --out \"$1/run\"\nrc=$?\n"
        "cp -a \"$1/run\" \"$3/\"\nexit $rc\n";
    QProcess p;
    p.start(unshare, {"-rm", "sh", "-c", script, "sh", QString::fromStdString(mnt.string()), plab::test::cliPath(),
                      QString::fromStdString(kept.string())});
    QVERIFY(p.waitForStarted(10000));
    if (!p.waitForFinished(300000)) {
      p.kill();
      p.waitForFinished();
      QFAIL("the run on a full disk did not end");
    }
    const QString err = QString::fromUtf8(p.readAllStandardError());
    if (p.exitCode() == 77 || err.contains("unshare:")) QSKIP(qPrintable("no private tmpfs here: " + err));
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 1, qPrintable(err.right(2000)));
    const fs::path run = kept / "run";
    std::ifstream in(run / "summary.json");
    const nlohmann::json summary = nlohmann::json::parse(in, nullptr, false);
    QVERIFY2(!summary.is_discarded(), "summary.json is not valid JSON");
    QCOMPARE(summary.value("status", ""), std::string("failed"));
    const std::string message = summary.value("message", "");
    QVERIFY2(message.find("No space left") != std::string::npos, message.c_str());
    const size_t lines = readMetricsJsonl(run / "metrics.jsonl").size();  // complete lines, torn tail skipped
    QVERIFY(lines >= 1);
    QVERIFY(summary.value("steps_done", int64_t(0)) >= int64_t(lines));
  }
};

QTEST_GUILESS_MAIN(TestDiskFull)
#include "test_disk_full.moc"
