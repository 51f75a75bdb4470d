#include "run/run_store.h"

#include <QFileInfo>

#include "comparison/run_filter.h"
#include "report/run_figures.h"

namespace plab::ui {
namespace {

RunState stateOf(plab::StoredRunStatus s) {
  switch (s) {
    case plab::StoredRunStatus::Completed: return RunState::Completed;
    case plab::StoredRunStatus::Stopped: return RunState::Stopped;
    case plab::StoredRunStatus::Failed: return RunState::Failed;
    case plab::StoredRunStatus::Incomplete: return RunState::Incomplete;
  }
  return RunState::Incomplete;
}

}  // namespace

QString runStateText(RunState s) {
  switch (s) {
    case RunState::Queued: return "queued";
    case RunState::Running: return "running";
    case RunState::Paused: return "paused";
    case RunState::Completed: return "completed";
    case RunState::Stopped: return "stopped";
    case RunState::Failed: return "failed";
    case RunState::Incomplete: return "incomplete";
    case RunState::Unreadable: return "unreadable";
  }
  return "unknown";
}

RunStore::RunStore(QObject* parent) : QObject(parent) {}

int RunStore::addRun(const plab::RunConfig& config) {
  plab::RunRecord r;
  r.config = config;
  r.info.runName = config.name;
  r.incomplete = true;  // until the trainer's result arrives
  records_.push_back(std::move(r));
  meta_.push_back({});
  const int index = size() - 1;
  emit runAdded(index);
  return index;
}

int RunStore::addStoredRun(const plab::StoredRun& run, bool linked) {
  plab::RunRecord r = run.record;
  if (!run.display.name.empty()) r.config.name = r.info.runName = run.display.name;
  records_.push_back(std::move(r));
  Meta m;
  m.state = stateOf(run.status);
  m.hasInfo = run.record.info.parameterCount > 0;
  m.visible = !run.display.hidden;
  m.linked = linked;
  m.started = QDateTime::fromSecsSinceEpoch(run.startedAt);
  m.skippedLines = run.metricsLinesSkipped;
  meta_.push_back(m);
  const int index = size() - 1;
  emit runAdded(index);
  return index;
}

int RunStore::addUnreadableRun(const QString& folder, const QString& problem, bool linked) {
  plab::RunRecord r;
  r.config.name = r.info.runName = QFileInfo(folder).fileName().toStdString();
  r.config.output_dir = folder.toStdString();
  r.config.steps = 0;  // nothing known: the row shows 0 / 0
  r.result.status = plab::RunStatus::Failed;
  r.result.message = "unreadable: " + problem.toStdString();
  records_.push_back(std::move(r));
  Meta m;
  m.state = RunState::Unreadable;
  m.linked = linked;
  m.problem = problem;
  meta_.push_back(m);
  const int index = size() - 1;
  emit runAdded(index);
  return index;
}

void RunStore::setInfo(int run, const plab::RunInfo& info) {
  plab::RunRecord& r = records_.at(static_cast<size_t>(run));
  r.info = info;
  r.info.runName = r.config.name;  // a rename while it runs wins
  meta_.at(static_cast<size_t>(run)).hasInfo = true;
  emit runChanged(run);
}

void RunStore::appendStep(int run, const plab::StepMetrics& step) {
  records_.at(static_cast<size_t>(run)).steps.push_back(step);
  emit stepAppended(run);
}

void RunStore::setResult(int run, const plab::RunResult& result) {
  records_.at(static_cast<size_t>(run)).result = result;
  records_.at(static_cast<size_t>(run)).incomplete = false;
  RunState& state = meta_.at(static_cast<size_t>(run)).state;
  switch (result.status) {
    case plab::RunStatus::Completed: state = RunState::Completed; break;
    case plab::RunStatus::Stopped: state = RunState::Stopped; break;
    case plab::RunStatus::Failed: state = RunState::Failed; break;
  }
  emit runChanged(run);
}

void RunStore::setState(int run, RunState state) {
  meta_.at(static_cast<size_t>(run)).state = state;
  plab::RunRecord& r = records_.at(static_cast<size_t>(run));
  if (state == RunState::Stopped && r.incomplete) {  // a queued run stopped before it started: no trainer result comes
    r.result = plab::report::shownResult(r);
    r.result.message = "stopped before it started";
    r.incomplete = false;
  }
  emit runChanged(run);
}

void RunStore::setFolder(int run, const QString& folder, const QDateTime& started) {
  records_.at(static_cast<size_t>(run)).config.output_dir = folder.toStdString();
  meta_.at(static_cast<size_t>(run)).started = started;
  emit runChanged(run);
}

void RunStore::setVisible(int run, bool visible) {
  Meta& m = meta_.at(static_cast<size_t>(run));
  if (m.visible == visible) return;
  m.visible = visible;
  emit runChanged(run);
}

void RunStore::rename(int run, const QString& name) {
  plab::RunRecord& r = records_.at(static_cast<size_t>(run));
  r.config.name = r.info.runName = name.toStdString();
  emit runChanged(run);
}

void RunStore::setFp32Reference(int run, const QString& folderName) {
  std::string& reference = records_.at(static_cast<size_t>(run)).fp32Reference;
  if (reference == folderName.toStdString()) return;
  reference = folderName.toStdString();
  emit runChanged(run);
}

QString RunStore::folder(int run) const { return QString::fromStdString(record(run).config.output_dir); }

int RunStore::findFolder(const QString& folder) const {
  for (int i = 0; i < size(); ++i)
    if (!folder.isEmpty() && this->folder(i) == folder) return i;
  return -1;
}

bool RunStore::isFinished(int run) const {
  const RunState s = state(run);
  return s == RunState::Completed || s == RunState::Stopped || s == RunState::Failed || s == RunState::Incomplete ||
         s == RunState::Unreadable;
}

bool RunStore::removeRun(int run) {
  if (run < 0 || run >= size() || !isFinished(run)) return false;
  const auto at = static_cast<std::ptrdiff_t>(run);
  records_.erase(records_.begin() + at);
  meta_.erase(meta_.begin() + at);
  emit runRemoved(run);
  return true;
}

void RunStore::clear() {
  records_.clear();
  meta_.clear();
  emit cleared();
}

void RunStore::setFilter(const QString& filter) {
  if (filter == filter_) return;
  filter_ = filter;
  emit filterChanged();
}

bool RunStore::matchesFilter(int run) const {
  if (filter_.trimmed().isEmpty()) return true;
  const plab::RunRecord& r = record(run);
  return runMatchesFilter(filter_, {QString::fromStdString(r.config.name),
                                    QString::fromStdString(plab::optimizerModeId(r.config.mode)),
                                    runStateText(state(run)), QFileInfo(folder(run)).fileName()});
}

std::vector<int> RunStore::visibleRuns() const {
  std::vector<int> out;
  for (int i = 0; i < size(); ++i)
    if (isVisible(i) && state(i) != RunState::Unreadable && matchesFilter(i)) out.push_back(i);
  return out;
}

std::vector<plab::RunRecord> RunStore::visibleRecords() const {
  std::vector<plab::RunRecord> out;
  for (int i : visibleRuns()) out.push_back(records_[static_cast<size_t>(i)]);
  return out;
}

std::vector<plab::RunRecord> RunStore::exportableRecords() const {
  std::vector<plab::RunRecord> out;
  for (int i : visibleRuns()) {
    const RunState s = state(i);
    if (s == RunState::Queued && records_[static_cast<size_t>(i)].steps.empty()) continue;
    plab::RunRecord r = records_[static_cast<size_t>(i)];
    // A run still in progress is exported as what it is so far.
    if (r.incomplete) {
      r.result = plab::report::shownResult(r);
      if (s == RunState::Running || s == RunState::Paused) r.result.message = "exported while running";
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace plab::ui
