// Issue 35: the advisor dialog's frontier names its points without one name
// over another (or over a point), and its candidates' verdicts are shown
// whole: wrapped in the table, in the cell's tooltip and in the details of
// the selected candidate. PLAB_SCREENSHOT_DIR=dir saves the dialog as PNGs;
// PLAB_ADVICE_JSON=advice.json (precision-lab-cli advise --out) shows a real
// advice as well.
#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QtTest/QtTest>

#include <algorithm>

#include "advisor/advisor_dialog.h"
#include "advisor/frontier_chart.h"
#include "support/test_registry.h"
#include "util/json_file.h"

namespace test_advisor_layout {

using namespace plab;
using namespace plab::ui;

namespace {

AdvisorCandidate candidate(const std::string& name, OptimizerMode mode, double saved, double loss,
                           const std::string& rejected) {
  AdvisorCandidate c;
  c.name = name;
  c.description = "bf16 with nearest writes; Kahan writes for the 3 layer(s) whose shadow nearest write loses > 10 % "
                  "of the update";
  c.config = defaultRunConfig();
  c.config.mode = mode;
  c.memorySaved = saved;
  c.lossVsFp32 = loss;
  c.ciLow = loss - 0.002;
  c.ciHigh = loss + 0.002;
  c.valLoss = {2.0 + loss, 2.1 + loss};
  c.rejected = rejected;
  return c;
}

// What the real advisor gives on the default model: most plans save the
// same 50 % and land within a few thousandths of a nat of each other.
Advice crowdedAdvice() {
  Advice a;
  a.completed = true;
  a.seeds = {1, 2};
  a.tolerance = 0.005;
  a.toleranceSource = "floor";
  a.fp32ValLoss = {2.0, 2.1};
  a.fp32Spread = 0.001;
  const std::string tie =
      "within tolerance and as cheap as the chosen (50.0 %), but its writes lose more of the update (shadow 12.3 % "
      "vs 0.4 %)";
  a.candidates = {
      candidate("bf16-nearest", OptimizerMode::Bf16Nearest, 0.5, 0.0110,
                "loss +0.011 nats vs fp32: over the tolerance 0.0050 by 0.0060"),
      candidate("bf16-sr", OptimizerMode::Bf16StochasticRounding, 0.5, 0.0012, ""),
      candidate("bf16-nearest + fp32 where it loses > 10 %", OptimizerMode::Bf16Nearest, 0.46, 0.0030,
                "within tolerance, but saves less state memory than the chosen (46.0 % vs 50.0 %)"),
      candidate("bf16-nearest + bf16-sr where nearest loses > 10 %", OptimizerMode::Bf16Nearest, 0.5, 0.0016, tie),
      candidate("bf16-nearest + bf16-kahan where nearest loses > 10 %", OptimizerMode::Bf16Nearest, 0.49, 0.0014,
                "within tolerance, but saves less state memory than the chosen (49.0 % vs 50.0 %)"),
      candidate("bf16-sr + fp32 where it loses > 10 %", OptimizerMode::Bf16StochasticRounding, 0.46, 0.0011,
                "within tolerance, but saves less state memory than the chosen (46.0 % vs 50.0 %)"),
      candidate("bf16-kahan", OptimizerMode::Bf16Kahan, 0.375, 0.0009,
                "within tolerance, but saves less state memory than the chosen (37.5 % vs 50.0 %)"),
  };
  a.candidates.back().fp32Layers = {"transformer.h.0.mlp.c_fc"};
  a.chosen = 1;
  // The moment stores as the advisor words them (advisor/moment_stores.h):
  // long reasons; 4bit over the tolerance, 8bit in, fp8 not run.
  MomentStoreVerdict m4;
  m4.store = MomentPrecision::Dynamic4bit;
  m4.confirmed = true;
  m4.stateBytes = 690000;
  m4.bytesSaved = 312832;
  m4.memorySaved = 0.657;
  m4.lossVsFp32 = 0.0096;
  m4.ciLow = 0.0091;
  m4.ciHigh = 0.0101;
  m4.momentErrorM = 0.1191;
  m4.momentErrorV = 0.0742;
  m4.reason = "left out: loss +0.0096 nats vs fp32 (95 % CI +0.0091 to +0.0101, beyond seed noise), over the tolerance "
              "0.0050 by 0.0046 (it would save 312832 bytes more than bf16-sr with its own moments (state saved 65.7 % "
              "vs 50.0 %)); moment error m 11.91 %, v 7.42 %";
  MomentStoreVerdict m8 = m4;
  m8.store = MomentPrecision::Dynamic8bit;
  m8.inPlan = true;
  m8.stateBytes = 790000;
  m8.bytesSaved = 209664;
  m8.memorySaved = 0.605;
  m8.lossVsFp32 = 0.0002;
  m8.ciLow = -0.0003;
  m8.ciHigh = 0.0007;
  m8.momentErrorM = 0.0100;
  m8.momentErrorV = 0.0037;
  m8.reason = "in the plan: saves 209664 bytes more than bf16-sr with its own moments (state saved 60.5 % vs 50.0 %); "
              "loss +0.0002 nats vs fp32 (95 % CI -0.0003 to +0.0007, within seed noise), within the tolerance 0.0050; "
              "moment error m 1.00 %, v 0.37 %";
  MomentStoreVerdict f8;
  f8.store = MomentPrecision::Fp8;
  f8.stateBytes = 850000;
  f8.memorySaved = 0.541;
  f8.reason = "not tried: 8bit moments store fewer bytes (state saved 60.5 % as allocated vs 54.1 % by the "
              "module-tree estimate) and are within the tolerance";
  a.momentStores = {m4, m8, f8};
  return a;
}

// Pixels of the line each verdict needs wrapped at its column's width.
int wrappedHeight(const QTableWidget* t, int row, int col) {
  const QFontMetrics fm(t->item(row, col)->font());
  const int width = t->columnWidth(col) - 2 * (t->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 1);
  return fm.boundingRect(QRect(0, 0, width, 100000), Qt::TextWordWrap, t->item(row, col)->text()).height();
}

void checkLayout(AdvisorDialog& dialog, const Advice& advice, const QString& shot) {
  FrontierChart* chart = dialog.frontierChart();
  chart->replot();
  const auto labels = chart->placedLabels();
  QCOMPARE(labels.size(), chart->pointCount() - (advice.chosen >= 0 ? 1 : 0));
  const QRect plot = chart->axisRect()->rect();
  int shown = 0;
  for (int i = 0; i < labels.size(); ++i) {
    const QRectF& r = labels[i].rect;
    if (r.isNull()) continue;  // no room: named by its tooltip
    ++shown;
    QVERIFY2(QRectF(plot).contains(r), qPrintable(labels[i].text));
    for (int j = 0; j < labels.size(); ++j) {
      if (j != i) QVERIFY2(!r.intersects(labels[j].rect), qPrintable(labels[i].text + " over " + labels[j].text));
      // Not over any point's marker (the circle is 9 px, the star 16).
      const QPointF at = chart->pointPixel(j);
      QVERIFY2(!r.intersects(QRectF(at - QPointF(4, 4), QSizeF(8, 8))), qPrintable(labels[i].text + " over a point"));
    }
  }
  // Every point names itself in a tooltip, with its verdict.
  for (int i = 0; i < labels.size(); ++i) {
    const QString tip = chart->toolTipAt(chart->pointPixel(i).toPoint());
    QVERIFY2(tip.contains(labels[i].text.toHtmlEscaped()), qPrintable(labels[i].text));
  }
  QVERIFY(chart->toolTipAt(QPoint(1, 1)).isEmpty());
  // The chosen plan's name is always on the chart.
  if (advice.chosen >= 0) {
    const QString chosen = QString::fromStdString(advice.candidates[static_cast<size_t>(advice.chosen)].name);
    QVERIFY(std::any_of(labels.begin(), labels.end(),
                        [&](const FrontierChart::PlacedLabel& l) { return l.text == chosen && !l.rect.isNull(); }));
  }
  QVERIFY2(shown * 2 >= labels.size(), "most names fit");
  // The tolerance's own label is in the plot and not under the legend.
  QVERIFY(!chart->toleranceLabelRect().isEmpty());
  QVERIFY(QRectF(plot).contains(chart->toleranceLabelRect()));
  QVERIFY(!chart->toleranceLabelRect().intersects(chart->legend->outerRect()));

  // Verdicts: whole in the cell (wrapped to its width), its tooltip and the details.
  QTableWidget* t = dialog.candidatesTable();
  for (int row = 0; row < t->rowCount(); ++row) {
    QTableWidgetItem* verdict = t->item(row, 3);
    QCOMPARE(verdict->toolTip(), verdict->text());
    QVERIFY2(t->rowHeight(row) >= wrappedHeight(t, row, 3), qPrintable(verdict->text()));
    QVERIFY2(t->rowHeight(row) >= wrappedHeight(t, row, 0), qPrintable(t->item(row, 0)->text()));
    t->selectRow(row);
    QVERIFY2(dialog.candidateDetails()->text().contains(verdict->text().toHtmlEscaped()), qPrintable(verdict->text()));
  }
  QVERIFY(t->columnViewportPosition(3) + t->columnWidth(3) <= t->viewport()->width());  // no sideways scrolling
  if (advice.chosen >= 0) t->selectRow(advice.chosen);

  // The moment stores' reasons: whole in their wrapped cells and tooltips,
  // the table no wider than its pane.
  auto* panes = dialog.findChild<QTabWidget*>("advisorPanes");
  QTableWidget* stores = dialog.momentStoresTable();
  panes->setCurrentWidget(stores);
  QTest::qWait(50);
  QCOMPARE(stores->rowCount(), static_cast<int>(advice.momentStores.size()));
  for (int row = 0; row < stores->rowCount(); ++row) {
    QCOMPARE(stores->item(row, 5)->toolTip(), stores->item(row, 5)->text());
    for (int col = 0; col < stores->columnCount(); ++col)
      QVERIFY2(stores->rowHeight(row) >= wrappedHeight(stores, row, col), qPrintable(stores->item(row, col)->text()));
  }
  if (stores->rowCount() > 0) {
    QVERIFY(stores->columnViewportPosition(5) + stores->columnWidth(5) <= stores->viewport()->width());
    QVERIFY2(stores->columnWidth(5) >= stores->viewport()->width() / 3, "the reason has room");
  }
  panes->setCurrentIndex(0);

  const QString dir = qEnvironmentVariable("PLAB_SCREENSHOT_DIR");
  if (!dir.isEmpty()) {
    QTest::qWait(200);
    QVERIFY(dialog.grab().save(QDir(dir).filePath(shot)));
    panes->setCurrentWidget(dialog.layersTable());
    QTest::qWait(100);
    QVERIFY(dialog.grab().save(QDir(dir).filePath(QString(shot).replace(".png", "-layers.png"))));
    panes->setCurrentWidget(stores);
    QTest::qWait(100);
    QVERIFY(dialog.grab().save(QDir(dir).filePath(QString(shot).replace(".png", "-moment-stores.png"))));
    panes->setCurrentIndex(0);
  }
}

}  // namespace

class TestAdvisorLayout : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void crowdedFrontierAndLongVerdicts_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1000x760") << QSize(1000, 760);
    QTest::newRow("1240x660") << QSize(1240, 660);  // a 1280 x 720 screen, less the panels
  }

  void crowdedFrontierAndLongVerdicts() {
    QFETCH(QSize, size);
    AdvisorDialog dialog(defaultRunConfig());
    // It fits a 1280 x 720 screen with room for a title bar and a panel.
    QVERIFY2(dialog.minimumSizeHint().height() <= 660 && dialog.minimumSizeHint().width() <= 1240,
             qPrintable(QString("minimum %1 x %2").arg(dialog.minimumSizeHint().width()).arg(dialog.minimumSizeHint().height())));
    dialog.resize(size);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QCOMPARE(dialog.size(), size);  // not held larger by its contents
    const Advice advice = crowdedAdvice();
    dialog.showAdvice(advice);
    checkLayout(dialog, advice, QString("advisor-handmade-%1x%2.png").arg(size.width()).arg(size.height()));
    // The details say what the table has no room for.
    dialog.candidatesTable()->selectRow(6);
    QVERIFY(dialog.candidateDetails()->text().contains("transformer.h.0.mlp.c_fc"));
    QVERIFY(dialog.candidateDetails()->text().contains("2.1009"));  // its second seed's val loss
  }

  void realAdvice() {
    const QString file = qEnvironmentVariable("PLAB_ADVICE_JSON");
    if (file.isEmpty()) QSKIP("PLAB_ADVICE_JSON not set");
    const JsonFile read = readJsonFile(file.toStdString());
    QVERIFY2(read.ok(), read.problem.c_str());
    const Advice advice = adviceFromJson(read.value);
    for (const QSize size : {QSize(1000, 760), QSize(1240, 660)}) {
      AdvisorDialog dialog(defaultRunConfig());
      dialog.resize(size);
      dialog.show();
      QVERIFY(QTest::qWaitForWindowExposed(&dialog));
      dialog.showAdvice(advice);
      checkLayout(dialog, advice, QString("advisor-real-%1x%2.png").arg(size.width()).arg(size.height()));
    }
  }
};

PLAB_TEST_MAIN(TestAdvisorLayout)
}  // namespace test_advisor_layout
#include "test_advisor_layout.moc"
