// The lab notebook at scale (issue 35): filtering and grouping the runs
// table, and what the charts draw of it — groups as a mean with a band,
// the fp32 reference of a run kept when the filter hides it, one tab per
// (model, data), the memory chart's largest savings, the heatmap's default
// run, one colour per GEMM format.
#include <QCheckBox>
#include <QGuiApplication>
#include <QScreen>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QStandardPaths>
#include <QTabBar>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>
#include <set>

#include "charts/chart_panel.h"
#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "comparison/comparison_table.h"
#include "comparison/run_filter_proxy.h"
#include "main_window.h"
#include "report/paired_gap.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "window_waits.h"

namespace test_notebook {

using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

plab::RunConfig configOf(const std::string& name, plab::OptimizerMode mode, uint64_t seed) {
  plab::RunConfig c = plab::defaultRunConfig();
  c.name = name;
  c.mode = mode;
  c.seed = seed;
  c.steps = 4;
  return c;
}

// offsets[seed - 1] per mode: the final val loss is storedStep(4).loss + 0.1 + offset.
void writeSeeds(const fs::path& ws, plab::OptimizerMode mode, const std::vector<double>& offsets,
                const std::string& prefix = "") {
  for (size_t k = 0; k < offsets.size(); ++k) {
    const uint64_t seed = k + 1;
    const std::string name = prefix + plab::optimizerModeId(mode) + "-s" + std::to_string(seed);
    plab::test::writeStoredRun(ws / name, configOf(name, mode, seed), 4, "completed", offsets[k]);
  }
}

int runNamed(const RunStore& store, const std::string& name) {
  for (int i = 0; i < store.size(); ++i)
    if (store.record(i).config.name == name) return i;
  return -1;
}

}  // namespace

class TestNotebook : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  // The case: filter + group by mode left blank rows and dropped
  // matching runs. Every shown row is a run that matches or a group of them.
  void filterAndGroupShowExactlyTheMatchingRuns() {
    QTemporaryDir workspace;
    const fs::path ws(workspace.path().toStdString());
    for (auto mode : {plab::OptimizerMode::Fp32AdamW, plab::OptimizerMode::Bf16Plain, plab::OptimizerMode::Bf16Nearest,
                      plab::OptimizerMode::Bf16Kahan, plab::OptimizerMode::Bf16StochasticRounding})
      writeSeeds(ws, mode, {0.0, 0.01});
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 10);
    ComparisonTable* table = w.comparisonTable();
    w.groupByCombo()->setCurrentText("mode");
    w.runFilterEdit()->setText("s1");  // one seed of every mode
    QCOMPARE(table->shownTopLevelRows(), 5);
    for (int row = 0; row < table->proxy()->rowCount(); ++row) {
      const QModelIndex group = table->proxy()->index(row, 0);
      QCOMPARE(table->proxy()->rowCount(group), 1);  // no group without a run, no blank row
      QVERIFY(group.data().toString().contains("1 of 2 runs"));
    }
    for (int i = 0; i < w.store()->size(); ++i)
      QCOMPARE(table->isRunShown(i), w.store()->record(i).config.name.find("-s1") != std::string::npos);
    w.runFilterEdit()->setText("mode:fp32 bf16-nearest");  // matches nothing: both must hold
    QCOMPARE(table->shownTopLevelRows(), 0);
    w.runFilterEdit()->setText("mode=bf16");  // exactly plain bf16: its group alone
    QCOMPARE(table->shownTopLevelRows(), 1);
    QVERIFY(table->isRunShown(runNamed(*w.store(), "bf16-s2")));
    QVERIFY(!table->isRunShown(runNamed(*w.store(), "bf16-nearest-s2")));
    w.runFilterEdit()->setText("lrr:3");
    QVERIFY(w.filterNote()->text().contains("no such field: lrr"));
  }

  // A group of seeds: its row's figures are the mean and 95 % interval of
  // its runs', by hand, and its verdict the paired test.
  void aSeedGroupShowsTheMeanAndIntervalOfItsRuns() {
    QTemporaryDir workspace;
    const fs::path ws(workspace.path().toStdString());
    writeSeeds(ws, plab::OptimizerMode::Fp32AdamW, {0.0, 0.02, -0.01});
    writeSeeds(ws, plab::OptimizerMode::Bf16Plain, {0.05, 0.06, 0.05});
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    // auto: seed families, since a config ran on several seeds.
    const RunTableModel* model = w.comparisonTable()->runModel();
    QCOMPARE(model->grouping().kind, plab::report::Grouping::Kind::SeedFamily);
    QCOMPARE(model->groups().size(), size_t(2));
    int bf16Group = -1;
    for (size_t g = 0; g < model->groups().size(); ++g)
      if (w.store()->record(static_cast<int>(model->groups()[g].members.front())).config.mode == plab::OptimizerMode::Bf16Plain)
        bf16Group = static_cast<int>(g);
    QVERIFY(bf16Group >= 0);
    QModelIndex row;
    for (int r = 0; r < model->rowCount(); ++r)
      if (model->groupAt(model->index(r, 0)) == bf16Group) row = model->index(r, 0);
    QVERIFY(row.isValid());
    // By hand: differences bf16 - fp32 per seed 0.05, 0.04, 0.06: mean 0.05,
    // sd 0.01, half interval t(2)=4.303 * 0.01 / sqrt(3) = 0.0248.
    const QString verdict = row.siblingAtColumn(RunTableModel::VerdictColumn).data().toString();
    QVERIFY2(verdict.startsWith("+0.0500 ± 0.0248 nats val loss vs the fp32 twins"), qPrintable(verdict));
    QVERIFY2(verdict.contains("over 3 runs, paired: beyond seed noise"), qPrintable(verdict));
    // The mean final loss: storedStep(4) + mean offset (the folders' summaries give the final loss).
    const double loss = plab::test::storedStep(4, 0).loss + (0.05 + 0.06 + 0.05) / 3;
    const QString lossText = row.siblingAtColumn(RunTableModel::LossColumn).data().toString();
    QVERIFY2(lossText.startsWith(QString::number(loss, 'f', 4) + " ± "), qPrintable(lossText));
    // Its fp32-twin cell names what holds for the group: the seed family of
    // fp32 runs its runs are measured against (each against its own seed's);
    // the fp32 group is its own reference.
    QCOMPARE(row.siblingAtColumn(RunTableModel::Fp32TwinColumn).data().toString(), QString("fp32 × 3 seeds"));
    QVERIFY(row.siblingAtColumn(RunTableModel::Fp32TwinColumn).data(Qt::ToolTipRole).toString().contains("fp32-s1, fp32-s2, fp32-s3"));
    for (int r = 0; r < model->rowCount(); ++r)
      if (const int g = model->groupAt(model->index(r, 0)); g >= 0 && g != bf16Group)
        QCOMPARE(model->index(r, RunTableModel::Fp32TwinColumn).data().toString(), QString("themselves"));
    // The same figure as the verdict of each of its runs (report/paired_gap.h).
    const int member = static_cast<int>(model->groups()[static_cast<size_t>(bf16Group)].members.front());
    const auto paired = plab::report::pairedGap(w.store()->records(), w.store()->relations(), static_cast<size_t>(member));
    QVERIFY(paired && std::fabs(paired->total.mean - 0.05) < 1e-9);
    // The charts draw the group as one series: its mean with a band.
    w.chartPanel()->refreshNow();
    QCOMPARE(w.chartPanel()->series().size(), size_t(2));
    for (size_t s = 0; s < 2; ++s) QVERIFY(w.chartPanel()->series()[s].group());
    QVERIFY(w.chartPanel()->lossChart()->bandGraph(0) != nullptr);
    QVERIFY(w.chartPanel()->lossChart()->bandGraph(0)->dataCount() > 0);
    // Its runs as lines on demand.
    w.chartPanel()->membersCheckBox()->setChecked(true);
    QCOMPARE(w.chartPanel()->series().size(), size_t(6));
  }

  // Filtering the fp32 run out of view keeps it as the reference: the
  // verdict, the loss-minus-fp32 curve and the peak saving stay.
  void theFp32ReferenceStaysWhenFilteredOut() {
    QTemporaryDir workspace;
    const fs::path ws(workspace.path().toStdString());
    writeSeeds(ws, plab::OptimizerMode::Fp32AdamW, {0.0});
    writeSeeds(ws, plab::OptimizerMode::Bf16Plain, {0.05});
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    const int bf16 = runNamed(*w.store(), "bf16-s1");
    w.runFilterEdit()->setText("-fp32");
    QCOMPARE(w.store()->visibleRuns(), std::vector<int>{bf16});
    QVERIFY2(w.comparisonTable()->cellText(bf16, ComparisonTable::VerdictColumn).contains("vs fp32 twin fp32-s1"),
             qPrintable(w.comparisonTable()->cellText(bf16, ComparisonTable::VerdictColumn)));
    w.chartPanel()->differenceCheckBox()->setChecked(true);
    w.chartPanel()->refreshNow();
    QCOMPARE(w.chartPanel()->series().size(), size_t(1));
    QVERIFY(w.chartPanel()->lossChart()->trainGraph(0)->dataCount() > 0);
    QVERIFY2(w.chartPanel()->lossChart()->trainGraph(0)->name().contains("− fp32-s1"),
             qPrintable(w.chartPanel()->lossChart()->trainGraph(0)->name()));
    const double expected = 0.05;  // the same step of both: their offsets' difference
    QVERIFY(std::fabs(w.chartPanel()->lossChart()->rawGraph(0)->data()->at(0)->value - expected) < 1e-12);
  }

  // Two models: two tabs, never one loss axis.
  void runsOfDifferentModelsGetATabEach() {
    QTemporaryDir workspace;
    const fs::path ws(workspace.path().toStdString());
    writeSeeds(ws, plab::OptimizerMode::Fp32AdamW, {0.0, 0.01});
    plab::RunConfig llama = configOf("llama-fp32", plab::OptimizerMode::Fp32AdamW, 1);
    llama.model.path = "models/tiny-llama";
    plab::test::writeStoredRun(ws / "llama", llama, 4, "completed", 3.0);
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    w.chartPanel()->refreshNow();
    QTabBar* tabs = w.chartPanel()->panelTabs();
    QVERIFY(!tabs->isHidden());
    QCOMPARE(tabs->count(), 2);
    const auto drawnModels = [&] {
      std::set<std::string> models;
      for (const ChartSeries& s : w.chartPanel()->series())
        for (const plab::RunRecord* r : s.runs) models.insert(r->config.model.path);
      return models;
    };
    QCOMPARE(drawnModels().size(), size_t(1));
    const std::string first = *drawnModels().begin();
    tabs->setCurrentIndex(1);
    QCOMPARE(drawnModels().size(), size_t(1));
    QVERIFY(*drawnModels().begin() != first);
    QVERIFY(tabs->tabText(1).contains("tiny-llama") || tabs->tabText(0).contains("tiny-llama"));
  }

  // Many runs checked: groups, a note, and the memory chart's largest savings.
  void manyRunsAreDrawnAsGroups() {
    QTemporaryDir workspace;
    const fs::path ws(workspace.path().toStdString());
    for (int config = 0; config < 8; ++config)
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        plab::RunConfig c = configOf("lr" + std::to_string(config) + "-s" + std::to_string(seed),
                                     config % 2 ? plab::OptimizerMode::Bf16Kahan : plab::OptimizerMode::Fp32AdamW, seed);
        c.adamw.lr = 1e-4 * (config + 1);
        plab::test::writeStoredRun(ws / c.name, c, 4, "completed", 0.01 * config);
      }
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    w.groupByCombo()->setCurrentText("none");
    w.chartPanel()->refreshNow();
    // 24 runs, no grouping asked for: drawn as their 8 seed families.
    QCOMPARE(w.chartPanel()->series().size(), size_t(8));
    QVERIFY(!w.chartPanel()->drawNote()->isHidden());
    QVERIFY(w.chartPanel()->drawNote()->text().contains("24 runs drawn as 8 groups"));
    QVERIFY(w.chartPanel()->memoryChart()->summaryText().isEmpty());  // 8 bars fit
    w.chartPanel()->membersCheckBox()->setChecked(true);  // too many to draw as lines: still groups
    QCOMPARE(w.chartPanel()->series().size(), size_t(8));
    w.chartPanel()->membersCheckBox()->setChecked(false);
    w.groupByCombo()->setCurrentText("seed, adamw.lr");  // 24 groups of one: too many lines, seed families again
    w.chartPanel()->refreshNow();
    QCOMPARE(w.chartPanel()->series().size(), size_t(8));
  }

  void tooManyFamiliesAreDrawnByModeAndFormat() {
    QTemporaryDir workspace;
    const fs::path ws(workspace.path().toStdString());
    for (int config = 0; config < 20; ++config) {  // twenty configs, one seed each
      plab::RunConfig c = configOf("lr" + std::to_string(config),
                                   config % 2 ? plab::OptimizerMode::Bf16Kahan : plab::OptimizerMode::Fp32AdamW, 1);
      c.adamw.lr = 1e-4 * (config + 1);
      plab::test::writeStoredRun(ws / c.name, c, 4, "completed", 0.01 * config);
    }
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    w.chartPanel()->refreshNow();
    QCOMPARE(w.chartPanel()->series().size(), size_t(2));  // fp32 and bf16-kahan, each the mean of ten runs
    QVERIFY(w.chartPanel()->drawNote()->text().contains("by mode and GEMM format"));
    w.runFilterEdit()->setText("mode=fp32 lr<0.0006");  // three runs (lr 1e-4, 3e-4, 5e-4): drawn one by one again
    w.chartPanel()->refreshNow();
    QCOMPARE(w.chartPanel()->series().size(), size_t(3));
    QVERIFY(w.chartPanel()->drawNote()->isHidden());
  }

  void theMemoryChartShowsTheLargestSavingsAndSumsUpTheRest() {
    std::vector<plab::RunRecord> runs;
    for (int i = 0; i < 14; ++i) {
      plab::RunRecord r;
      r.config = configOf("r" + std::to_string(i), plab::OptimizerMode::Bf16Kahan, 1);
      r.info.parameterCount = 1000;
      r.info.fp32Baseline = plab::fp32AdamWBaseline(1000);
      plab::StepMetrics m;
      m.step = 1;
      m.memory.weights = 2000;
      m.memory.moments = 1000 * (i + 1);  // r0 saves the most
      r.steps.push_back(m);
      r.result.stepsDone = 1;
      runs.push_back(r);
    }
    MemoryChart chart;
    chart.showRuns(runs);
    QCOMPARE(chart.savedFractions().size(), size_t(MemoryChart::kMaxBars));
    QVERIFY(chart.summaryText().startsWith("+2 more saving"));
    QVERIFY(chart.barLabels().contains("r0"));
    QVERIFY(!chart.barLabels().contains("r13"));
  }

  // The heatmap shows the run that loses the most update unless one is chosen.
  void theHeatmapDefaultsToTheRunLosingTheMost() {
    QTemporaryDir workspace;
    const fs::path ws(workspace.path().toStdString());
    writeSeeds(ws, plab::OptimizerMode::Fp32AdamW, {0.0});
    writeSeeds(ws, plab::OptimizerMode::Bf16Plain, {0.05});
    writeSeeds(ws, plab::OptimizerMode::Fp32MasterWeights, {0.0});
    // The bf16 run lost updates (its summary says so), the others none.
    for (const char* name : {"bf16-s1", "fp32-s1", "mixed-s1"}) {
      const fs::path dir = ws / name;
      plab::RunResult r;
      r.stepsDone = 4;
      r.finalLoss = 1;
      r.meanUpdateLost = std::string(name) == "bf16-s1" ? 0.9 : 0.0;
      plab::writeJsonFileAtomically(dir / "summary.json", plab::toJson(r));
    }
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    w.groupByCombo()->setCurrentText("none");
    // storedStep measures rounded away per layer (no update-lost windows).
    auto* metric = w.chartPanel()->heatmapMetricCombo();
    metric->setCurrentIndex(metric->findData(int(HeatmapMetric::RoundedAway)));
    w.chartPanel()->refreshNow();
    const int bf16 = runNamed(*w.store(), "bf16-s1");
    // Its per-layer records are read in the background first.
    QTRY_VERIFY(w.store()->isDetailed(bf16));
    w.chartPanel()->refreshNow();
    QCOMPARE(w.chartPanel()->heatmapStoreRun(), bf16);
    QCOMPARE(w.chartPanel()->layerHeatmap()->shownRun(), 0);
    QVERIFY(w.chartPanel()->layerHeatmap()->layerNames().size() > 0);
    // Chosen by hand, another run.
    const int fp32 = runNamed(*w.store(), "fp32-s1");
    w.chartPanel()->heatmapRunCombo()->setCurrentIndex(w.chartPanel()->heatmapRunCombo()->findData(fp32));
    QTRY_VERIFY(w.store()->isDetailed(fp32));
    w.chartPanel()->refreshNow();
    QCOMPARE(w.chartPanel()->heatmapStoreRun(), fp32);
  }

  // Screenshots of the real window on a real workspace (issue 35), only when
  // asked: PLAB_NOTEBOOK_WORKSPACE=<folder of runs> PLAB_SCREENSHOT_DIR=<dir>
  // under xvfb-run with QT_QPA_PLATFORM=xcb (docs/images/make-notebook-screenshots.sh).
  void screenshotsOfARealWorkspace() {
    const QString folder = qEnvironmentVariable("PLAB_NOTEBOOK_WORKSPACE");
    const QString out = qEnvironmentVariable("PLAB_SCREENSHOT_DIR");
    if (folder.isEmpty() || out.isEmpty()) QSKIP("screenshots only when PLAB_NOTEBOOK_WORKSPACE and PLAB_SCREENSHOT_DIR are set");
    QVERIFY(QGuiApplication::primaryScreen() != nullptr);
    for (const QSize size : {QSize(1600, 1000), QSize(1280, 720)}) {
      MainWindow w(folder);
      QVERIFY(plab::test::waitForRuns(w));
      w.resize(size);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      const auto shoot = [&](const QString& name) {
        w.chartPanel()->refreshNow();
        QTest::qWait(1500);
        const QString file = QString("%1/%2-%3x%4.png").arg(out, name).arg(size.width()).arg(size.height());
        QVERIFY2(w.grab().save(file), qPrintable(file));
      };
      w.groupByCombo()->setCurrentText("mode, model");
      shoot("grouped-mode-model");
      w.groupByCombo()->setCurrentText("auto");
      w.chartPanel()->differenceCheckBox()->setChecked(true);
      w.runFilterEdit()->setText("seed>=1");  // the seeded runs (the formats comparison runs at seed 0)
      shoot("seed-bands");
      w.chartPanel()->differenceCheckBox()->setChecked(false);
      w.groupByCombo()->setCurrentText("none");
      w.runFilterEdit()->setText("seed=0");  // --default-formats runs at the default seed; the others at seeds 1-3
      shoot("compare-formats");
      w.runFilterEdit()->clear();
      w.groupByCombo()->setCurrentText("auto");
    }
  }

  // Compare formats: one colour per format, not one blue in dashes.
  void formatsGetAColourEach() {
    std::vector<plab::RunRecord> runs;
    for (auto f : {plab::GemmFormat::Bf16, plab::GemmFormat::Fp8E4m3, plab::GemmFormat::Mxfp8, plab::GemmFormat::Mxfp4,
                   plab::GemmFormat::Nvfp4}) {
      plab::RunRecord r;
      r.config = configOf(plab::gemmFormatId(f), plab::OptimizerMode::Bf16Kahan, 1);
      r.config.plan.gemm_format = f;
      runs.push_back(r);
    }
    const std::vector<plab::RunStyle> styles = plab::runStyles(runs);
    std::set<std::string> colors;
    for (const plab::RunStyle& s : styles) {
      colors.insert(plab::hexColor(s.color));
      QCOMPARE(s.repeat, 0);  // told apart by colour, not by dashes
    }
    QCOMPARE(colors.size(), runs.size());
  }
};

PLAB_TEST_MAIN(TestNotebook)
}  // namespace test_notebook
#include "test_notebook.moc"
