// Issue 20.7: the report's layer heatmaps show both metrics, each titled;
// 0 % is the scale's first colour (not white) and a cell that was not
// measured is hatched, as in the app. Issue 22: runs with low-precision
// GEMMs get the operands' underflow and saturation heatmaps, fp16-mixed runs
// the flush share and the loss scale; other runs none of them.
#include <QtTest/QtTest>

#include "report/report_charts.h"
#include "report/run_report.h"
#include "support/test_registry.h"

namespace test_report_heatmap_svg {

using namespace plab;

namespace {

// Two layers; lm_head is measured at odd steps only; rounded away 0 %
// (an fp32 run) and update lost 0 % in windows of 2 steps.
RunRecord zeroRun() {
  RunRecord r;
  r.config = defaultRunConfig();
  r.config.name = "fp32-run";
  r.info.layers = {"h.0.mlp", "lm_head"};
  for (int s = 1; s <= 6; ++s) {
    StepMetrics m;
    m.step = s;
    m.loss = 2;
    m.layers.push_back({"h.0.mlp", 0.0, 1});
    if (s % 2) m.layers.push_back({"lm_head", 0.0, 1});
    if (s % 2 == 0) {
      LayerWindowMetrics w;
      w.layer = "h.0.mlp";
      w.updateLost = 0.0;
      w.updateLostStdError = 0.001;
      w.elements = 100000;
      m.windowLayers.push_back(w);
    }
    r.steps.push_back(m);
  }
  return r;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

class TestReportHeatmapSvg : public QObject {
  Q_OBJECT
 private slots:
  void zeroIsAColourAndNotMeasuredIsHatched() {
    const Rgb zero = report::heatmapColor(0.0);
    QVERIFY(!(zero == Rgb{255, 255, 255}));
    QVERIFY(report::heatmapColor(1.0) == report::heatmapScale().back().color);
    const std::string svg = report::renderLayerHeatmap(zeroRun(), report::LayerMetric::RoundedAway, 6);
    // Six steps of h.0.mlp and three of lm_head, each a 0 % cell.
    QCOMPARE(count(svg, "fill=\"" + hexColor(zero) + "\"><title>"), size_t(9));
    QVERIFY(svg.find("fill=\"url(#notMeasured)\"") != std::string::npos);
    QVERIFY(svg.find("hatched: not measured") != std::string::npos);
    QVERIFY(svg.find("fill=\"rgb(255,255,255)\"") == std::string::npos);
  }

  void bothMetricsAreTitled() {
    const RunRecord run = zeroRun();
    const std::string lost = report::renderLayerHeatmap(run, report::LayerMetric::UpdateLost, 6);
    QVERIFY(lost.find("Update lost per layer (windows): fp32-run") != std::string::npos);
    QCOMPARE(count(lost, "<title>h.0.mlp: 0.0 %</title>"), size_t(3));  // windows closing at steps 2, 4, 6
    const auto charts = report::renderReportCharts({run});
    QStringList titles;
    for (const auto& c : charts) titles << QString::fromStdString(c.title);
    QVERIFY2(titles.contains("Rounded away per layer: fp32-run"), qPrintable(titles.join(", ")));
    QVERIFY2(titles.contains("Update lost per layer: fp32-run"), qPrintable(titles.join(", ")));
  }

  void formatsAndFp16HeatmapsOnlyWhereMeasured() {
    RunRecord gemm = zeroRun();
    gemm.config.name = "mxfp4-run";
    GemmOperandStats g;
    g.layer = "h.0.mlp";
    g.format = GemmFormat::Mxfp4;
    g.underflow = 0.25;
    g.saturation = 0.01;
    for (StepMetrics& m : gemm.steps) {
      for (GemmRole role : {GemmRole::Input, GemmRole::Weight}) {
        g.role = role;
        m.gemmLayers.push_back(g);
      }
      g.role = GemmRole::GradOutput;
      g.saturation = 0.04;  // the most saturated operand, listed apart from the others as backward does
      m.gemmLayers.push_back(g);
      g.saturation = 0.01;
      m.lossScale = 65536.0 / (m.step > 3 ? 2 : 1);
      m.fp16GradLayers = {{"h.0.mlp", 0.1, 0.002}};
    }
    const std::string under = report::renderLayerHeatmap(gemm, report::LayerMetric::GemmUnderflowGradOutput, 6);
    QVERIFY(under.find("GEMM underflow per layer (output gradient): mxfp4-run") != std::string::npos);
    QCOMPARE(count(under, "<title>h.0.mlp: 25.0 %</title>"), size_t(6));
    const std::string sat = report::renderLayerHeatmap(gemm, report::LayerMetric::GemmSaturation, 6);
    QCOMPARE(count(sat, "<title>h.0.mlp: 4.0 %</title>"), size_t(6));
    QVERIFY(report::runHasLayerMetric(gemm, report::LayerMetric::Fp16GradFlush));
    QVERIFY(!report::runHasLayerMetric(zeroRun(), report::LayerMetric::GemmUnderflowInput));
    QStringList files;
    for (const auto& c : report::renderReportCharts({zeroRun(), gemm})) files << QString::fromStdString(c.fileName);
    for (const char* f : {"layers_gemm_underflow_input_mxfp4-run.svg", "layers_gemm_underflow_weight_mxfp4-run.svg",
                          "layers_gemm_underflow_grad_output_mxfp4-run.svg", "layers_gemm_saturation_mxfp4-run.svg",
                          "layers_fp16_flush_mxfp4-run.svg", "loss_scale.svg"})
      QVERIFY2(files.contains(f), qPrintable(files.join(", ")));
    QVERIFY(!files.contains("layers_gemm_underflow_input_fp32-run.svg"));
    QStringList plain;
    for (const auto& c : report::renderReportCharts({zeroRun()})) plain << QString::fromStdString(c.fileName);
    QVERIFY(!plain.contains("loss_scale.svg"));
  }
};

PLAB_TEST_MAIN(TestReportHeatmapSvg)
}  // namespace test_report_heatmap_svg
#include "test_report_heatmap_svg.moc"
