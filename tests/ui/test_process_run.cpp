// The app's Processes field (issue 23.5): with N > 1 a run goes through
// precision-lab-cli run --nproc N as a child process (ProcessRun), followed
// through its run folder into the same charts as an in-process run; the
// memory chart shows what each rank holds; Stop ends every process of the
// child's group (there is no Pause); a missing or failing CLI is a clear
// error.
#include <signal.h>

#include <QDir>
#include <QFile>
#include <QTabWidget>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "charts/chart_panel.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "main_window.h"
#include "window_waits.h"
#include "support/test_registry.h"
#include "ui/window_helpers.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"
#include "run/process_run.h"
#include "run/stored_run_reader.h"
#include "support/cli_process.h"

// core/distributed/process_group.h declares it, but pulls in all of torch.
namespace plab {
bool processGroupsAvailable();
}

namespace test_process_run {

using namespace plab::ui;

namespace {

constexpr int kRunTimeoutMs = 300000;  // generous: 2 shared cores

// As tests/core/test_distributed.cpp decides: why 2 ranks cannot run here, or nullptr.
const char* missingRanks() {
  if (plab::test::cliPath().isEmpty()) return "PLAB_CLI not set (run through ctest)";
  if (!plab::processGroupsAvailable()) return "this build has no Gloo headers (libgloo-dev): no process groups";
  return nullptr;
}

#define REQUIRE_TWO_RANKS()                           \
  do {                                                \
    if (const char* why = missingRanks()) QSKIP(why); \
  } while (0)

// Small and quick; batch 2 gives each of 2 ranks one row.
void makeRunTiny(MainWindow& w, int steps, int processes) {
  plab::RunConfig c = w.currentConfig();
  c.steps = steps;
  c.batch_size = 2;
  c.seq_len = 32;
  c.grad_accum = 1;
  c.warmup_steps = 1;
  c.eval_every = 0;
  c.eval_batches = 1;
  c.layer_stats_every = 1;
  c.update_window = 0;
  c.device = "cpu";
  w.optimizerPanel()->setFrom(c);
  w.optimizerPanel()->setProcesses(processes);
  w.controller()->processRun()->setCliPath(plab::test::cliPath());  // the tests' binary has none beside it
}

bool finished(const RunStore& store, int run) {
  return store.state(run) != RunState::Queued && store.state(run) != RunState::Running &&
         store.state(run) != RunState::Paused;
}

// Gone, or the number now belongs to a process outside the child's group.
bool processGone(qint64 pid, qint64 group) {
  QFile stat(QString("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return true;
  const QByteArray text = stat.readAll();
  const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
  return fields.size() < 3 || fields[2].toLongLong() != group;
}

int lineCount(const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::ReadOnly)) return -1;
  return static_cast<int>(f.readAll().count('\n'));
}

plab::MemoryBreakdown bytes(int64_t weights, int64_t gradients, int64_t moments, int64_t kahan) {
  plab::MemoryBreakdown m;
  m.weights = weights;
  m.gradients = gradients;
  m.moments = moments;
  m.kahan = kahan;
  return m;
}

}  // namespace

class TestProcessRun : public QObject {
  Q_OBJECT
 private slots:
  void processesFieldDefaultsToOneAndSaysWhatItDoes() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QSpinBox* field = w.optimizerPanel()->processesSpin();
    QCOMPARE(field->objectName(), QString("processes"));
    QCOMPARE(field->value(), 1);
    QCOMPARE(field->minimum(), 1);
    QVERIFY(field->maximum() >= 1 && field->maximum() <= 64);
    QCOMPARE(field->maximum(), OptimizerPanel::maxLocalProcesses());
    QVERIFY(field->toolTip().contains("data parallel on N local processes, optimizer state sharded; the charts show "
                                      "rank 0 and the statistics summed over ranks", Qt::CaseInsensitive));
    if (field->maximum() < 2) QSKIP("one CPU and no GPU: the field cannot go above 1");
    // The global batch must split evenly, as the CLI requires.
    makeRunTiny(w, 2, 2);
    plab::RunConfig c = w.currentConfig();
    c.batch_size = 3;
    w.optimizerPanel()->setFrom(c);
    QVERIFY2(w.startProblem().contains("divisible by the 2 processes"), qPrintable(w.startProblem()));
    w.optimizerPanel()->setProcesses(1);
    QVERIFY(!w.startProblem().contains("processes"));
  }

  void memoryChartShowsEachRank() {
    plab::RunRecord run;
    run.config.name = "run1-bf16-kahan";
    run.config.mode = plab::OptimizerMode::Bf16Kahan;
    run.info.parameterCount = 1000;
    run.info.fp32Baseline = plab::fp32AdamWBaseline(1000);
    run.info.optimizerStateSharded = true;
    run.info.rankMemory = {bytes(2000, 2000, 3000, 1500), bytes(2000, 2000, 1000, 500)};
    plab::StepMetrics step;
    step.step = 1;
    step.memory = bytes(2000, 2000, 4000, 2000);
    run.steps.push_back(step);
    MemoryChart chart;
    chart.resize(900, 500);
    chart.showRuns({run});
    QCOMPARE(chart.partBars(0)->dataCount(), 4);  // baseline, the run, rank 0, rank 1
    QCOMPARE(chart.barLabels().size(), 4);
    QCOMPARE(chart.barLabels()[2], QString("per rank (2 processes): rank 0"));
    QCOMPARE(chart.barLabels()[3], QString("rank 1"));
    QCOMPARE(chart.savingTexts().size(), 3);
    QCOMPARE(chart.savingTexts()[1], QString("75.0 % of the optimizer state"));
    QCOMPARE(chart.savingTexts()[2], QString("25.0 % of the optimizer state"));
    QCOMPARE(chart.partBars(2)->data()->at(3)->value, 1000.0 / (1024 * 1024));  // rank 1's moments, MiB
    QCOMPARE(chart.savedFractions().size(), size_t(1));  // still one per run
    // One process: no rank bars.
    run.info.rankMemory = {step.memory};
    chart.showRuns({run});
    QCOMPARE(chart.partBars(0)->dataCount(), 2);
  }

  void rankMemoryIsReadFromTheRunFolder() {
    QTemporaryDir dir;
    const std::filesystem::path folder = dir.path().toStdString();
    QFile info(dir.filePath("run_info.json"));
    QVERIFY(info.open(QIODevice::WriteOnly));
    info.write(R"({"rank_memory": [{"weights": 1, "gradients": 2, "moments": 3, "master": 0, "kahan": 4},
                                   {"weights": 1, "gradients": 2, "moments": 5, "master": 0, "kahan": 6}],
                   "optimizer_state_sharded": true})");
    info.close();
    plab::RunRecord record;
    readRankMemory(folder, record);
    QCOMPARE(record.info.rankMemory.size(), size_t(2));
    QCOMPARE(record.info.rankMemory[1].moments, int64_t(5));
    QVERIFY(record.info.optimizerStateSharded);
    QCOMPARE(record.result.worldSize, 2);  // no summary yet: the ranks it started with
    QFile summary(dir.filePath("summary.json"));
    QVERIFY(summary.open(QIODevice::WriteOnly));
    summary.write(R"({"status": "completed", "world_size": 3, "rank_memory": [{"weights": 9}]})");
    summary.close();
    readRankMemory(folder, record);
    QCOMPARE(record.result.worldSize, 3);
    QCOMPARE(record.result.rankMemory.size(), size_t(1));
    QCOMPARE(record.result.rankMemory[0].weights, int64_t(9));
  }

  void missingCliIsAClearError() {
    ProcessRun run;
    run.setCliPath("/nonexistent/precision-lab-cli");
    run.setProcesses(2);
    QSignalSpy done(&run, &ProcessRun::runFinished);
    run.start(7, plab::defaultRunConfig());
    QVERIFY(done.wait(10000));
    QCOMPARE(done.first().at(0).toInt(), 7);
    const auto result = done.first().at(1).value<plab::RunResult>();
    QCOMPARE(result.status, plab::RunStatus::Failed);
    const QString message = QString::fromStdString(result.message);
    QVERIFY2(message.contains("/nonexistent/precision-lab-cli") && message.contains("Processes to 1"),
             qPrintable(message));
  }

  void failingCliShowsItsStderrTail() {
    // A stand-in for the CLI that fails the way a refused run does.
    QTemporaryDir dir;
    const QString script = dir.filePath("precision-lab-cli");
    QFile f(script);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("#!/bin/sh\necho 'error: rank 1 exited with code 3' >&2\necho 'last words' >&2\n"
            "echo 'frame #3: <unknown function> (c10d stack trace)' >&2\nexit 1\n");
    f.close();
    QVERIFY(f.setPermissions(f.permissions() | QFileDevice::ExeOwner));
    ProcessRun run;
    run.setCliPath(script);
    run.setProcesses(2);
    QSignalSpy done(&run, &ProcessRun::runFinished);
    QSignalSpy log(&run, &ProcessRun::logLine);
    plab::RunConfig config = plab::defaultRunConfig();
    config.output_dir = dir.filePath("run").toStdString();
    run.start(0, config);
    QVERIFY(done.wait(20000));
    const auto result = done.first().at(1).value<plab::RunResult>();
    QCOMPARE(result.status, plab::RunStatus::Failed);
    const QString message = QString::fromStdString(result.message);
    QVERIFY2(message.contains("exited with code 1") && message.contains("rank 1 exited with code 3") &&
                 message.endsWith("last words"),
             qPrintable(message));
    bool logged = false;
    for (const auto& args : log) logged = logged || args.at(1).toString() == "last words";
    QVERIFY(logged);  // the child's lines reach the log as they come
    QVERIFY(!message.contains("frame #"));  // stack frames left out
  }

  void twoProcessRunFeedsTheCharts() {
    REQUIRE_TWO_RANKS();
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    if (!qEnvironmentVariableIsEmpty("PLAB_SCREENSHOT")) {
      w.resize(1600, 1000);
      w.findChild<QTabWidget*>("setupTabs")->setCurrentIndex(2);  // Optimizer & training: the Processes field
    }
    QVERIFY(plab::test::shownWithModel(w));
    if (w.optimizerPanel()->processesSpin()->maximum() < 2) QSKIP("one CPU and no GPU: Processes stays 1");
    makeRunTiny(w, 4, 2);
    QCOMPARE(w.optimizerPanel()->processes(), 2);
    QVERIFY2(w.startProblem().isEmpty(), qPrintable(w.startProblem()));
    QSignalSpy steps(w.store(), &RunStore::stepAppended);
    QSignalSpy started(w.controller(), &RunController::runStarted);
    QTest::mouseClick(w.startButton(), Qt::LeftButton);
    QCOMPARE(w.store()->size(), 1);
    QCOMPARE(w.controller()->processesOf(0), 2);
    QTRY_VERIFY_WITH_TIMEOUT(finished(*w.store(), 0), kRunTimeoutMs);
    const plab::RunRecord& r = w.store()->record(0);
    QVERIFY2(w.store()->state(0) == RunState::Completed, r.result.message.c_str());
    QCOMPARE(started.size(), 1);
    // Every step, once, in order, as the worker would have sent them.
    QCOMPARE(steps.size(), 4);
    QCOMPARE(r.steps.size(), size_t(4));
    for (size_t i = 0; i < r.steps.size(); ++i) QCOMPARE(r.steps[i].step, int64_t(i + 1));
    const QString folder = QString::fromStdString(r.config.output_dir);
    QVERIFY(folder.startsWith(workspace.path()));  // the folder the app would have used
    QCOMPARE(lineCount(QDir(folder).filePath("metrics.jsonl")), 4);
    QCOMPARE(r.result.worldSize, 2);
    QCOMPARE(r.result.stepsDone, int64_t(4));
    QCOMPARE(r.info.rankMemory.size(), size_t(2));
    QVERIFY(r.info.parameterCount > 0);

    w.chartPanel()->refreshNow();
    QCOMPARE(w.chartPanel()->lossChart()->trainGraph(0)->dataCount(), 4);
    MemoryChart* memory = w.chartPanel()->memoryChart();
    QCOMPARE(memory->partBars(0)->dataCount(), 4);  // fp32 baseline, the run, 2 ranks
    QCOMPARE(memory->barLabels()[2], QString("per rank (2 processes): rank 0"));
    QCOMPARE(memory->barLabels()[3], QString("rank 1"));
    QVERIFY(memory->shownBarLabels().contains("per rank (2 processes): rank 0"));
    QCOMPARE(memory->savingTexts().size(), 3);
    QVERIFY(memory->savingTexts()[1].endsWith("of the optimizer state"));
    // Weights and gradients are on every rank; the optimizer state is split.
    for (const plab::MemoryBreakdown& rank : r.info.rankMemory) {
      QCOMPARE(rank.weights, r.steps.back().memory.weights);
      QVERIFY(rank.moments < r.steps.back().memory.moments);
    }
    QVERIFY(w.controller()->processRun()->processIds().empty());
    QVERIFY(plab::test::saveScreenIfAsked());
  }

  void stopEndsTheChildProcesses() {
    REQUIRE_TWO_RANKS();
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(plab::test::shownWithModel(w));
    if (w.optimizerPanel()->processesSpin()->maximum() < 2) QSKIP("one CPU and no GPU: Processes stays 1");
    makeRunTiny(w, 100000, 2);
    QTest::mouseClick(w.startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!w.store()->record(0).steps.empty() || finished(*w.store(), 0), kRunTimeoutMs);
    QCOMPARE(runStateText(w.store()->state(0)), QString("running"));
    // Suspended ranks would time out on each other: no Pause, and it says why.
    QVERIFY(w.stopButton()->isEnabled());
    QVERIFY(!w.pauseButton()->isEnabled());
    QVERIFY(w.pauseButton()->toolTip().contains("cannot pause"));
    w.controller()->pause();
    QVERIFY(!w.controller()->isPaused());
    const std::vector<qint64> pids = w.controller()->processRun()->processIds();
    QVERIFY2(pids.size() >= 3, qPrintable(QString::number(pids.size())));  // the launcher and its 2 ranks
    const qint64 group = w.controller()->processRun()->processGroup();
    QVERIFY(std::find(pids.begin(), pids.end(), group) != pids.end());  // the launcher leads it
    QElapsedTimer timer;
    timer.start();
    QTest::mouseClick(w.stopButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(finished(*w.store(), 0), 60000);
    const plab::RunRecord& r = w.store()->record(0);
    QVERIFY2(w.store()->state(0) == RunState::Stopped, r.result.message.c_str());
    // Stopped gracefully (rank 0 wrote summary.json), not killed after the grace period.
    QVERIFY(timer.elapsed() < ProcessRun::kStopGraceMs);
    QVERIFY(QFileInfo(QDir(QString::fromStdString(r.config.output_dir)).filePath("summary.json")).isFile());
    for (qint64 pid : pids) QTRY_VERIFY2_WITH_TIMEOUT(processGone(pid, group), qPrintable(QString::number(pid)), 10000);
    QVERIFY(w.controller()->processRun()->processIds().empty());
    QVERIFY(!w.controller()->isBusy());
  }
};

PLAB_TEST_MAIN(TestProcessRun)
}  // namespace test_process_run
#include "test_process_run.moc"
