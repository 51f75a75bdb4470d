// Charts fed with synthetic runs: graphs and points per run, incremental
// updates, log scale, memory bars, heatmap dimensions and PNG export.
#include <QCheckBox>
#include <QImage>
#include <QTemporaryDir>
#include <QtTest/QtTest>
#include <cmath>

#include "charts/chart_panel.h"
#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/update_lost_chart.h"
#include "run/run_store.h"
#include "support/test_registry.h"
#include "util/format.h"

namespace test_charts {

using namespace plab::ui;

namespace {

const std::vector<std::string> kLayers = {"transformer.h.0.attn.c_attn", "transformer.h.0.mlp.c_fc", "lm_head"};

plab::StepMetrics syntheticStep(int64_t step, int run) {
  plab::StepMetrics m;
  m.step = step;
  m.loss = 5.0 / static_cast<double>(step) + run;
  m.roundedAwayFraction = 0.01 * static_cast<double>(step % 7) + 0.1 * run;
  m.tokensPerSecond = 1000;
  m.elapsedSeconds = 0.1 * static_cast<double>(step);
  if (step % 5 == 0) m.valLoss = m.loss + 0.5;
  m.memory.weights = 1024 * 1024 * (run + 1);
  m.memory.gradients = 1024 * 1024;
  for (size_t l = 0; l < kLayers.size(); ++l)
    m.layers.push_back({kLayers[l], 0.1 * static_cast<double>(l) + 0.001 * static_cast<double>(step), 1.0});
  if (step % 4 == 0) {  // a window of 4 steps closes
    m.updateLost = 0.5 * run + 0.01 * static_cast<double>(step);
    m.updateError = 2 * *m.updateLost;
    for (size_t l = 0; l < kLayers.size(); ++l) m.windowLayers.push_back({kLayers[l], 0.3 * static_cast<double>(l), 0.5});
  }
  return m;
}

plab::RunRecord syntheticRun(int run, int steps) {
  plab::RunRecord r;
  r.config.name = "run" + std::to_string(run);
  r.info.runName = r.config.name;
  r.info.parameterCount = 1 << 20;
  r.info.fp32Baseline = plab::fp32AdamWBaseline(r.info.parameterCount);  // 16 MiB
  r.info.layers = kLayers;
  for (int s = 1; s <= steps; ++s) r.steps.push_back(syntheticStep(s, run));
  return r;
}

}  // namespace

class TestCharts : public QObject {
  Q_OBJECT
 private slots:
  // EMA smoothing: debiased (the first point is the raw one), continued
  // across live updates, with the raw curve kept faint behind.
  void smoothingDrawsAnEmaOverTheFaintRawCurve() {
    LossChart chart;
    std::vector<plab::RunRecord> runs = {syntheticRun(0, 12)};
    chart.showRuns(runs);
    QVERIFY(!chart.rawGraph(0)->visible());
    QCOMPARE(chart.trainGraph(0)->data()->at(4)->value, runs[0].steps[4].loss);

    chart.setSmoothing(0.8);
    chart.showRuns(runs);
    QVERIFY(chart.rawGraph(0)->visible());
    QVERIFY(chart.rawGraph(0)->pen().color().alpha() < 100);
    QCOMPARE(chart.rawGraph(0)->data()->at(4)->value, runs[0].steps[4].loss);
    QCOMPARE(chart.trainGraph(0)->data()->at(0)->value, runs[0].steps[0].loss);
    runs[0].steps.push_back(syntheticStep(13, 0));
    chart.showRuns(runs);  // appends
    double biased = 0, correction = 1, expected = 0;
    for (const auto& m : runs[0].steps) {
      biased = 0.8 * biased + 0.2 * m.loss;
      correction *= 0.8;
      expected = biased / (1 - correction);
    }
    QCOMPARE(chart.trainGraph(0)->dataCount(), 13);
    QVERIFY(qAbs(chart.trainGraph(0)->data()->at(12)->value - expected) < 1e-12);
    QVERIFY(chart.trainGraph(0)->data()->at(12)->value != runs[0].steps.back().loss);
  }

  // x against steps, tokens or wall time, log x, and the hover readout.
  void xAxisChoiceAndReadout() {
    LossChart chart;
    std::vector<plab::RunRecord> runs = {syntheticRun(0, 10), syntheticRun(1, 10)};
    runs[0].info.tokensPerStep = 256;
    runs[1].info.tokensPerStep = 0;  // unknown: batch x accumulation x sequence from the config
    chart.setXAxisKind(XAxisKind::Tokens);
    chart.showRuns(runs);
    QCOMPARE(chart.trainGraph(0)->data()->at(2)->key, 3.0 * 256);
    const auto& c = runs[1].config;
    QCOMPARE(chart.trainGraph(1)->data()->at(0)->key, double(c.batch_size * c.grad_accum * c.seq_len));
    QCOMPARE(chart.xAxis->label(), QString("tokens"));
    chart.setXAxisKind(XAxisKind::WallTime);
    chart.showRuns({});
    chart.showRuns(runs);
    QCOMPARE(chart.trainGraph(0)->data()->at(2)->key, runs[0].steps[2].elapsedSeconds);
    chart.setLogX(true);
    QVERIFY(chart.logX());
    QCOMPARE(chart.xAxis->scaleType(), QCPAxis::stLogarithmic);

    // Readout at the cursor: every run's value at its nearest point.
    const QString text = chart.readoutAt(runs[0].steps[4].elapsedSeconds + 0.01);
    QVERIFY2(text.startsWith("wall time (s): 0.5"), qPrintable(text));
    QVERIFY2(text.contains(QString("run0: %1").arg(runs[0].steps[4].loss, 0, 'g', 5)), qPrintable(text));
    QVERIFY2(text.contains(QString("run1: %1").arg(runs[1].steps[4].loss, 0, 'g', 5)), qPrintable(text));
    QVERIFY(!text.contains("(raw)") && !text.contains("(val)"));
    QVERIFY(LossChart().readoutAt(1).isEmpty());
  }

  void heatmapScaleIsTheUsersAndShared() {
    LayerHeatmap map;
    std::vector<plab::RunRecord> runs = {syntheticRun(0, 8)};
    map.showRuns(runs);
    QCOMPARE(map.colorMap()->dataRange(), QCPRange(0, 100));
    map.setScaleMax(10);
    QCOMPARE(map.colorMap()->dataRange(), QCPRange(0, 10));
    runs.push_back(syntheticRun(1, 8));
    map.showRuns(runs);  // another run keeps the user's scale
    QCOMPARE(map.colorMap()->dataRange(), QCPRange(0, 10));
  }

  void legendLabelsDropTheSharedPrefix() {
    std::vector<plab::RunRecord> runs = {syntheticRun(0, 1), syntheticRun(1, 1)};
    runs[0].config.name = "tiny-gpt2-finetune-bf16";
    runs[1].config.name = "tiny-gpt2-finetune-fp32";
    LossChart chart;
    chart.showRuns(runs);
    QCOMPARE(chart.trainGraph(0)->name(), QString("bf16"));
    QCOMPARE(chart.trainGraph(1)->name(), QString("fp32"));
    runs[1].config.name = "an-exceptionally-long-run-name-for-a-legend";
    chart.showRuns(runs);
    QCOMPARE(chart.trainGraph(0)->name(), QString("tiny-gpt2-finetune-bf16"));
    QVERIFY(chart.trainGraph(1)->name().size() <= 24);
    QVERIFY(chart.trainGraph(1)->name().contains("…"));
  }

  void lossChartHasTrainAndValPerRun() {
    LossChart chart;
    std::vector<plab::RunRecord> runs = {syntheticRun(0, 10), syntheticRun(1, 7)};
    chart.showRuns(runs);
    QCOMPARE(chart.graphCount(), 10);  // train, faint raw (for smoothing), val, a group's band (two edges)
    QCOMPARE(chart.bandGraph(0), nullptr);  // a run has no band
    QCOMPARE(chart.trainGraph(0)->dataCount(), 10);
    QCOMPARE(chart.valGraph(0)->dataCount(), 2);   // steps 5 and 10
    QCOMPARE(chart.trainGraph(1)->dataCount(), 7);
    QCOMPARE(chart.valGraph(1)->dataCount(), 1);
    QCOMPARE(chart.trainGraph(0)->data()->at(2)->key, 3.0);
    QCOMPARE(chart.trainGraph(0)->data()->at(2)->value, 5.0 / 3.0);
    QCOMPARE(chart.trainGraph(1)->name(), QString("run1"));
    QVERIFY(chart.trainGraph(0)->pen() != chart.trainGraph(1)->pen());  // two runs of one mode: two dash patterns

    // Live updates only append the new steps.
    runs[1].steps.push_back(syntheticStep(8, 1));
    chart.showRuns(runs);
    QCOMPARE(chart.trainGraph(1)->dataCount(), 8);
    QCOMPARE(chart.graphCount(), 10);
    runs.push_back(syntheticRun(2, 3));
    chart.showRuns(runs);
    QCOMPARE(chart.graphCount(), 15);

    // A cleared session starts over.
    chart.showRuns({});
    QCOMPARE(chart.graphCount(), 0);
  }

  void logScaleToggle() {
    LossChart chart;
    chart.showRuns({syntheticRun(0, 10)});
    QVERIFY(!chart.logScale());
    chart.setLogScale(true);
    QVERIFY(chart.logScale());
    QCOMPARE(chart.yAxis->scaleType(), QCPAxis::stLogarithmic);
    chart.setLogScale(false);
    QCOMPARE(chart.yAxis->scaleType(), QCPAxis::stLinear);
  }

  // Issue 11 item 4: "Log y" applies to update lost and rounded away too;
  // loss minus fp32 stays linear (it goes negative).
  void logYOnEveryRatioChart() {
    RunStore store;
    ChartPanel panel(&store);
    panel.logScaleCheckBox()->setChecked(true);
    QVERIFY(panel.lossChart()->logY());
    QVERIFY(panel.updateLostChart()->logY());
    QVERIFY(panel.roundedAwayChart()->logY());
    panel.differenceCheckBox()->setChecked(true);
    QVERIFY(!panel.lossChart()->logY());
    QVERIFY(panel.updateLostChart()->logY());
    panel.differenceCheckBox()->setChecked(false);
    QVERIFY(panel.lossChart()->logY());
    panel.logScaleCheckBox()->setChecked(false);
    QVERIFY(!panel.updateLostChart()->logY() && !panel.roundedAwayChart()->logY() && !panel.lossChart()->logY());
  }

  void roundedAwayChartInPercent() {
    RoundedAwayChart chart;
    const auto run = syntheticRun(1, 9);
    chart.showRuns({syntheticRun(0, 4), run});
    QCOMPARE(chart.graphCount(), 6);  // the line and a group's band edges, per series
    QCOMPARE(chart.bandGraph(1), nullptr);
    QCOMPARE(chart.runGraph(1)->dataCount(), 9);
    QCOMPARE(chart.runGraph(1)->data()->at(3)->value, 100.0 * *run.steps[3].roundedAwayFraction);
  }

  void updateLostChartHasAPointPerWindow() {
    UpdateLostChart chart;
    const auto run = syntheticRun(1, 10);
    chart.showRuns({syntheticRun(0, 10), run});
    QCOMPARE(chart.graphCount(), 6);
    QCOMPARE(chart.runGraph(1)->dataCount(), 2);  // steps 4 and 8
    QCOMPARE(chart.runGraph(1)->data()->at(1)->key, 8.0);
    QCOMPARE(chart.runGraph(1)->data()->at(1)->value, 100.0 * *run.steps[7].updateLost);
    QVERIFY(chart.explanation().contains("intended update"));
  }

  // Loss minus fp32's: the fp32 run reads 0, the other its offset at each
  // common step (the synthetic runs differ by exactly 1 in loss).
  void lossMinusFp32() {
    auto fp32 = syntheticRun(0, 10);
    fp32.config.mode = plab::OptimizerMode::Fp32AdamW;
    auto bf16 = syntheticRun(1, 8);
    bf16.config.mode = plab::OptimizerMode::Bf16Plain;
    LossChart chart;
    chart.setDifferenceFromFp32(true);
    chart.showRuns({fp32, bf16});
    QCOMPARE(chart.trainGraph(1)->dataCount(), 8);
    for (int i = 0; i < 8; ++i) QVERIFY(qAbs(chart.trainGraph(1)->data()->at(i)->value - 1.0) < 1e-12);
    QCOMPARE(chart.valGraph(1)->dataCount(), 1);  // step 5 (step 10 is past the bf16 run)
    QCOMPARE(chart.trainGraph(0)->data()->at(3)->value, 0.0);
    // A run without an fp32 run on the same model/data/seed has no curve.
    auto other = syntheticRun(2, 5);
    other.config.seed = 99;
    chart.showRuns({fp32, bf16, other});
    QCOMPARE(chart.trainGraph(2)->dataCount(), 0);
    chart.setDifferenceFromFp32(false);
    chart.showRuns({fp32, bf16, other});
    QCOMPARE(chart.trainGraph(2)->dataCount(), 5);
    QCOMPARE(chart.trainGraph(1)->data()->at(0)->value, bf16.steps[0].loss);
  }

  void heatmapShowsUpdateLostPerWindow() {
    LayerHeatmap heatmap;
    QVERIFY(heatmap.metric() == HeatmapMetric::UpdateLost);  // the default view
    heatmap.showRuns({syntheticRun(0, 12)});
    QCOMPARE(heatmap.colorMap()->data()->keySize(), 3);  // windows closing at steps 4, 8, 12
    QVERIFY(qAbs(heatmap.colorMap()->data()->cell(1, 2) - 60.0) < 1e-9);
    QCOMPARE(heatmap.colorMap()->dataRange().upper, 100.0);  // fixed scale, not rescaled per run
  }

  // The moment error of quantized moments: its own metrics (m, v), from the
  // window entries that carry it; a run without it has nothing to show.
  void heatmapShowsMomentErrorPerWindow() {
    plab::RunRecord run = syntheticRun(0, 8);
    for (plab::StepMetrics& m : run.steps)
      for (plab::LayerWindowMetrics& w : m.windowLayers) {
        w.momentErrorM = 0.25;
        w.momentErrorV = 0.05;
      }
    LayerHeatmap heatmap;
    heatmap.setMetric(HeatmapMetric::MomentErrorV);
    heatmap.showRuns({run});
    QCOMPARE(heatmap.colorMap()->data()->keySize(), 2);  // windows closing at steps 4 and 8
    QVERIFY(qAbs(heatmap.colorMap()->data()->cell(1, 0) - 5.0) < 1e-9);
    heatmap.setMetric(HeatmapMetric::MomentErrorM);
    heatmap.showRuns({run});
    QVERIFY(qAbs(heatmap.colorMap()->data()->cell(1, 0) - 25.0) < 1e-9);
    heatmap.showRuns({syntheticRun(0, 8)});
    QCOMPARE(heatmap.colorMap()->data()->keySize(), 0);  // not measured: no column
  }

  // A cell whose figure is noise (se above the evidence rule) is grey (NaN
  // in the map) with a tooltip that says why and gives the ±; a cell with a
  // small se keeps its colour and shows its ±.
  void heatmapGreysCellsWithoutEvidence() {
    plab::RunRecord run = syntheticRun(0, 8);
    for (auto& m : run.steps)
      for (auto& w : m.windowLayers) {
        w.elements = w.layer == "lm_head" ? 64 : 16384;
        w.updateLostStdError = w.layer == "lm_head" ? 0.3 : 0.01;
      }
    LayerHeatmap heatmap;
    heatmap.showRuns({run});
    const int head = static_cast<int>(heatmap.layerNames().indexOf("lm_head"));
    const int fc = static_cast<int>(heatmap.layerNames().indexOf("transformer.h.0.mlp.c_fc"));
    QVERIFY(head >= 0 && fc >= 0);
    QVERIFY(std::isnan(heatmap.colorMap()->data()->cell(0, head)));
    QVERIFY(!heatmap.cellHasEvidence(0, head));
    QVERIFY(heatmap.cellToolTip(0, head).contains("not enough evidence"));
    QVERIFY(heatmap.cellToolTip(0, head).contains("± 30.0 %"));
    QVERIFY(!std::isnan(heatmap.noEvidenceMap()->data()->cell(0, head)));  // grey, drawn over the map
    QVERIFY(std::isnan(heatmap.noEvidenceMap()->data()->cell(0, fc)));
    QVERIFY(heatmap.cellHasEvidence(0, fc));
    QVERIFY(qAbs(heatmap.colorMap()->data()->cell(0, fc) - 30.0) < 1e-9);
    QVERIFY(heatmap.cellToolTip(0, fc).contains("± 1.0 %"));
    QVERIFY(!heatmap.cellToolTip(0, fc).contains("evidence"));
    QVERIFY(heatmap.explanation().contains("grey: no evidence"));  // the chart says what grey means
    // Hovering the grey cell makes its text the chart's tooltip.
    heatmap.resize(800, 600);
    heatmap.replot();
    const QPoint at(int(heatmap.xAxis->coordToPixel(run.steps[3].step)), int(heatmap.yAxis->coordToPixel(head)));
    QMouseEvent move(QEvent::MouseMove, QPointF(at), heatmap.mapToGlobal(QPointF(at)), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(&heatmap, &move);
    QVERIFY2(heatmap.toolTip().contains("not enough evidence"), qPrintable(heatmap.toolTip()));
  }

  void memoryChartBarsPerRun() {
    MemoryChart chart;
    chart.showRuns({syntheticRun(0, 3), syntheticRun(1, 3)});
    // The fp32 baseline bar, then one per run, each stacked from its parts.
    for (int part = 0; part < MemoryChart::kParts; ++part) QCOMPARE(chart.partBars(part)->dataCount(), 3);
    // Run 0 holds 1 MiB of weights + 1 MiB of gradients vs the 16 MiB fp32 baseline; run 1 2 + 1 MiB.
    QCOMPARE(chart.partBars(0)->data()->at(1)->value, 1.0);
    QCOMPARE(chart.partBars(0)->data()->at(2)->value, 2.0);
    QCOMPARE(chart.partBars(1)->data()->at(1)->value, 1.0);
    QCOMPARE(chart.partBars(2)->data()->at(0)->value, 8.0);  // fp32 moments: 8 bytes per parameter
    QCOMPARE(chart.savedFractions().size(), size_t(2));
    QCOMPARE(chart.savedFractions()[0], 14.0 / 16.0);
    // A run that measured nothing yet has no bar.
    plab::RunRecord empty;
    empty.config.name = "queued";
    chart.showRuns({syntheticRun(0, 3), empty});
    QCOMPARE(chart.partBars(0)->dataCount(), 2);
  }

  // Each bar's run named on the y axis; beside it the state saving and the
  // measured peak against the fp32 twin (or why there is none).
  void memoryChartLabelsTheMeasuredPeak() {
    plab::RunRecord fp32 = syntheticRun(0, 3), bf16 = syntheticRun(1, 3), alone = syntheticRun(1, 3), old = syntheticRun(1, 3);
    fp32.config.mode = plab::OptimizerMode::Fp32AdamW;
    fp32.result.trainingPeakBytes = 40 << 20;
    bf16.config.mode = plab::OptimizerMode::Bf16Plain;
    bf16.result.trainingPeakBytes = 30 << 20;
    bf16.result.stepPeakBytes = 12 << 20;
    alone.config.seed = 9;  // no fp32 twin: another seed
    alone.result.trainingPeakBytes = 30 << 20;
    MemoryChart chart;
    chart.showRuns({fp32, bf16, alone, old});
    const QStringList labels = chart.barLabels();
    QCOMPARE(labels.size(), 5);  // fp32 AdamW baseline + 4 runs, one name each on the y axis
    QCOMPARE(labels[0], QString("fp32 AdamW (computed)"));
    const QStringList savings = chart.savingTexts();  // beside the run bars
    QCOMPARE(savings.size(), 4);
    QCOMPARE(savings[0], QString("state −%1, peak 40.0 MiB").arg(percentText(0.875, 0)));
    QCOMPARE(savings[1], QString("state −%1, peak −%2").arg(percentText(0.8125, 0), percentText(0.25)));
    QVERIFY2(savings[2].endsWith(", peak: no fp32 twin"), qPrintable(savings[2]));
    QVERIFY2(!savings[3].contains("peak"), qPrintable(savings[3]));  // a folder from before the peak was recorded
  }

  void heatmapIsLayersTimesSteps() {
    LayerHeatmap heatmap;
    heatmap.setMetric(HeatmapMetric::RoundedAway);
    auto run = syntheticRun(0, 12);
    run.steps[4].layers.clear();  // a step without layer stats is no column
    heatmap.showRuns({run, syntheticRun(1, 5)});
    QCOMPARE(heatmap.shownRun(), 1);  // the latest run by default
    QCOMPARE(heatmap.colorMap()->data()->keySize(), 5);
    heatmap.setSelectedRun(0);
    heatmap.showRuns({run, syntheticRun(1, 5)});
    QCOMPARE(heatmap.shownRun(), 0);
    QCOMPARE(heatmap.colorMap()->data()->keySize(), 11);
    QCOMPARE(heatmap.colorMap()->data()->valueSize(), 3);
    QCOMPARE(heatmap.layerNames().size(), 3);
    QCOMPARE(heatmap.layerNames().at(1), QString::fromStdString(kLayers[1]));
    // Cell (first column, layer 2) = step 1's fraction of lm_head in percent.
    QVERIFY(qAbs(heatmap.colorMap()->data()->cell(0, 2) - 100.0 * (0.2 + 0.001)) < 1e-9);
  }

  void exportPngWritesAnImage() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    LossChart chart;
    chart.resize(640, 400);
    chart.showRuns({syntheticRun(0, 10)});
    const QString png = dir.filePath("loss.png");
    QVERIFY(chart.exportPng(png, 640, 400));
    QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.width(), 640);
    QCOMPARE(image.height(), 400);
    // Not a blank canvas: the curve's color appears somewhere.
    bool colored = false;
    for (int y = 0; y < image.height() && !colored; y += 2)
      for (int x = 0; x < image.width() && !colored; x += 2) {
        const QColor c = image.pixelColor(x, y);
        colored = c.saturation() > 100;
      }
    QVERIFY(colored);
    QVERIFY(chart.exportPdf(dir.filePath("loss.pdf"), 640, 400));
    QVERIFY(QFileInfo(dir.filePath("loss.pdf")).size() > 0);
    QVERIFY(!chart.exportPng(dir.filePath("missing-folder/x.png")));
  }
};

PLAB_TEST_MAIN(TestCharts)
}  // namespace test_charts
#include "test_charts.moc"
