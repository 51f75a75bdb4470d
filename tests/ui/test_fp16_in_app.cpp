// The fp16 recipes in the app (issue 22.1): the optimizer panel offers fp16
// and fp16-mixed, the layer tree names the low-precision layers fp16 under
// them, the loss-scale chart appears only beside a run that scales its loss
// and marks its skipped steps, and the heatmap shows the fp16 gradients'
// flush and zero shares per layer. The last case trains a real fp16-mixed
// run (initial scale 2^40, so the first steps overflow and are skipped) and
// draws it from its run folder, as the app reads a finished run.
#include <QComboBox>
#include <QLabel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>

#include "charts/chart_panel.h"
#include "charts/layer_heatmap.h"
#include "charts/loss_scale_chart.h"
#include "main_window.h"
#include "window_waits.h"
#include "panels/layer_tree_panel.h"
#include "panels/optimizer_panel.h"
#include "report/run_folder_reader.h"
#include "run/run_store.h"
#include "support/module_trees.h"
#include "support/small_runs.h"
#include "support/test_registry.h"
#include "ui/window_helpers.h"
#include "train/trainer.h"

namespace test_fp16_in_app {

using namespace plab;
using namespace plab::ui;

namespace {

ModuleNode twoLinears() {
  ModuleNode root;
  root.type = "Model";
  root.children = {test::leafModule("a", "Linear", 100), test::leafModule("b", "Linear", 50)};
  root.totalParameters = 150;
  return root;
}

// A run of `steps` steps; fp16-mixed ones carry a loss scale that halves at
// every step in `skipped` and per-layer fp16 gradient shares.
StoredRun run(const std::string& name, OptimizerMode mode, int steps, const std::vector<int>& skipped) {
  StoredRun s;
  s.record.config = defaultRunConfig();
  s.record.config.name = name;
  s.record.config.mode = mode;
  s.record.info.layers = {"a", "b"};
  double scale = 65536;
  for (int step = 1; step <= steps; ++step) {
    StepMetrics m;
    m.step = step;
    m.loss = 2;
    if (mode == OptimizerMode::Fp16Mixed) {
      const bool skip = std::find(skipped.begin(), skipped.end(), step) != skipped.end();
      m.lossScale = scale;
      m.stepSkipped = skip;
      if (skip) scale /= 2;
      m.fp16GradLayers = {{"a", 0.25, 0.001 * step}, {"b", 0.5, 0.002 * step}};
    }
    s.record.steps.push_back(m);
  }
  s.status = StoredRunStatus::Completed;
  return s;
}

// A real run of the small config in `folder`.
RunResult trainInto(RunConfig c, const std::string& folder) {
  c.output_dir = folder;
  c.name = std::filesystem::path(folder).filename().string();
  return Trainer(c).run({});
}

}  // namespace

class TestFp16InApp : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void optimizerPanelOffersTheFp16Recipes() {
    OptimizerPanel panel;
    auto* combo = panel.findChild<QComboBox*>("optimizerMode");
    QVERIFY(combo);
    for (OptimizerMode m : everyOptimizerMode())
      QVERIFY2(combo->findData(QString::fromStdString(optimizerModeId(m))) >= 0, optimizerModeId(m).c_str());
    panel.setMode(OptimizerMode::Fp16Mixed);
    RunConfig c;
    panel.applyTo(c);
    QCOMPARE(optimizerModeId(c.mode), std::string("fp16-mixed"));
  }

  void layerTreeNamesFp16Layers() {
    LayerTreePanel tree;
    tree.setModules(twoLinears());
    tree.applyPreset(PlanPreset::AllBf16);
    tree.setOptimizer(OptimizerMode::Bf16Kahan, AdamWOptions{});
    QCOMPARE(tree.itemForPath("a")->text(LayerTreePanel::PrecisionColumn), QString("bf16"));
    tree.setOptimizer(OptimizerMode::Fp16Mixed, AdamWOptions{});
    QCOMPARE(tree.itemForPath("a")->text(LayerTreePanel::PrecisionColumn), QString("fp16"));
    QVERIFY(tree.summaryLabel()->text().contains("fp16 share"));
    QCOMPARE(tree.planName(), QString("All fp16"));
    QVERIFY(tree.tree()->headerItem()->text(LayerTreePanel::NameColumn).contains("fp16"));
    tree.setSubtreeBf16("b", false);
    QCOMPARE(tree.itemForPath("b")->text(LayerTreePanel::PrecisionColumn), QString("fp32"));
  }

  void lossScaleChartOnlyBesideALossScalingRun() {
    RunStore store;
    store.addStoredRun(run("bf16", OptimizerMode::Bf16Kahan, 6, {}), false);
    ChartPanel panel(&store);
    panel.refreshNow();
    QVERIFY(panel.lossScaleChart()->isHidden());
    QCOMPARE(panel.lossScaleChart()->graphCount(), 0);  // hidden, it draws nothing (bench_notebook: group changes)
    store.addStoredRun(run("mixed16", OptimizerMode::Fp16Mixed, 6, {2, 5}), false);
    panel.refreshNow();
    QVERIFY(!panel.lossScaleChart()->isHidden());
    QCOMPARE(panel.lossScaleChart()->scaleGraph(0)->dataCount(), 0);  // the bf16 run draws nothing
    QCPGraph* scale = panel.lossScaleChart()->scaleGraph(1);
    QCOMPARE(scale->dataCount(), 6);
    QCOMPARE(scale->data()->at(0)->value, 16.0);  // log2 65536
    QCOMPARE(scale->data()->at(5)->value, 14.0);  // halved at steps 2 and 5 (recorded before the halving)
    QCPGraph* skipped = panel.lossScaleChart()->skippedGraph(1);
    QCOMPARE(skipped->dataCount(), 2);
    QCOMPARE(skipped->data()->at(0)->key, 2.0);
    QCOMPARE(skipped->data()->at(1)->key, 5.0);
    store.setVisible(1, false);  // the one that scales its loss unticked: hidden and emptied
    panel.refreshNow();
    QVERIFY(panel.lossScaleChart()->isHidden());
    QCOMPARE(panel.lossScaleChart()->graphCount(), 0);
  }

  void heatmapShowsFp16GradientShares() {
    LayerHeatmap map;
    map.setMetric(HeatmapMetric::Fp16GradFlush);
    map.showRuns({run("bf16", OptimizerMode::Bf16Kahan, 4, {}).record});
    QCOMPARE(map.shownRun(), -1);  // nothing to show without fp16 gradients
    map.showRuns({run("mixed16", OptimizerMode::Fp16Mixed, 4, {}).record});
    QCOMPARE(map.shownRun(), 0);
    QCOMPARE(map.layerNames(), QStringList({"a", "b"}));
    QVERIFY(std::abs(map.colorMap()->data()->cell(3, 1) - 100 * 0.008) < 1e-9);  // layer b, step 4
    QVERIFY(map.cellToolTip(3, 1).contains("flushed to zero"));
    map.setMetric(HeatmapMetric::Fp16GradZero);
    map.showRuns({run("mixed16", OptimizerMode::Fp16Mixed, 4, {}).record});
    QVERIFY(std::abs(map.colorMap()->data()->cell(0, 0) - 25.0) < 1e-9);
  }

  // A real fp16-mixed run: the scale starts at 2^40, so fp16 gradients
  // overflow and GradScaler's rule halves it on each skipped step.
  void realFp16MixedRunDrawsItsScaleAndSkips() {
    QTemporaryDir dir;
    RunConfig c = test::smallTrainingRun(OptimizerMode::Fp16Mixed, 8);
    c.loss_scale_init = std::ldexp(1.0, 40);
    c.output_dir = dir.filePath("run").toStdString();
    const RunResult result = Trainer(c).run({});
    QVERIFY2(result.status == RunStatus::Completed, result.message.c_str());
    const StoredRun stored = readRunFolder(c.output_dir);
    int skips = 0;
    for (const StepMetrics& m : stored.record.steps) skips += m.stepSkipped.value_or(false) ? 1 : 0;
    QVERIFY2(skips > 0, "an initial scale of 2^40 must overflow fp16 gradients");
    RunStore store;
    store.addStoredRun(stored, false);
    ChartPanel panel(&store);
    panel.refreshNow();
    QVERIFY(!panel.lossScaleChart()->isHidden());
    QCOMPARE(panel.lossScaleChart()->scaleGraph(0)->dataCount(), 8);
    QCOMPARE(panel.lossScaleChart()->skippedGraph(0)->dataCount(), skips);
    QCOMPARE(panel.lossScaleChart()->scaleGraph(0)->data()->at(0)->value, 40.0);
    // Each skip halves the scale: the last step's scale is 2^(40 - skips before it).
    int before = 0;
    for (size_t i = 0; i + 1 < stored.record.steps.size(); ++i) before += stored.record.steps[i].stepSkipped.value_or(false);
    QCOMPARE(panel.lossScaleChart()->scaleGraph(0)->data()->at(7)->value, 40.0 - before);
    panel.layerHeatmap()->setMetric(HeatmapMetric::Fp16GradFlush);
    panel.refreshNow();
    QCOMPARE(panel.layerHeatmap()->shownRun(), 0);
    QVERIFY(!panel.layerHeatmap()->layerNames().isEmpty());
  }

  // The window on a workspace with a bf16-kahan and an fp16-mixed run: the
  // loss-scale chart shows under the others. PLAB_SCREENSHOT=file.png under
  // a real X server (QT_QPA_PLATFORM=xcb) saves the screen as users see it.
  void windowShowsTheLossScaleOfAStoredRun() {
    QTemporaryDir workspace;
    RunConfig c = test::smallTrainingRun(OptimizerMode::Bf16Kahan, 30);
    c.layer_stats_every = 5;
    c.update_window = 5;
    QVERIFY(trainInto(c, workspace.filePath("run1-bf16-kahan").toStdString()).status == RunStatus::Completed);
    c.mode = OptimizerMode::Fp16Mixed;
    c.loss_scale_init = std::ldexp(1.0, 30);
    c.loss_scale_growth_interval = 10;
    QVERIFY(trainInto(c, workspace.filePath("run2-fp16-mixed").toStdString()).status == RunStatus::Completed);
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 2);
    w.resize(1600, 1000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.chartPanel()->refreshNow();
    QVERIFY(w.chartPanel()->lossScaleChart()->isVisible());
    QVERIFY(test::saveScreenIfAsked());
  }
};

PLAB_TEST_MAIN(TestFp16InApp)
}  // namespace test_fp16_in_app
#include "test_fp16_in_app.moc"
