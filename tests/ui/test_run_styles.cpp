// How runs are told apart in the charts, the legend and the exported files
// (issue 20.3): a later run of a mode keeps its mode's colour and gets a
// line style of its own (never a shade that reads as another mode), the
// same after a restart whatever order the workspace lists the runs in, and
// runs named alike get distinct labels and distinct file names. Plus the
// memory chart and the legend with many runs (issue 20.5).
#include <QDir>
#include <QDirIterator>
#include <QTemporaryDir>
#include <QtTest/QtTest>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "charts/chart_panel.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/run_legend.h"
#include "charts/update_lost_chart.h"
#include "main_window.h"
#include "window_waits.h"
#include "report/qt_report.h"
#include "report/run_folder_reader.h"
#include "report/run_index.h"
#include "run/run_store.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "train/run_config.h"
#include "util/atomic_file.h"
#include "util/json_file.h"

namespace test_run_styles {

using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

using plab::test::namedConfig;

// A run with a few steps (enough to be drawn and listed), in a folder
// named as the app names its runs ("<name>-YYYYMMDD-HHMMSS").
plab::RunRecord runIn(const std::string& folder, const std::string& name, plab::OptimizerMode mode) {
  plab::RunRecord r;
  r.config = namedConfig(name, mode);
  r.config.output_dir = "/workspace/" + folder;
  r.info.parameterCount = 1 << 20;
  for (int s = 1; s <= 4; ++s) r.steps.push_back(plab::test::storedStep(s, 0));
  r.result.stepsDone = 4;
  return r;
}

// The pens a loss chart gives runs, keyed by each run's folder.
std::map<std::string, QPen> pensByFolder(const std::vector<plab::RunRecord>& runs) {
  LossChart chart;
  chart.showRuns(runs);
  std::map<std::string, QPen> pens;
  for (size_t i = 0; i < runs.size(); ++i) pens[runs[i].config.output_dir] = chart.trainGraph(int(i))->pen();
  return pens;
}

void setModified(const fs::path& file, int secondsAgo) {
  fs::last_write_time(file, fs::file_time_type::clock::now() - std::chrono::seconds(secondsAgo));
}

// run_info.json's started_at, as the trainer writes it.
void setStartedAt(const fs::path& run, const std::string& at) {
  nlohmann::json info = plab::readJsonFile(run / "run_info.json").value;
  info["started_at"] = at;
  plab::writeJsonFileAtomically(run / "run_info.json", info);
}

QStringList filesUnder(const QString& dir) {
  QStringList files;
  QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) files << QDir(dir).relativeFilePath(it.next());
  files.sort();
  return files;
}

}  // namespace

class TestRunStyles : public QObject {
  Q_OBJECT
 private slots:
  // Two bf16 runs and a bf16-nearest run: three pens, no two alike; the
  // second bf16 run keeps bf16's colour (not a shade close to orange) and
  // is told apart by its dash pattern, in every live chart.
  void repeatsOfAModeGetALineStyleNotAShade() {
    const std::vector<plab::RunRecord> runs = {
        runIn("bf16-20260101-100000", "bf16", plab::OptimizerMode::Bf16Plain),
        runIn("bf16-20260101-100100", "bf16", plab::OptimizerMode::Bf16Plain),
        runIn("nearest-20260101-100200", "nearest", plab::OptimizerMode::Bf16Nearest)};
    LossChart loss;
    loss.showRuns(runs);
    UpdateLostChart lost;
    lost.showRuns(runs);
    RoundedAwayChart rounded;
    rounded.showRuns(runs);
    const plab::Rgb vermillion = plab::modeColor(plab::OptimizerMode::Bf16Plain);
    const plab::Rgb orange = plab::modeColor(plab::OptimizerMode::Bf16Nearest);
    for (RunChart* chart : {static_cast<RunChart*>(&loss), static_cast<RunChart*>(&lost), static_cast<RunChart*>(&rounded)}) {
      auto penOf = [&](int run) {
        if (auto* l = qobject_cast<LossChart*>(chart)) return l->trainGraph(run)->pen();
        return static_cast<MetricChart*>(chart)->runGraph(run)->pen();
      };
      const QPen a = penOf(0), b = penOf(1), c = penOf(2);
      QVERIFY2(a != b && a != c && b != c, qPrintable(chart->title()));
      QCOMPARE(a.color(), QColor(vermillion.r, vermillion.g, vermillion.b));
      QCOMPARE(b.color(), a.color());  // the mode's colour, not a lighter shade
      QCOMPARE(c.color(), QColor(orange.r, orange.g, orange.b));
      QCOMPARE(a.style(), Qt::SolidLine);
      QCOMPARE(c.style(), Qt::SolidLine);  // the first run of its mode
      QCOMPARE(b.style(), Qt::CustomDashLine);
      QVERIFY(!b.dashPattern().isEmpty());
    }
    // The validation curves: marked, the repeat with its own marker too.
    QVERIFY(loss.valGraph(0)->scatterStyle().shape() != loss.valGraph(1)->scatterStyle().shape());
    QCOMPARE(loss.valGraph(1)->pen().dashPattern(), loss.trainGraph(1)->pen().dashPattern());
  }

  // No two of many runs of one mode share a pen.
  void everyRepeatHasItsOwnPen() {
    std::vector<plab::RunRecord> runs;
    for (int i = 0; i < 20; ++i)
      runs.push_back(runIn("k-20260101-1000" + QString::number(10 + i).toStdString(), "k", plab::OptimizerMode::Bf16Kahan));
    LossChart chart;
    chart.showRuns(runs);
    for (int i = 0; i < 20; ++i)
      for (int j = 0; j < i; ++j) QVERIFY2(chart.trainGraph(i)->pen() != chart.trainGraph(j)->pen(), qPrintable(QString("%1 %2").arg(i).arg(j)));
  }

  // The pens follow when each run started (its folder's stamp), not the
  // list order: the same runs listed in another order draw the same.
  void reorderedRunsKeepTheirPens() {
    const std::vector<plab::RunRecord> runs = {
        runIn("fp32-20260101-100000", "fp32", plab::OptimizerMode::Fp32AdamW),
        runIn("fp32-20260101-110000", "fp32", plab::OptimizerMode::Fp32AdamW),
        runIn("fp32-20260101-110000-2", "fp32", plab::OptimizerMode::Fp32AdamW),
        runIn("bf16-20260101-103000", "bf16", plab::OptimizerMode::Bf16Plain)};
    const auto before = pensByFolder(runs);
    const std::vector<plab::RunRecord> reordered = {runs[2], runs[3], runs[1], runs[0]};
    QCOMPARE(pensByFolder(reordered), before);
    QCOMPARE(before.at(runs[0].config.output_dir).style(), Qt::SolidLine);  // the first fp32 run
  }

  // The whole app after a "restart": a workspace whose file times list the
  // runs in the reverse of their start order draws each run as before.
  void aReloadedWorkspaceDrawsEachRunAsBefore() {
    QTemporaryDir workspace;
    const fs::path ws = workspace.path().toStdString();
    const std::vector<std::pair<std::string, plab::OptimizerMode>> folders = {
        {"bf16-20260101-100000", plab::OptimizerMode::Bf16Plain},
        {"bf16-20260101-100500", plab::OptimizerMode::Bf16Plain},
        {"nearest-20260101-101000", plab::OptimizerMode::Bf16Nearest}};
    int age = 10;
    for (const auto& [folder, mode] : folders) {
      plab::test::writeStoredRun(ws / folder, namedConfig("bf16", mode), 4);
      setModified(ws / folder / "config.json", age--);  // config.json times: in start order
    }
    std::map<std::string, QPen> first;
    {
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      QCOMPARE(w.store()->size(), 3);
      w.chartPanel()->refreshNow();
      for (int i = 0; i < 3; ++i) first[w.store()->record(i).config.output_dir] = w.chartPanel()->lossChart()->trainGraph(i)->pen();
    }
    // Reversed file times: the workspace lists them the other way round.
    age = 1;
    for (const auto& [folder, mode] : folders) setModified(ws / folder / "config.json", age++);
    MainWindow again(workspace.path());
    QVERIFY(plab::test::waitForRuns(again));
    QCOMPARE(again.store()->size(), 3);
    QCOMPARE(again.store()->record(0).config.output_dir, (ws / folders[2].first).string());  // the order did change
    again.chartPanel()->refreshNow();
    for (int i = 0; i < 3; ++i)
      QCOMPARE(again.chartPanel()->lossChart()->trainGraph(i)->pen(), first.at(again.store()->record(i).config.output_dir));
    // The earliest bf16 run is solid, the later one dashed.
    QCOMPARE(first.at((ws / folders[0].first).string()).style(), Qt::SolidLine);
    QCOMPARE(first.at((ws / folders[1].first).string()).style(), Qt::CustomDashLine);
  }

  // Issue 35.5: opening a CLI sweep made after the runs on show leaves
  // their pens alone. The sweep's runs/<name>/ carry no stamp in their
  // names; their run_info.json's started_at (kept by their index.json)
  // places them after the workspace's runs.
  void openingALaterSweepKeepsTheShownPens() {
    QTemporaryDir workspace, elsewhere;
    const fs::path ws = workspace.path().toStdString();
    plab::test::writeStoredRun(ws / "bf16-20260101-100000", namedConfig("bf16", plab::OptimizerMode::Bf16Plain), 4);
    setStartedAt(plab::test::writeStoredRun(ws / "bf16-20260101-100500", namedConfig("bf16", plab::OptimizerMode::Bf16Plain), 4),
                 "2026-01-01T10:05:00.250Z");
    const fs::path sweep = fs::path(elsewhere.path().toStdString()) / "sweep";
    for (const auto& [name, mode, at] : std::vector<std::tuple<std::string, plab::OptimizerMode, std::string>>{
             {"sw-bf16", plab::OptimizerMode::Bf16Plain, "2026-01-01T11:00:03.000Z"},
             {"sw-fp32", plab::OptimizerMode::Fp32AdamW, "2026-01-01T11:00:00.000Z"}}) {
      const fs::path dir = plab::test::writeStoredRun(sweep / "runs" / name, namedConfig(name, mode), 4);
      setStartedAt(dir, at);
      plab::report::indexRunFolder(dir);  // as the CLI leaves it
    }
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 2);
    w.chartPanel()->refreshNow();
    std::map<std::string, QPen> shown;
    for (int i = 0; i < 2; ++i) shown[w.store()->record(i).config.output_dir] = w.chartPanel()->lossChart()->trainGraph(i)->pen();
    QCOMPARE(w.openRunFolder(QString::fromStdString(sweep.string())), 2);
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 4);
    w.chartPanel()->refreshNow();
    std::map<std::string, QPen> after;
    for (int i = 0; i < 4; ++i) after[w.store()->record(i).config.output_dir] = w.chartPanel()->lossChart()->trainGraph(i)->pen();
    for (const auto& [folder, pen] : shown) QVERIFY2(after.at(folder) == pen, folder.c_str());
    QCOMPARE(shown.at((ws / "bf16-20260101-100000").string()).style(), Qt::SolidLine);
    // The sweep's bf16 run is the third of its colour: a pen of its own.
    const QPen swept = after.at((sweep / "runs" / "sw-bf16").string());
    for (const auto& [folder, pen] : shown) QVERIFY(swept != pen);
  }

  // Two runs named alike: two legend entries, two hover lines, two heatmap
  // choices and two heatmap files that do not overwrite each other.
  void sameNamesGetDistinctLabelsAndFiles() {
    const std::vector<plab::RunRecord> runs = {runIn("run-20260101-100000", "run", plab::OptimizerMode::Bf16Plain),
                                               runIn("run-20260101-100100", "run", plab::OptimizerMode::Bf16Plain),
                                               runIn("other-20260101-100200", "run_", plab::OptimizerMode::Fp32AdamW)};
    const std::vector<QString> labels = RunChart::legendLabels(runs);
    QCOMPARE(labels[0], QString("run"));
    QCOMPARE(labels[1], QString("run (2)"));
    LossChart chart;
    chart.showRuns(runs);
    const QString readout = chart.readoutAt(2);
    QVERIFY2(readout.contains("\nrun: ") && readout.contains("\nrun (2): "), qPrintable(readout));

    RunLegend legend;
    legend.resize(1200, 60);
    legend.showRuns(runs);
    QCOMPARE(legend.entryCount(), 3);
    QVERIFY2(legend.text().contains("&nbsp;run (2)"), qPrintable(legend.text().right(300)));
    QVERIFY(legend.toolTip().contains("run (2)"));

    // PNGs (the app's export and the CLI's) and the SVGs of the HTML report.
    QTemporaryDir dir;
    writeChartPngs(runs, dir.path());
    plab::writeComparisonReport(dir.filePath("html").toStdString(), runs);
    const QStringList files = filesUnder(dir.path());
    const QStringList pngs = files.filter(QRegularExpression("^layers_heatmap_.*\\.png$"));
    const QStringList svgs = files.filter(QRegularExpression("^html/charts/layers_heatmap_.*\\.svg$"));
    QVERIFY2(pngs.size() == 3, qPrintable(files.join(", ")));  // "run", "run (2)", "run_": three files
    QVERIFY2(svgs.size() == 3, qPrintable(files.join(", ")));
    QVERIFY2(pngs.contains("layers_heatmap_run.png") && pngs.contains("layers_heatmap_run__2_.png") &&
                 pngs.contains("layers_heatmap_run_.png"),
             qPrintable(pngs.join(", ")));
    // The HTML names them apart and draws the repeat dashed.
    QFile html(dir.filePath("html/report.html"));
    QVERIFY(html.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(html.readAll());
    QVERIFY(text.contains("run (2)"));
    QVERIFY(text.contains("stroke-dasharray"));
  }

  // Twelve runs: one bar each, in its run's colour, named on the y axis
  // (horizontal bars: no rotated labels to overlap); the legend above the
  // charts stays within two lines at the width a 1280-pixel window gives it.
  void twelveRunsStayReadable() {
    std::vector<plab::RunRecord> runs;
    const plab::OptimizerMode modes[] = {plab::OptimizerMode::Fp32AdamW, plab::OptimizerMode::Bf16Plain,
                                         plab::OptimizerMode::Bf16Nearest, plab::OptimizerMode::Bf16Kahan,
                                         plab::OptimizerMode::Bf16StochasticRounding,
                                         plab::OptimizerMode::Fp32MasterWeights};
    for (int i = 0; i < 12; ++i) {
      const plab::OptimizerMode mode = modes[i % 6];
      runs.push_back(runIn(plab::optimizerModeId(mode) + "-2026010" + std::to_string(1 + i / 6) + "-100000",
                           "tiny-gpt2-" + plab::optimizerModeId(mode), mode));
      runs.back().steps.back().memory.weights = (2 + i) << 20;
    }
    MemoryChart memory;
    memory.resize(420, 380);
    memory.showRuns(runs);
    const QStringList labels = memory.barLabels();
    QCOMPARE(labels.size(), 13);  // the baseline + 12
    QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), 13);
    const std::vector<QColor> colors = memory.barColors();
    for (int i = 0; i < 12; ++i) {
      const plab::Rgb c = plab::modeColor(runs[size_t(i)].config.mode);
      QCOMPARE(colors[size_t(i) + 1], QColor(c.r, c.g, c.b));
    }
    QCOMPARE(memory.yAxis->tickLabelRotation(), 0.0);
    memory.replot();
    // Rows of at least one line of the tick font each.
    const double row = std::abs(memory.yAxis->coordToPixel(2) - memory.yAxis->coordToPixel(1));
    QVERIFY2(row >= QFontMetrics(memory.yAxis->tickLabelFont()).height(), qPrintable(QString::number(row)));
    QCOMPARE(memory.shownBarLabels().size(), 13);
    // Short (a 1280x720 window): the explanation leaves the plot and the
    // names thin out rather than overlap.
    memory.resize(300, 230);
    memory.replot();
    memory.replot();
    QVERIFY(memory.compact());
    const QStringList shown = memory.shownBarLabels();
    QVERIFY(!shown.isEmpty() && shown.size() <= 13);
    const double shownRow = memory.axisRect()->height() / double(shown.size());
    QVERIFY2(shownRow >= QFontMetrics(memory.yAxis->tickLabelFont()).height(),
             qPrintable(QString("%1 names in %2 px").arg(shown.size()).arg(memory.axisRect()->height())));
    memory.resize(420, 380);
    memory.replot();
    memory.replot();
    QVERIFY(!memory.compact());
    QCOMPARE(memory.shownBarLabels().size(), 13);

    RunLegend legend;
    legend.resize(560, 60);  // its share of the chart row in a 1280-pixel window
    legend.showRuns(runs);
    QCOMPARE(legend.entryCount(), 12);
    QVERIFY(legend.lineCount() <= RunLegend::kMaxLines);
    QVERIFY(legend.shownEntryCount() >= 4);
    if (legend.shownEntryCount() < 12) QVERIFY(legend.text().contains(QString("+%1 more").arg(12 - legend.shownEntryCount())));
    for (const plab::RunRecord& r : runs) QVERIFY(legend.toolTip().contains(QString::fromStdString(r.config.name)));
    legend.resize(3000, 60);  // wide: all of them, still at most two lines
    QCOMPARE(legend.shownEntryCount(), 12);
    QVERIFY(legend.lineCount() <= RunLegend::kMaxLines);
  }
};

PLAB_TEST_MAIN(TestRunStyles)
}  // namespace test_run_styles
#include "test_run_styles.moc"
