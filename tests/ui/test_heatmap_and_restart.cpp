// Issue 20.7: the heatmap's "latest run" is the one started last, not the
// last in the list; a 0 % cell has the scale's first colour while a cell
// that was not measured shows the hatched background; a one-window run
// draws its column; the layer tree's measured columns are filled after a
// restart, from the run folders of the workspace.
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>

#include "charts/chart_panel.h"
#include "charts/layer_heatmap.h"
#include "main_window.h"
#include "window_waits.h"
#include "panels/layer_tree_panel.h"
#include "panels/model_picker.h"
#include "report/run_folder_reader.h"
#include "run/run_store.h"
#include "support/run_folders.h"
#include "support/test_registry.h"

namespace test_heatmap_and_restart {

using namespace plab;
using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

// A run with rounded-away statistics on two layers at every step.
RunRecord layerRun(const std::string& name, int steps, double rounded) {
  RunRecord r;
  r.config = defaultRunConfig();
  r.config.name = name;
  r.info.layers = {"transformer.h.0.mlp.c_fc", "lm_head"};
  for (int s = 1; s <= steps; ++s) {
    StepMetrics m;
    m.step = s;
    m.loss = 2;
    m.layers.push_back({"transformer.h.0.mlp.c_fc", rounded, 1});
    m.layers.push_back({"lm_head", rounded, 1});
    r.steps.push_back(m);
  }
  return r;
}

StoredRun stored(const RunRecord& r, int64_t startedAt) {
  StoredRun s;
  s.record = r;
  s.status = StoredRunStatus::Completed;
  s.startedAt = startedAt;
  return s;
}

}  // namespace

class TestHeatmapAndRestart : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  // After a restart the list holds runs in the order they were read; of
  // runs that lose alike the newest (started last, first here) is shown.
  void latestRunIsTheOneStartedLast() {
    RunStore store;
    store.addStoredRun(stored(layerRun("newest", 3, 0.5), 2000), false);
    store.addStoredRun(stored(layerRun("oldest", 4, 0.5), 1000), false);
    ChartPanel panel(&store);
    panel.layerHeatmap()->setMetric(HeatmapMetric::RoundedAway);
    panel.refreshNow();
    QCOMPARE(panel.heatmapStoreRun(), 0);
    QCOMPARE(panel.layerHeatmap()->shownRun(), 0);
    // Without start times (a heatmap of its own), the list order decides.
    LayerHeatmap alone;
    alone.setMetric(HeatmapMetric::RoundedAway);
    alone.showRuns({layerRun("a", 3, 0.5), layerRun("b", 4, 0.5)});
    QCOMPARE(alone.shownRun(), 1);
    alone.setRunStarts({2000, 1000});
    alone.showRuns({layerRun("a", 3, 0.5), layerRun("b", 4, 0.5)});
    QCOMPARE(alone.shownRun(), 0);
  }

  // An fp32 run rounds nothing away: its cells are 0 %, drawn in the
  // scale's first colour, which is not white; cells nobody measured are NaN
  // (transparent over a hatched background).
  void zeroPercentIsNotNoData() {
    RunRecord fp32 = layerRun("fp32", 3, 0.0);
    fp32.steps[1].layers.pop_back();  // lm_head not measured at step 2
    LayerHeatmap h;
    h.setMetric(HeatmapMetric::RoundedAway);
    h.showRuns({fp32});
    const int head = static_cast<int>(h.layerNames().indexOf("lm_head"));
    QCOMPARE(h.colorMap()->data()->cell(0, head), 0.0);
    QVERIFY(std::isnan(h.colorMap()->data()->cell(1, head)));
    QCPColorGradient g = h.colorMap()->gradient();
    QVERIFY(g.nanHandling() == QCPColorGradient::nhTransparent);
    const QColor zero = QColor::fromRgb(g.color(0.0, QCPRange(0, 100)));
    QVERIFY2(zero != QColor(Qt::white), qPrintable(zero.name()));
    QVERIFY(h.axisRect()->backgroundBrush().style() != Qt::NoBrush);  // what "not measured" shows
    QVERIFY(h.explanation().contains("hatched: not measured"));
    QVERIFY(h.explanation().contains("0 %"));
  }

  // One window (or one statistics step): one column, drawn over a width.
  void oneColumnIsDrawn() {
    LayerHeatmap h;
    h.setMetric(HeatmapMetric::RoundedAway);
    h.showRuns({layerRun("one", 1, 0.4)});
    QCOMPARE(h.colorMap()->data()->keySize(), 2);
    QVERIFY(h.colorMap()->data()->keyRange().size() > 0);
    QCOMPARE(h.colorMap()->data()->cell(1, 0), 40.0);
    QVERIFY(h.cellToolTip(0, 0).contains("40.0 %"));
  }

  // The layer tree's measured columns come back after a restart: a fresh
  // window reads the run folders and, once the model is in, shows the
  // newest run of that model.
  void layerTreeIsFilledAfterARestart() {
    QTemporaryDir workspace;
    RunConfig c = defaultRunConfig();  // the embedded model the window loads
    c.name = "stored-bf16";
    c.mode = OptimizerMode::Bf16Plain;
    test::writeStoredRun(fs::path(workspace.path().toStdString()) / "stored-bf16-20260101-120000", c, 6);
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QTreeWidgetItem* head = w.layerPanel()->itemForPath("lm_head");
    QVERIFY(head != nullptr);
    // storedStep: lm_head rounds 10 % away at every step (the run's
    // per-layer records are read in the background first: it was listed
    // from its index).
    QTRY_COMPARE(head->text(LayerTreePanel::RoundedAwayColumn), QString("10.0 %"));
    QVERIFY(w.layerPanel()->tree()->headerItem()->text(LayerTreePanel::UpdateLostColumn).contains("stored-bf16"));
  }
};

PLAB_TEST_MAIN(TestHeatmapAndRestart)
}  // namespace test_heatmap_and_restart
#include "test_heatmap_and_restart.moc"
