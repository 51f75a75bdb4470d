// Issue 20.7: the HTML charts' legend names are never cut: the chart is as
// wide as its longest label needs and as tall as its legend.
#include <QtTest/QtTest>

#include <regex>

#include "report/run_report.h"
#include "support/test_registry.h"

namespace test_svg_legend {

using namespace plab;

namespace {

double attribute(const std::string& svg, const std::string& name) {
  std::smatch m;
  const std::regex re("<svg[^>]* " + name + "=\"([0-9.]+)\"");
  return std::regex_search(svg, m, re) ? std::stod(m[1].str()) : -1;
}

}  // namespace

class TestSvgLegend : public QObject {
  Q_OBJECT
 private slots:
  void longNamesFit() {
    const std::string longName(70, 'n');
    const std::string svg = renderSvgLineChart("t", "x", "y", {{longName, {1, 2}, {1, 2}, "", {}}, {"b", {1, 2}, {2, 1}, "", {}}});
    const double width = attribute(svg, "width");
    // The label starts at its x and needs at most 7 px a character at 11 px.
    std::smatch m;
    QVERIFY(std::regex_search(svg, m, std::regex("<text x=\"([0-9.]+)\"[^>]*>" + longName + "</text>")));
    QVERIFY2(std::stod(m[1].str()) + 7.0 * 70 <= width, qPrintable(QString::number(width)));
    // Short names keep the usual size.
    QCOMPARE(attribute(renderSvgLineChart("t", "x", "y", {{"b", {1, 2}, {2, 1}, "", {}}}), "width"), 720.0);
  }

  void manyRunsFitInHeight() {
    std::vector<ChartSeries> series;
    for (int i = 0; i < 30; ++i) series.push_back({"run " + std::to_string(i), {1, 2}, {1.0 * i, 2.0}, "", {}});
    const std::string svg = renderSvgLineChart("t", "x", "y", series);
    std::smatch m;
    QVERIFY(std::regex_search(svg, m, std::regex("<text x=\"[0-9.]+\" y=\"([0-9.]+)\">run 29</text>")));
    QVERIFY(std::stod(m[1].str()) + 4 <= attribute(svg, "height"));
  }
};

PLAB_TEST_MAIN(TestSvgLegend)
}  // namespace test_svg_legend
#include "test_svg_legend.moc"
