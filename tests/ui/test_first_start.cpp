// Issue 20.4 and 20.5: the first minute (an empty workspace shows a welcome
// panel whose one button queues the CLI's default experiment; loss
// smoothing on at 0.6, as TensorBoard's default) and a workspace of many
// runs (a filter over name, mode, status and folder that the charts follow;
// rows grouped by mode).
#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>

#include "charts/chart_panel.h"
#include "comparison/comparison_table.h"
#include "report/run_query.h"
#include "main_window.h"
#include "window_waits.h"
#include "panels/welcome_panel.h"
#include "support/run_folders.h"
#include "support/test_registry.h"

namespace test_first_start {

using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

// Runs named after their mode, as "Compare all modes" names them; bf16 twice.
void writeWorkspace(const QString& workspace) {
  int n = 0;
  for (auto mode : {plab::OptimizerMode::Fp32AdamW, plab::OptimizerMode::Bf16Plain, plab::OptimizerMode::Bf16Kahan,
                    plab::OptimizerMode::Bf16Plain, plab::OptimizerMode::Fp32AdamW}) {
    plab::RunConfig c = plab::defaultRunConfig();
    c.mode = mode;
    c.name = "run" + std::to_string(++n) + "-" + plab::optimizerModeId(mode);
    plab::test::writeStoredRun(fs::path(workspace.toStdString()) / (c.name + "-20250101-00000" + std::to_string(n)), c,
                               3, n == 4 ? "failed" : "completed");
  }
}

std::vector<std::string> visibleNames(const RunStore& store) {
  std::vector<std::string> out;
  for (int i : store.visibleRuns()) out.push_back(store.record(i).config.name);
  return out;
}

}  // namespace

class TestFirstStart : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void anEmptyWorkspaceWelcomesWithTheDefaultComparison() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.chartsOrWelcome()->currentIndex(), 0);
    QCOMPARE(w.chartPanel()->smoothingSlider()->value(), 60);
    // Edited panels are put back to the CLI's default experiment.
    plab::RunConfig edited = w.currentConfig();
    edited.steps = 7;
    w.applyConfig(edited);
    QTRY_VERIFY(w.welcomePanel()->compareButton()->isEnabled());
    QTest::mouseClick(w.welcomePanel()->compareButton(), Qt::LeftButton);
    w.controller()->stopAll();  // what was queued is what counts
    QCOMPARE(w.chartsOrWelcome()->currentIndex(), 1);
    QCOMPARE(w.store()->size(), static_cast<int>(plab::allOptimizerModes().size()));
    QVERIFY(w.chartPanel()->differenceCheckBox()->isChecked());
    for (int i = 0; i < w.store()->size(); ++i) {
      plab::RunConfig expected = plab::defaultRunConfig();
      plab::RunConfig got = w.store()->record(i).config;
      QCOMPARE(got.mode, plab::allOptimizerModes()[static_cast<size_t>(i)]);
      expected.name = got.name;
      expected.mode = got.mode;
      expected.output_dir = got.output_dir;
      QCOMPARE(got.toJson().dump(), expected.toJson().dump());
    }
    QTRY_VERIFY_WITH_TIMEOUT(!w.controller()->isBusy(), 120000);
  }

  void aWorkspaceWithRunsOpensOnTheCharts() {
    QTemporaryDir workspace;
    writeWorkspace(workspace.path());
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 5);
    QCOMPARE(w.chartsOrWelcome()->currentIndex(), 1);
  }

  void theFilterNarrowsTheTableAndTheCharts() {
    QTemporaryDir workspace;
    writeWorkspace(workspace.path());
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(visibleNames(*w.store()).size(), size_t(5));
    w.runFilterEdit()->setText("bf16");
    QCOMPARE(visibleNames(*w.store()), (std::vector<std::string>{"run2-bf16", "run3-bf16-kahan", "run4-bf16"}));
    QVERIFY(!w.comparisonTable()->isRunShown(0) && w.comparisonTable()->isRunShown(1));
    w.runFilterEdit()->setText("bf16 -kahan");
    QCOMPARE(visibleNames(*w.store()), (std::vector<std::string>{"run2-bf16", "run4-bf16"}));
    w.runFilterEdit()->setText("FAILED");  // status, any case
    QCOMPARE(visibleNames(*w.store()), (std::vector<std::string>{"run4-bf16"}));
    w.runFilterEdit()->setText("00005");  // the folder's name
    QCOMPARE(visibleNames(*w.store()), (std::vector<std::string>{"run5-fp32"}));
    w.chartPanel()->refreshNow();
    w.runFilterEdit()->clear();
    QCOMPARE(visibleNames(*w.store()).size(), size_t(5));
    for (int row = 0; row < 5; ++row) QVERIFY(w.comparisonTable()->isRunShown(row));
  }

  void groupingByModeMakesAGroupPerModeAndKeepsEachRowItsRun() {
    QTemporaryDir workspace;
    writeWorkspace(workspace.path());
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    ComparisonTable* table = w.comparisonTable();
    w.groupByCombo()->setCurrentText("mode");
    // fp32 (runs 1, 5), bf16 (2, 4), bf16-kahan (3): three groups, in the order their first run is listed.
    const RunTableModel* model = table->runModel();
    QCOMPARE(model->groups().size(), size_t(3));
    QCOMPARE(model->groups()[0].members, (std::vector<size_t>{0, 4}));
    QCOMPARE(model->groups()[1].members, (std::vector<size_t>{1, 3}));
    QCOMPARE(model->groups()[2].members, (std::vector<size_t>{2}));
    QCOMPARE(table->shownTopLevelRows(), 3);
    for (int run = 0; run < 5; ++run)
      QCOMPARE(table->cellText(run, ComparisonTable::NameColumn).toStdString(), w.store()->record(run).config.name);
    w.groupByCombo()->setCurrentText("none");
    QCOMPARE(table->shownTopLevelRows(), 5);
  }

  // Issue 20.3: runs named alike are told apart in the table as in the legend.
  void theTableNumbersRunsNamedAlike() {
    QTemporaryDir workspace;
    for (int n = 1; n <= 2; ++n) {
      plab::RunConfig c = plab::defaultRunConfig();
      c.name = "same";
      plab::test::writeStoredRun(fs::path(workspace.path().toStdString()) / ("same-20250101-00000" + std::to_string(n)),
                                 c, 3);
    }
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.comparisonTable()->cellText(0, ComparisonTable::NameColumn), QString("same"));
    QCOMPARE(w.comparisonTable()->cellText(1, ComparisonTable::NameColumn), QString("same (2)"));
  }

  void filterTerms() {
    plab::RunRecord run;
    run.config = plab::defaultRunConfig();
    run.config.name = "run3-bf16-kahan";
    run.config.mode = plab::OptimizerMode::Bf16Kahan;
    const plab::report::RunFields fields = plab::report::runFields(run, "completed", "run3-bf16-kahan-20250101");
    const auto matches = [&](const char* filter) { return plab::report::matchesQuery(plab::report::parseRunQuery(filter), fields); };
    QVERIFY(matches(""));
    QVERIFY(matches("  KAHAN  run3 "));
    QVERIFY(!matches("kahan fp32"));
    QVERIFY(!matches("-kahan"));
    QVERIFY(matches("-sr"));
    QVERIFY(matches("-"));  // a lone dash is a term, not an exclusion of everything
  }
};

PLAB_TEST_MAIN(TestFirstStart)
}  // namespace test_first_start
#include "test_first_start.moc"
