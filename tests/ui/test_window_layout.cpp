// Issue 20.4 / 20.5: at 1600x1000 and at 1280x720, with the six runs of a
// comparison, every chart's title and explanation fit the chart (they were
// cut at both ends), the memory chart keeps a readable plot, and at 1600
// pixels the verdict column is on screen without scrolling.
#include <QHeaderView>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>

#include "charts/chart_panel.h"
#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/text_wrap.h"
#include "charts/update_lost_chart.h"
#include "comparison/comparison_table.h"
#include "main_window.h"
#include "window_waits.h"
#include "support/run_folders.h"
#include "support/test_registry.h"

namespace test_window_layout {

using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

// Six runs of a comparison, each measuring 32 layers (a 4-block GPT-2's
// count), as the trainer writes them.
void writeComparison(const QString& workspace) {
  int n = 0;
  std::vector<std::string> layers;
  for (int block = 0; block < 4; ++block)
    for (const char* part : {"ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj", "x", "y"})
      layers.push_back("transformer.h." + std::to_string(block) + "." + part);
  for (auto mode : plab::allOptimizerModes()) {
    plab::RunConfig c = plab::defaultRunConfig();
    c.mode = mode;
    c.name = "tiny-gpt2-finetune-" + plab::optimizerModeId(mode);
    plab::test::writeStoredRun(fs::path(workspace.toStdString()) / (c.name + "-20250101-00000" + std::to_string(++n)), c,
                               20, "completed", 0, layers);
  }
}

// What is cut in the chart: a line of a text element (title, explanation)
// wider than the chart, or the y axis's label longer than the plot is
// tall; empty when nothing is.
QString cut(QCustomPlot* chart) {
  chart->replot();
  const QString name = chart->metaObject()->className();
  const int label = QFontMetrics(chart->yAxis->labelFont()).horizontalAdvance(chart->yAxis->label());
  if (label > chart->axisRect()->height())
    return QString("%1: y label '%2' %3 px in a %4 px plot")
        .arg(name, chart->yAxis->label())
        .arg(label)
        .arg(chart->axisRect()->height());
  for (int i = 0; i < chart->plotLayout()->elementCount(); ++i) {
    auto* text = qobject_cast<QCPTextElement*>(chart->plotLayout()->elementAt(i));
    if (!text || !text->visible()) continue;
    const QFontMetrics metrics(text->font());
    for (const QString& line : text->text().split('\n'))
      if (metrics.horizontalAdvance(line) > chart->width())
        return QString("%1: '%2' %3 px in a %4 px chart").arg(name, line).arg(metrics.horizontalAdvance(line)).arg(chart->width());
  }
  return {};
}

// The window at that size on screen, with the charts drawn.
bool showAt(MainWindow& w, QSize size) {
  w.resize(size);
  w.show();
  if (!QTest::qWaitForWindowExposed(&w)) return false;
  w.chartPanel()->refreshNow();
  QCoreApplication::processEvents();
  return true;
}

}  // namespace

class TestWindowLayout : public QObject {
  Q_OBJECT
 private slots:
  void chartTextsFit_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1600x1000") << QSize(1600, 1000);
    QTest::newRow("1280x720") << QSize(1280, 720);
  }

  void chartTextsFit() {
    QFETCH(QSize, size);
    QTemporaryDir workspace;
    writeComparison(workspace.path());
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(showAt(w, size));
    ChartPanel* p = w.chartPanel();
    p->heatmapMetricCombo()->setCurrentIndex(1);  // rounded away: what these runs measured per layer
    p->refreshNow();
    QCoreApplication::processEvents();
    for (QCustomPlot* chart : std::initializer_list<QCustomPlot*>{p->lossChart(), p->updateLostChart(),
                                                                 p->roundedAwayChart(), p->memoryChart(),
                                                                 p->layerHeatmap()})
      QVERIFY2(cut(chart).isEmpty(), qPrintable(cut(chart)));
    p->differenceCheckBox()->setChecked(true);  // its own title and axis label
    QVERIFY2(cut(p->lossChart()).isEmpty(), qPrintable(cut(p->lossChart())));
    p->differenceCheckBox()->setChecked(false);
    // The layer names stand apart (at 1280x720 every one was drawn over its
    // neighbours): no more of them than lines fit the plot's height.
    LayerHeatmap* heatmap = p->layerHeatmap();
    const auto ticker = heatmap->yAxis->ticker().dynamicCast<QCPAxisTickerText>();
    QVERIFY(ticker);
    const int line = QFontMetrics(heatmap->yAxis->tickLabelFont()).height();
    QVERIFY(!ticker->ticks().isEmpty());
    QVERIFY2(ticker->ticks().size() * line <= heatmap->axisRect()->height(),
             qPrintable(QString("%1 layer names of %2 px in %3 px")
                            .arg(ticker->ticks().size())
                            .arg(line)
                            .arg(heatmap->axisRect()->height())));
    // The memory chart was about 40 px tall at 1280x720.
    QVERIFY2(p->memoryChart()->axisRect()->height() >= 100,
             qPrintable(QString("memory plot %1 px tall").arg(p->memoryChart()->axisRect()->height())));
  }

  // Shrinking the window without new data (no replot of its own) still
  // fits the labels to the smaller plots.
  void labelsFollowAResize() {
    QTemporaryDir workspace;
    writeComparison(workspace.path());
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(showAt(w, {1600, 1000}));
    w.resize(1280, 720);
    QTest::qWait(200);
    QCoreApplication::processEvents();
    LossChart* loss = w.chartPanel()->lossChart();
    QVERIFY2(QFontMetrics(loss->yAxis->labelFont()).horizontalAdvance(loss->yAxis->label()) <= loss->axisRect()->height(),
             qPrintable(loss->yAxis->label()));
    // A short plot drops the label's parenthesis before it elides a word.
    QVERIFY2(!loss->yAxis->label().contains(QChar(0x2026)), qPrintable(loss->yAxis->label()));
    QVERIFY2(loss->yAxis->label().startsWith("loss"), qPrintable(loss->yAxis->label()));
    w.resize(1600, 1000);
    QTest::qWait(200);
    QCoreApplication::processEvents();
    loss->replot();
    QCOMPARE(loss->yAxis->label(), QString("loss (line: train, marks: val)"));  // whole again with room
  }

  void theVerdictIsInViewAt1600() {
    QTemporaryDir workspace;
    writeComparison(workspace.path());
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(showAt(w, {1600, 1000}));
    ComparisonTable* table = w.comparisonTable();
    const int left = table->columnViewportPosition(ComparisonTable::VerdictColumn);
    QVERIFY2(left >= 0 && left + 200 <= table->viewport()->width(),
             qPrintable(QString("verdict at x %1 of %2").arg(left).arg(table->viewport()->width())));
    QVERIFY(table->cellText(1, ComparisonTable::VerdictColumn).contains("vs fp32 twin"));
  }

  void wrapping() {
    const QFontMetrics metrics(QFont("DejaVu Sans", 8));
    const QString text = "share of the intended update that never reached the weights";
    const QString wrapped = wrapToWidth(text, metrics, 120);
    QVERIFY(wrapped.count('\n') >= 2);
    for (const QString& line : wrapped.split('\n')) QVERIFY(metrics.horizontalAdvance(line) <= 120);
    QCOMPARE(QString(wrapped).replace('\n', ' '), text);
    QCOMPARE(wrapToWidth("a\nb", metrics, 500), QString("a\nb"));  // its own breaks stay
    QCOMPARE(wrapToWidth("unbreakable", metrics, 5), QString("unbreakable"));
  }
};

PLAB_TEST_MAIN(TestWindowLayout)
}  // namespace test_window_layout
#include "test_window_layout.moc"
