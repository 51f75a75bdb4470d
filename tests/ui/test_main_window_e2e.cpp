// The whole window: train the embedded tiny GPT-2 for 5 steps by clicking
// Start, check charts/table, export a report; a broken model folder and an
// unwritable export folder give visible errors; a failed run can be removed;
// closing mid-run joins cleanly.
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QApplication>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTimer>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "charts/chart_panel.h"
#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/update_lost_chart.h"
#include "comparison/comparison_table.h"
#include "main_window.h"
#include "window_waits.h"
#include "support/test_registry.h"
#include "ui/window_helpers.h"
#include "panels/layer_tree_panel.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"

namespace test_main_window_e2e {

using namespace plab::ui;

namespace {

constexpr int kRunTimeoutMs = 300000;  // generous: 2 shared cores

// Small and quick, whatever the shipped defaults are.
void makeRunTiny(MainWindow& w, int steps) {
  plab::RunConfig c = w.currentConfig();
  c.steps = steps;
  c.batch_size = 2;
  c.seq_len = 32;
  c.grad_accum = 1;
  c.warmup_steps = 1;
  c.eval_every = 0;
  c.eval_batches = 1;
  c.layer_stats_every = 1;
  c.update_window = steps;  // one window closes at the end
  c.device = "cpu";
  w.optimizerPanel()->setFrom(c);
}

bool fileNonEmpty(const QString& path) { return QFileInfo(path).isFile() && QFileInfo(path).size() > 0; }

QMessageBox* visibleErrorBox(QWidget& w) {
  for (auto* box : w.findChildren<QMessageBox*>("errorBox"))
    if (box->isVisible()) return box;
  return nullptr;
}

// Clicks `button` of the modal question named `name` once it shows.
void answerQuestion(const QString& name, QMessageBox::StandardButton button) {
  auto* poll = new QTimer;
  poll->setInterval(20);
  QObject::connect(poll, &QTimer::timeout, poll, [poll, name, button] {
    auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
    if (!box || box->objectName() != name) return;
    box->button(button)->click();
    poll->deleteLater();
  });
  poll->start();
}

}  // namespace

class TestMainWindowE2e : public QObject {
  Q_OBJECT
 private slots:
  void trainFiveStepsAndExport() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    // The default model is inspected in the background and fills the layer tree.
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QVERIFY(w.layerPanel()->totalParameters() > 0);
    QVERIFY(w.layerPanel()->itemForPath("") != nullptr);
    makeRunTiny(w, 5);
    QCOMPARE(w.optimizerPanel()->stepsSpin()->value(), 5);

    QTest::mouseClick(w.startButton(), Qt::LeftButton);
    QCOMPARE(w.store()->size(), 1);
    QVERIFY(!w.startButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(w.store()->state(0) != RunState::Queued && w.store()->state(0) != RunState::Running,
                             kRunTimeoutMs);
    QCOMPARE(runStateText(w.store()->state(0)), QString("completed"));
    QVERIFY(w.startButton()->isEnabled());

    w.chartPanel()->refreshNow();
    QVERIFY(w.chartPanel()->lossChart()->trainGraph(0));
    QCOMPARE(w.chartPanel()->lossChart()->trainGraph(0)->dataCount(), 5);
    QCOMPARE(w.chartPanel()->roundedAwayChart()->runGraph(0)->dataCount(), 5);
    QCOMPARE(w.chartPanel()->updateLostChart()->runGraph(0)->dataCount(), 1);
    QCOMPARE(w.chartPanel()->memoryChart()->partBars(0)->dataCount(), 2);  // fp32 baseline + the run
    // Update lost: one window, drawn twice over a width (one column alone has none).
    QCOMPARE(w.chartPanel()->layerHeatmap()->colorMap()->data()->keySize(), 2);
    QVERIFY(w.chartPanel()->layerHeatmap()->colorMap()->data()->keyRange().size() > 0);
    w.chartPanel()->heatmapMetricCombo()->setCurrentIndex(1);  // rounded away per step
    QCOMPARE(w.chartPanel()->layerHeatmap()->colorMap()->data()->keySize(), 5);

    auto* table = w.comparisonTable();
    QCOMPARE(table->shownTopLevelRows(), 1);
    QCOMPARE(table->cellText(0, ComparisonTable::StatusColumn), QString("completed"));
    QVERIFY(table->cellText(0, ComparisonTable::LossColumn) != "–");
    QVERIFY(table->cellText(0, ComparisonTable::UpdateLostColumn) != "–");
    QVERIFY(table->cellText(0, ComparisonTable::VerdictColumn).contains("bf16-kahan: "));

    QTemporaryDir dir;
    QSignalSpy exported(&w, &MainWindow::exportFinished);
    QVERIFY(w.exportReportTo(dir.path()));  // in the background
    QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 60000);
    QCOMPARE(exported.at(0).at(1).toBool(), true);
    for (const char* name : {"report.html", "metrics.csv", "config.json", "report.pdf", "loss.png", "memory.png",
                             "update_lost.png", "rounded_away.png", "layers_heatmap.png"})
      QVERIFY2(fileNonEmpty(dir.filePath(name)), name);
    QFile pdf(dir.filePath("report.pdf"));
    QVERIFY(pdf.open(QIODevice::ReadOnly));
    QCOMPARE(pdf.read(4), QByteArray("%PDF"));

    // Unwritable destination (a file where the folder should be): a message, no crash.
    const QString blocker = dir.filePath("blocker");
    QFile f(blocker);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("x");
    f.close();
    QVERIFY(w.exportReportTo(blocker + "/report"));
    QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 2, 60000);
    QCOMPARE(exported.at(1).at(1).toBool(), false);
    QVERIFY(visibleErrorBox(w));
    QVERIFY(w.lastError().contains("blocker"));
  }

  // "Compare all modes" queues every mode on the same model, data and seed,
  // shows loss minus fp32 and gives each run a verdict against fp32.
  void compareAllModesShowsTheDifferenceToFp32() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(plab::test::shownWithModel(w));
    makeRunTiny(w, 2);
    QTest::mouseClick(w.compareButton(), Qt::LeftButton);
    const int modes = int(plab::allOptimizerModes().size());
    QCOMPARE(w.store()->size(), modes);
    QTRY_VERIFY_WITH_TIMEOUT(w.store()->state(modes - 1) == RunState::Completed, kRunTimeoutMs);
    QVERIFY(w.chartPanel()->differenceCheckBox()->isChecked());
    QVERIFY(w.chartPanel()->lossChart()->differenceFromFp32());
    w.chartPanel()->refreshNow();
    auto* table = w.comparisonTable();
    for (int run = 0; run < modes; ++run) {
      QCOMPARE(w.chartPanel()->lossChart()->trainGraph(run)->dataCount(), 2);
      const QString verdict = table->cellText(run, ComparisonTable::VerdictColumn);
      const auto mode = w.store()->record(run).config.mode;
      if (mode == plab::OptimizerMode::Fp32AdamW) QVERIFY2(verdict.contains("the fp32 reference"), qPrintable(verdict));
      else QVERIFY2(verdict.contains("nats val loss vs fp32"), qPrintable(verdict));  // evaluated at the end
    }
  }

  // A run without an fp32 twin says so in its row, and the table's "Run its
  // fp32 twin" queues exactly that run; afterwards the row names it and the
  // difference chart's legend pairs the two.
  void runningTheFp32TwinFromTheTable() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(plab::test::shownWithModel(w));
    makeRunTiny(w, 2);
    QTest::mouseClick(w.startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(w.store()->state(0) == RunState::Completed, kRunTimeoutMs);
    auto* table = w.comparisonTable();
    QCOMPARE(table->cellText(0, ComparisonTable::Fp32TwinColumn), QString("no fp32 twin"));
    QVERIFY(table->cellText(0, ComparisonTable::VerdictColumn).contains("no fp32 twin"));
    QVERIFY(table->lacksFp32Twin(0));
    table->requestFp32Twin(0);
    QCOMPARE(w.store()->size(), 2);
    const plab::RunConfig twin = w.store()->record(1).config;
    QCOMPARE(twin.mode, plab::OptimizerMode::Fp32AdamW);
    QCOMPARE(twin.name, w.store()->record(0).config.name + "-fp32-twin");
    QTRY_VERIFY_WITH_TIMEOUT(w.store()->state(1) == RunState::Completed, kRunTimeoutMs);
    QVERIFY(!table->lacksFp32Twin(0));
    QCOMPARE(table->cellText(0, ComparisonTable::Fp32TwinColumn), QString::fromStdString(twin.name));
    QCOMPARE(table->cellText(1, ComparisonTable::Fp32TwinColumn), QString("itself"));
    const QString verdict = table->cellText(0, ComparisonTable::VerdictColumn);
    QVERIFY2(verdict.contains(QString::fromStdString("vs fp32 twin " + twin.name)), qPrintable(verdict));
    w.chartPanel()->differenceCheckBox()->setChecked(true);
    w.chartPanel()->refreshNow();
    const QString legend = w.chartPanel()->lossChart()->trainGraph(0)->name();
    QVERIFY2(legend.contains(" − "), qPrintable(legend));
    // The legend above the charts pairs them too.
    auto* shared = w.findChild<QLabel*>("runLegend");
    QVERIFY(shared);
    QVERIFY2(shared->text().contains(" − ") && shared->text().contains("(fp32 itself)"), qPrintable(shared->text()));
  }

  void brokenModelFolderShowsAnError() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTemporaryDir dir;
    QFile config(dir.filePath("config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write("{ \"model_type\": \"gpt2\", \"n_embd\": ");  // truncated JSON
    config.close();

    plab::ModelSpec spec;
    spec.source = "folder";
    spec.path = dir.path().toStdString();
    w.modelPicker()->setModelSpec(spec);
    QTRY_VERIFY_WITH_TIMEOUT(!w.modelPicker()->isInspecting(), 60000);
    QTRY_VERIFY(w.modelPicker()->errorLabel()->isVisible());
    QVERIFY(!w.modelPicker()->errorText().isEmpty());
    QCOMPARE(w.layerPanel()->itemForPath(""), nullptr);  // no stale tree

    // Start is disabled with the reason shown instead of launching a doomed
    // run; a programmatic start refuses with a visible message.
    QVERIFY(!w.startButton()->isEnabled());
    QVERIFY(w.startBlockedLabel()->isVisible());
    QVERIFY(w.startBlockedLabel()->text().contains(w.modelPicker()->errorText()));
    w.startRun();
    QCOMPARE(w.store()->size(), 0);
    QVERIFY(visibleErrorBox(w));

    // Picking the embedded model again clears the error.
    w.modelPicker()->combo()->setCurrentIndex(0);
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QVERIFY(w.modelPicker()->errorText().isEmpty());
  }

  // Issue 11: a run that fails before its first step shows as failed, does
  // not claim to keep measured metrics, and can be removed.
  void failedRunShowsAsFailedAndCanBeRemoved() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(plab::test::shownWithModel(w));
    makeRunTiny(w, 2);
    QTemporaryDir dir;
    const QString tiny = dir.filePath("tiny.txt");
    QFile f(tiny);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("hi");  // readable, but far fewer tokens than one block
    f.close();
    plab::RunConfig c = w.currentConfig();
    c.name = "doomed";
    c.data.path = tiny.toStdString();
    w.controller()->enqueue(c);
    QTRY_VERIFY_WITH_TIMEOUT(w.store()->state(0) == RunState::Failed, kRunTimeoutMs);
    QTRY_VERIFY(!w.controller()->isBusy());

    auto* table = w.comparisonTable();
    QCOMPARE(table->cellText(0, ComparisonTable::StatusColumn), QString("failed"));
    QVERIFY(table->cellText(0, ComparisonTable::VerdictColumn).contains("failed"));
    QMessageBox* box = visibleErrorBox(w);
    QVERIFY(box);
    QVERIFY2(!box->text().contains("kept"), qPrintable(box->text()));
    QVERIFY(box->text().contains("Nothing was measured"));

    QVERIFY(!w.removeRunButton()->isEnabled());  // nothing selected yet
    table->selectRun(0);
    QVERIFY(w.removeRunButton()->isEnabled());
    QTest::mouseClick(w.removeRunButton(), Qt::LeftButton);
    QCOMPARE(w.store()->size(), 0);
    QCOMPARE(table->shownTopLevelRows(), 0);
    QVERIFY(!w.removeRunButton()->isEnabled());
    w.chartPanel()->refreshNow();  // the charts follow without a stale run
  }

  void closingWhileTrainingStopsAndJoins() {
    QTemporaryDir workspace;
    auto* w = new MainWindow(workspace.path());
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w));
    QTRY_VERIFY_WITH_TIMEOUT(w->modelPicker()->hasOverview(), 60000);
    makeRunTiny(*w, 100000);
    QTest::mouseClick(w->startButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!w->store()->record(0).steps.empty(), kRunTimeoutMs);
    // Closing asks first while a run trains; Cancel keeps the window.
    answerQuestion("quitWhileTrainingQuestion", QMessageBox::Cancel);
    QVERIFY(!w->close());
    QVERIFY(w->controller()->isBusy());
    answerQuestion("quitWhileTrainingQuestion", QMessageBox::Yes);
    QElapsedTimer timer;
    timer.start();
    QVERIFY(w->close());  // stops the run and joins the training thread
    QVERIFY(timer.elapsed() < 60000);
    delete w;
  }
};

PLAB_TEST_MAIN(TestMainWindowE2e)
}  // namespace test_main_window_e2e
#include "test_main_window_e2e.moc"
