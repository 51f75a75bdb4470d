// The GEMM formats in the app (issue 22.3, 22.4): "Compare formats" queues
// the formats experiment on the current settings (bf16-kahan weights, one
// run per format, nvfp4 with a bf16 head), every run trains with its
// format, the table judges each against the bf16-GEMM run, and the heatmap
// shows the operands' underflow, saturation and relative error per layer.
#include <QComboBox>
#include <QPushButton>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "charts/chart_panel.h"
#include "charts/layer_heatmap.h"
#include "comparison/comparison_table.h"
#include "main_window.h"
#include "window_waits.h"
#include "support/test_registry.h"
#include "ui/window_helpers.h"
#include "panels/layer_tree_panel.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"
#include "run/run_store.h"

namespace test_formats_in_app {

using namespace plab;
using namespace plab::ui;

namespace {

GemmOperandStats operand(const std::string& layer, GemmRole role, double underflow, double saturation, double relError) {
  GemmOperandStats g;
  g.layer = layer;
  g.role = role;
  g.format = GemmFormat::Mxfp4;
  g.underflow = underflow;
  g.saturation = saturation;
  g.relError = relError;
  return g;
}

RunRecord gemmRun() {
  RunRecord r;
  r.config = defaultRunConfig();
  r.config.name = "gemm";
  r.config.plan.gemm_format = GemmFormat::Mxfp4;
  r.info.layers = {"a", "b"};
  for (int s = 1; s <= 3; ++s) {
    StepMetrics m;
    m.step = s;
    m.loss = 2;
    m.gemmLayers = {operand("a", GemmRole::Input, 0.01, 0.0, 0.1), operand("a", GemmRole::Weight, 0.02, 0.03, 0.2),
                    operand("a", GemmRole::GradOutput, 0.30, 0.01, 0.4), operand("b", GemmRole::Input, 0.05, 0.0, 0.15),
                    operand("b", GemmRole::Weight, 0.06, 0.0, 0.25), operand("b", GemmRole::GradOutput, 0.5, 0.02, 0.45)};
    r.steps.push_back(m);
  }
  return r;
}

}  // namespace

class TestFormatsInApp : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void heatmapShowsTheOperandStatistics() {
    LayerHeatmap map;
    map.setMetric(HeatmapMetric::GemmUnderflowGradOutput);
    map.showRuns({gemmRun()});
    QCOMPARE(map.shownRun(), 0);
    QCOMPARE(map.layerNames(), QStringList({"a", "b"}));
    QVERIFY(std::abs(map.colorMap()->data()->cell(2, 1) - 50.0) < 1e-9);  // b's output gradient
    const QString tip = map.cellToolTip(0, 0);
    QVERIFY2(tip.contains("input (mxfp4)") && tip.contains("weight (mxfp4)") && tip.contains("grad_output (mxfp4)"),
             qPrintable(tip));
    map.setMetric(HeatmapMetric::GemmSaturation);  // the most saturated operand
    map.showRuns({gemmRun()});
    QVERIFY(std::abs(map.colorMap()->data()->cell(0, 0) - 3.0) < 1e-9);
    map.setMetric(HeatmapMetric::GemmRelErrorWeight);
    map.showRuns({gemmRun()});
    QVERIFY(std::abs(map.colorMap()->data()->cell(1, 1) - 25.0) < 1e-9);
    RunRecord plain = gemmRun();
    for (StepMetrics& m : plain.steps) m.gemmLayers.clear();
    map.showRuns({plain});
    QCOMPARE(map.shownRun(), -1);  // bf16 GEMMs: nothing to show
  }

  void compareFormatsRunsEveryFormat() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    w.resize(1600, 1000);
    QVERIFY(plab::test::shownWithModel(w));
    RunConfig c = w.currentConfig();
    c.mode = OptimizerMode::Bf16StochasticRounding;  // the experiment sets bf16-kahan itself
    c.steps = 6;
    c.batch_size = 2;
    c.seq_len = 32;
    c.warmup_steps = 0;
    c.eval_every = 0;
    c.eval_batches = 1;
    c.layer_stats_every = 2;
    c.device = "cpu";
    w.optimizerPanel()->setFrom(c);
    QVERIFY(w.compareFormatsButton()->isEnabled());
    QTest::mouseClick(w.compareFormatsButton(), Qt::LeftButton);
    QCOMPARE(w.store()->size(), 6);
    QVERIFY(QTest::qWaitFor([&] {
      for (int i = 0; i < w.store()->size(); ++i)
        if (w.store()->state(i) == RunState::Queued || w.store()->state(i) == RunState::Running) return false;
      return true;
    }, 300000));
    QStringList names;
    for (int i = 0; i < w.store()->size(); ++i) {
      const RunRecord& r = w.store()->record(i);
      QCOMPARE(w.store()->state(i), RunState::Completed);
      QVERIFY(r.config.mode == OptimizerMode::Bf16Kahan);
      names << QString::fromStdString(r.config.name).section('-', 1);
      // Every low-precision run measured its operands; the bf16 one has none.
      const bool measured = std::any_of(r.steps.begin(), r.steps.end(), [](const StepMetrics& m) { return !m.gemmLayers.empty(); });
      QCOMPARE(measured, r.config.plan.usesLowPrecisionGemms());
    }
    QCOMPARE(names, QStringList({"bf16", "fp8-e4m3", "mxfp8", "mxfp4", "nvfp4", "nvfp4-bf16-head"}));
    // Each low-precision run is judged against the bf16-GEMM run.
    for (int i = 1; i < 6; ++i) {
      const QString verdict = w.comparisonTable()->cellText(i, ComparisonTable::VerdictColumn);
      QVERIFY2(verdict.contains("GEMMs: val loss minus the bf16 run's"), qPrintable(verdict));
    }
    QVERIFY(!w.comparisonTable()->cellText(0, ComparisonTable::VerdictColumn).contains("GEMMs:"));
    // The heatmap's default run: of the runs with the metric, the one losing the most update, the latest
    // started among equals (Kahan loses none): nvfp4 with a bf16 head, whose head's row is not quantized.
    auto* metric = w.chartPanel()->heatmapMetricCombo();
    metric->setCurrentIndex(metric->findData(int(HeatmapMetric::GemmUnderflowGradOutput)));
    w.chartPanel()->refreshNow();
    LayerHeatmap* map = w.chartPanel()->layerHeatmap();
    QCOMPARE(w.chartPanel()->heatmapStoreRun(), 5);
    QCOMPARE(map->shownRun(), 0);
    QVERIFY(!map->layerNames().isEmpty());
    QVERIFY(!map->layerNames().contains("lm_head"));
    if (!qEnvironmentVariableIsEmpty("PLAB_SCREENSHOT")) {  // the layer tree's GEMM formats and a row recipe beside the heatmap
      w.findChild<QTabWidget*>("setupTabs")->setCurrentIndex(1);
      w.layerPanel()->setSubtreeGemmFormat("transformer.h.1", GemmFormat::Mxfp8);
      w.layerPanel()->setSubtreeRecipe("transformer.wte", OptimizerMode::Bf16Kahan);  // a row's own recipe
    }
    QVERIFY(plab::test::saveScreenIfAsked());
  }
};

PLAB_TEST_MAIN(TestFormatsInApp)
}  // namespace test_formats_in_app
#include "test_formats_in_app.moc"
