#include "notebook/child_cases.h"

#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QLabel>
#include <QLineEdit>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QtTest/QtTest>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <memory>

#include "charts/chart_panel.h"
#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "comparison/comparison_table.h"
#include "main_window.h"
#include "notebook/gui_wait.h"
#include "notebook/latency_probe.h"
#include "notebook/process_stats.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"
#include "report/report_export.h"
#include "report/run_index.h"

namespace plab::bench {
namespace {

using nlohmann::json;
using ui::MainWindow;

constexpr int kListTimeoutMs = 900000;  // a cold workspace of 1,000 runs on a loaded machine
constexpr int kQuietMs = 1500;           // "settled": nothing repainted for this long

int64_t spawnNs() {
  const QByteArray env = qgetenv("PLAB_BENCH_SPAWN_NS");
  return env.isEmpty() ? monotonicNs() : env.toLongLong();
}

json sampleJson(const ProcessSample& s) { return {{"cpu_s", s.cpuSeconds}, {"rss_mib", s.rssMiB}, {"hwm_mib", s.hwmMiB}}; }

json latencyJson(const std::vector<double>& ms) {
  return {{"n", ms.size()}, {"p50_ms", percentile(ms, 50)}, {"p95_ms", percentile(ms, 95)},
          {"max_ms", percentile(ms, 100)}};
}

QTabWidget* resultTabs(MainWindow& w) {
  for (QTabWidget* tabs : w.findChildren<QTabWidget*>())
    if (tabs->count() > 0 && tabs->tabText(0) == "Comparison") return tabs;
  return nullptr;
}

// The charts' redraw timer (ChartPanel redraws on it when marked dirty).
QTimer* chartTimer(MainWindow& w) {
  for (QTimer* t : w.chartPanel()->findChildren<QTimer*>(Qt::FindDirectChildrenOnly))
    if (t->interval() == 250) return t;
  return nullptr;
}

// Opens the window on the workspace and waits for the table and charts;
// the figures of the open, from the process's spawn.
class OpenedWindow {
 public:
  explicit OpenedWindow(const QString& workspace) {
    const int64_t spawn = spawnNs();
    figures_["process_start_ms"] = msBetween(spawn, monotonicNs());  // exec, libraries, QApplication
    const int64_t constructing = monotonicNs();
    window_ = std::make_unique<MainWindow>(workspace);
    figures_["construct_ms"] = msBetween(constructing, monotonicNs());
    MainWindow& w = *window_;
    w.resize(1600, 1000);
    w.show();

    EventWatch tablePaint(QEvent::Paint), chartPaint(QEvent::Paint), anyPaint(QEvent::Paint);
    tablePaint.watch(w.comparisonTable()->viewport());
    chartPaint.watch(w.chartPanel()->lossChart());
    for (QWidget* widget : std::initializer_list<QWidget*>{w.comparisonTable()->viewport(), w.chartPanel()->lossChart(),
                                                           w.chartPanel()->memoryChart(), w.chartPanel()->layerHeatmap(),
                                                           w.chartPanel()->drawNote()})
      anyPaint.watch(widget);
    int64_t lastAdded = 0;
    const auto added = [&lastAdded] { lastAdded = monotonicNs(); };
    QObject::connect(w.store(), &ui::RunStore::runsAdded, &w, added);
    QObject::connect(w.store(), &ui::RunStore::runAdded, &w, added);

    // Listed: the last batch is in the store and the table painted it.
    ok_ = waitUntil([&] { return !w.isLoadingRuns() && lastAdded > 0 && tablePaint.lastNs() > lastAdded; },
                    kListTimeoutMs);
    const int64_t ready = monotonicNs();
    figures_["listed"] = ok_;
    figures_["ready_ms"] = msBetween(spawn, ready);
    figures_["window_ready_ms"] = msBetween(constructing, ready);
    figures_["ready"] = sampleJson(sampleProcess());

    // The charts drew them (on their next redraw tick).
    const bool charts = waitUntil([&] { return chartPaint.lastNs() > lastAdded; }, 120000);
    figures_["charts_ms"] = charts ? json(msBetween(spawn, monotonicNs())) : json(nullptr);
    figures_["charts"] = sampleJson(sampleProcess());

    // Settled: the model inspected, the heatmap's run read, nothing redrawn for kQuietMs.
    int seen = -1;
    int64_t lastPaintEnd = monotonicNs();
    ProcessSample atLastPaint = sampleProcess();
    const bool settled = waitUntil(
        [&] {
          const int64_t now = monotonicNs();
          if (anyPaint.count() != seen) {
            seen = anyPaint.count();
            lastPaintEnd = now;
            atLastPaint = sampleProcess();
          }
          const bool modelDone = w.modelPicker()->hasOverview() || !w.modelPicker()->errorText().isEmpty();
          return modelDone && msBetween(lastPaintEnd, now) >= kQuietMs;
        },
        300000);
    figures_["settled_ok"] = settled;
    figures_["settled_ms"] = msBetween(spawn, lastPaintEnd);
    figures_["settled"] = sampleJson(atLastPaint);
    figures_["end"] = sampleJson(sampleProcess());
    describe();
  }

  MainWindow& window() { return *window_; }
  bool ok() const { return ok_; }
  json& figures() { return figures_; }

  void describe() {
    MainWindow& w = *window_;
    int unreadable = 0, ticked = 0;
    for (int i = 0; i < w.store()->size(); ++i) {
      unreadable += w.store()->state(i) == ui::RunState::Unreadable ? 1 : 0;
      ticked += w.store()->isVisible(i) ? 1 : 0;
    }
    figures_["runs"] = w.store()->size();
    figures_["unreadable"] = unreadable;
    figures_["ticked"] = ticked;
    figures_["top_rows"] = w.comparisonTable()->shownTopLevelRows();
    figures_["grouping"] = w.groupByCombo()->currentText().toStdString();
    figures_["chart_series"] = w.chartPanel()->series().size();
    figures_["chart_note"] = w.chartPanel()->drawNote()->text().toStdString();
    // After the measurement: every row's text is computed here.
    int twinned = 0, fp32 = 0, without = 0;
    for (int i = 0; i < w.store()->size(); ++i) {
      const QString cell = w.comparisonTable()->cellText(i, ui::ComparisonTable::Fp32TwinColumn);
      if (cell == "itself") ++fp32;
      else if (cell == "no fp32 twin" || cell == "–") ++without;
      else ++twinned;
    }
    figures_["fp32_runs"] = fp32;
    figures_["with_twin"] = twinned;
    figures_["without_twin"] = without;
  }

 private:
  std::unique_ptr<MainWindow> window_;
  json figures_;
  bool ok_ = false;
};

// The charts' redraws: ChartPanel redraws on its timer's tick when marked
// dirty; from the tick's event (filter) to the end of its timeout slots (a
// slot connected after the panel's runs last).
class ChartRedrawWatch : public QObject {
 public:
  explicit ChartRedrawWatch(QTimer* timer) {
    if (!timer) return;
    timer->installEventFilter(this);
    QObject::connect(timer, &QTimer::timeout, this, [this] {
      const double ms = msBetween(tickNs_, monotonicNs());
      totalMs += ms;
      longestMs = std::max(longestMs, ms);
    });
  }
  void reset() { totalMs = longestMs = 0; }
  double totalMs = 0, longestMs = 0;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::Timer) tickNs_ = monotonicNs();
    return QObject::eventFilter(watched, event);
  }

 private:
  int64_t tickNs_ = 0;
};

// Runs the event loop until the GUI thread has been quiet (under 10 ms of
// its CPU time in the last 300 ms) and at least minMs have passed; returns
// when the quiet began (monotonic ns).
int64_t waitQuiet(int minMs, int timeoutMs = 300000) {
  const int64_t begin = monotonicNs();
  std::deque<std::pair<int64_t, double>> history;  // (time, GUI thread CPU s)
  int64_t quietSince = begin;
  waitUntil(
      [&] {
        const int64_t now = monotonicNs();
        const double cpu = threadCpuSeconds();
        history.emplace_back(now, cpu);
        while (history.size() > 1 && msBetween(history[1].first, now) >= 300) history.pop_front();
        const bool quiet = msBetween(history.front().first, now) >= 300 && (cpu - history.front().second) < 0.010;
        if (quiet) quietSince = history.front().first;
        return quiet && msBetween(begin, now) >= minMs;
      },
      timeoutMs);
  return quietSince;
}

// One change in the window (a key, a grouping), with the latency probe
// running: until_idle: the change and the events it posted (the table's
// update and paint) until the GUI thread found nothing left to process —
// the key's own processing; then everything it set off, until the GUI
// thread is quiet again: the charts' redraws on their next tick, a heatmap
// run's records read in the background and drawn... — the longest any input
// waited meanwhile (freeze) and the GUI thread's CPU time.
json timeChange(LatencyProbe& probe, ChartRedrawWatch& redraws, const std::function<void()>& change) {
  waitQuiet(300);
  redraws.reset();
  const double cpuBefore = threadCpuSeconds();
  const int64_t begin = monotonicNs();
  change();
  const int64_t handled = monotonicNs();
  const bool idle = processUntilIdle(60000);
  const int64_t settled = monotonicNs();
  const int64_t quiet = waitQuiet(700);
  const double cpu = threadCpuSeconds() - cpuBefore;
  double freeze = msBetween(begin, settled);  // an input arriving with the key waits this long at least
  for (const LatencyProbe::Sample& p : probe.samples())
    if (p.processedNs >= begin && p.postedNs <= quiet) freeze = std::max(freeze, p.latencyMs());
  // at_s: CLOCK_MONOTONIC, to find the change in `perf record -k CLOCK_MONOTONIC`.
  return {{"handler_ms", msBetween(begin, handled)}, {"until_idle_ms", msBetween(begin, settled)},
          {"freeze_ms", freeze}, {"gui_cpu_ms", cpu * 1000}, {"chart_redraw_ms", redraws.totalMs},
          {"window_ms", msBetween(begin, quiet)}, {"idle", idle}, {"at_s", static_cast<double>(begin) / 1e9}};
}

json filterCase(OpenedWindow& opened, const QString& text) {
  MainWindow& w = opened.window();
  json out;
  QLineEdit* edit = w.runFilterEdit();
  edit->setFocus();
  processUntilIdle();
  ChartRedrawWatch redraws(chartTimer(w));
  LatencyProbe probe(5);
  probe.start();
  json groupings = json::array();
  for (const char* g : {"seeds", "mode", "model", "mode, model", "adamw.lr", "none", "auto"}) {
    json t = timeChange(probe, redraws, [&] { w.groupByCombo()->setCurrentText(g); });
    t["group_by"] = g;
    t["top_rows"] = w.comparisonTable()->shownTopLevelRows();
    t["chart_series"] = w.chartPanel()->series().size();
    groupings.push_back(t);
  }
  out["group_by"] = groupings;
  json keys = json::array();
  for (const QChar c : text) {
    json t = timeChange(probe, redraws, [&] { QTest::keyClick(edit, c.toLatin1()); });
    t["key"] = std::string(1, c.toLatin1());
    t["filter"] = edit->text().toStdString();
    t["top_rows"] = w.comparisonTable()->shownTopLevelRows();
    keys.push_back(t);
  }
  out["keys"] = keys;
  out["typed"] = edit->text().toStdString();
  out["filter_note"] = w.filterNote()->text().toStdString();
  // The case: grouping by mode with the filter on, then off again.
  json filtered = json::array();
  for (const char* g : {"mode", "model", "auto"}) {
    json t = timeChange(probe, redraws, [&] { w.groupByCombo()->setCurrentText(g); });
    t["group_by"] = g;
    t["top_rows"] = w.comparisonTable()->shownTopLevelRows();
    filtered.push_back(t);
  }
  out["group_by_filtered"] = filtered;
  json clear = timeChange(probe, redraws, [&] {
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Backspace);
  });
  clear["top_rows"] = w.comparisonTable()->shownTopLevelRows();
  out["clear"] = clear;
  probe.stop();
  return out;
}

// Input latency for `seconds`, idle or while a run of the default model
// trains (started as the Start button does).
json latencyCase(OpenedWindow& opened, bool train, int seconds) {
  MainWindow& w = opened.window();
  json out;
  out["training"] = train;
  const char* nice = std::getenv("PLAB_TRAINING_NICE");
  out["training_nice_env"] = nice ? nice : "";
  int run = -1;
  if (train) {
    if (!waitUntil([&] { return w.modelPicker()->hasOverview() || !w.modelPicker()->errorText().isEmpty(); }, 300000) ||
        !w.modelPicker()->hasOverview())
      throw std::runtime_error("the model picker is not ready: " + w.modelPicker()->errorText().toStdString());
    RunConfig c = w.currentConfig();
    c.steps = 1000000;  // outlasts the measurement; stopped after it
    w.optimizerPanel()->setFrom(c);
    processUntilIdle();
    run = w.store()->size();
    w.startRun();
    if (!waitUntil([&] { return w.store()->size() > run && w.store()->record(run).steps.size() >= 3; }, 600000))
      throw std::runtime_error("the run did not start training: " + w.lastError().toStdString());
    runFor(1000);
  }
  QTabWidget* tabs = resultTabs(w);
  LatencyProbe probe(20);
  probe.setAction(10, [tabs] {  // a tab click every 200 ms: the switch and its paint
    if (!tabs) return;
    tabs->setCurrentIndex(1 - tabs->currentIndex());
    tabs->repaint();
  });
  const auto stepOf = [&] { return run >= 0 && !w.store()->record(run).steps.empty() ? w.store()->record(run).steps.back().step : 0; };
  const int64_t firstStep = stepOf();
  const ProcessSample before = sampleProcess();
  const double guiBefore = threadCpuSeconds();
  probe.start();
  runFor(seconds * 1000);
  out["gui_thread_cpu_s"] = threadCpuSeconds() - guiBefore;
  out["thread_nice"] = threadNiceCounts();
  probe.stop();
  const ProcessSample after = sampleProcess();
  out["latency"] = latencyJson(probe.latenciesMs());
  out["tab_switch"] = latencyJson(probe.actionMs());
  out["cpu_s"] = after.cpuSeconds - before.cpuSeconds;
  out["steps_per_s"] = static_cast<double>(stepOf() - firstStep) / seconds;
  if (train) {
    w.stopRuns();
    waitUntil([&] { return !w.controller()->isBusy(); }, 300000);
    // The bench's workspace: the run it added goes again, once the window
    // has indexed it off the GUI thread (removing it while index.json is
    // being written failed with "Directory not empty").
    const std::filesystem::path folder = w.store()->folder(run).toStdString();
    if (!folder.empty() && folder.parent_path() == std::filesystem::path(w.workspacePath().toStdString())) {
      waitUntil([&] { return report::readRunIndex(folder).has_value(); }, 120000);
      processUntilIdle();
      std::error_code ec;
      for (int attempt = 0; attempt < 20 && std::filesystem::exists(folder); ++attempt) {
        std::filesystem::remove_all(folder, ec);
        if (ec) runFor(250);
      }
      if (std::filesystem::exists(folder)) throw std::runtime_error("cannot remove the trained run " + folder.string() + ": " + ec.message());
    }
  }
  return out;
}

json exportCase(OpenedWindow& opened, const QString& dir) {
  MainWindow& w = opened.window();
  json out;
  auto* exporter = w.findChild<ui::ReportExport*>();
  struct Step {
    int64_t ns;
    int done, total;
    std::string text;
  };
  std::vector<Step> steps;
  QObject::connect(exporter, &ui::ReportExport::progress, &w, [&](int done, int total, const QString& text) {
    steps.push_back({monotonicNs(), done, total, text.toStdString()});
  });
  bool finished = false, ok = false;
  QObject::connect(&w, &MainWindow::exportFinished, &w, [&](const QString&, bool success) {
    finished = true;
    ok = success;
  });
  LatencyProbe probe(5);
  probe.start();
  runFor(500);
  const int64_t begin = monotonicNs();
  const bool started = w.exportReportTo(dir);
  const int64_t called = monotonicNs();
  waitUntil([&] { return finished || !started; }, 900000);
  const int64_t end = monotonicNs();
  runFor(300);
  probe.stop();
  out["started"] = started;
  out["ok"] = ok;
  out["error"] = w.lastError().toStdString();
  out["exported_runs"] = w.store()->exportableRecords().size();
  out["call_ms"] = msBetween(begin, called);
  out["export_ms"] = msBetween(begin, end);
  std::vector<double> during;
  json stalls = json::array();
  for (const LatencyProbe::Sample& s : probe.samples()) {
    if (s.processedNs < begin || s.postedNs > end) continue;
    during.push_back(s.latencyMs());
  }
  // Each stall once: a sample that waited over 50 ms and was posted after the previous stall ended.
  int64_t lastEnd = 0;
  for (const LatencyProbe::Sample& s : probe.samples()) {
    if (s.processedNs < begin || s.postedNs > end || s.latencyMs() < 50 || s.postedNs < lastEnd) continue;
    lastEnd = s.processedNs;
    json during_steps = json::array();
    for (const Step& st : steps)
      if (st.ns >= s.postedNs - 5000000 && st.ns <= s.processedNs)
        during_steps.push_back({{"at_ms", msBetween(begin, st.ns)}, {"done", st.done}, {"total", st.total}, {"step", st.text}});
    stalls.push_back({{"from_ms", msBetween(begin, s.postedNs)}, {"length_ms", s.latencyMs()}, {"progress", during_steps}});
  }
  out["latency"] = latencyJson(during);
  out["stalls_over_50ms"] = stalls;
  json timeline = json::array();
  for (const Step& st : steps) timeline.push_back({{"at_ms", msBetween(begin, st.ns)}, {"done", st.done}, {"total", st.total}, {"step", st.text}});
  out["progress"] = timeline;
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.toStdString())) ++files;
  out["files"] = files;
  return out;
}

}  // namespace

int runChild(const ChildOptions& options) {
  QApplication::setCursorFlashTime(0);  // a blinking cursor would repaint forever
  json out;
  out["kind"] = options.kind.toStdString();
  out["load_start"] = loadAverage();
  try {
    OpenedWindow opened(options.workspace);
    out["open"] = opened.figures();
    if (!opened.ok()) throw std::runtime_error("the workspace was not listed in time");
    if (options.kind == "filter") out["filter"] = filterCase(opened, options.filterText);
    else if (options.kind == "idle") out["latency"] = latencyCase(opened, false, options.seconds);
    else if (options.kind == "train") out["latency"] = latencyCase(opened, true, options.seconds);
    else if (options.kind == "export") out["export"] = exportCase(opened, options.exportDir);
    else if (options.kind != "open") throw std::runtime_error("unknown case " + options.kind.toStdString());
    out["ok"] = true;
  } catch (const std::exception& e) {
    out["ok"] = false;
    out["error"] = e.what();
  }
  out["load_end"] = loadAverage();
  std::printf("BENCH_RESULT %s\n", out.dump().c_str());
  std::fflush(stdout);
  return out["ok"].get<bool>() ? 0 : 1;
}

}  // namespace plab::bench
