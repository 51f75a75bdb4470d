// Issue 20.7: the report's layer heatmaps show both metrics, each titled;
// 0 % is the scale's first colour (not white) and a cell that was not
// measured is hatched, as in the app.
#include <QtTest/QtTest>

#include "report/report_charts.h"
#include "report/run_report.h"

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
};

QTEST_MAIN(TestReportHeatmapSvg)
#include "test_report_heatmap_svg.moc"
