#include "run/run_store.h"

#include <QFileInfo>

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

void RunStore::relationsChanged() {
  relations_.reset();
  ++generation_;
}

const plab::report::RunRelations& RunStore::relations() const {
  if (relations_) return *relations_;
  std::vector<const plab::report::RunKeys*> keys;
  keys.reserve(records_.size());
  for (size_t i = 0; i < records_.size(); ++i) {
    const Meta& m = meta_[i];
    if (!m.keys) m.keys = std::make_shared<const plab::report::RunKeys>(plab::report::runKeys(records_[i].config));
    keys.push_back(m.keys.get());
  }
  relations_ = plab::report::relateRuns(records_, keys);
  return *relations_;
}

const plab::report::RunFields& RunStore::fields(int run) const {
  const Meta& m = meta_.at(static_cast<size_t>(run));
  if (!m.fields)
    m.fields = std::make_shared<const plab::report::RunFields>(plab::report::runFields(
        record(run), runStateText(m.state).toStdString(), QFileInfo(folder(run)).fileName().toStdString()));
  return *m.fields;
}

int RunStore::addRun(const plab::RunConfig& config) {
  plab::RunRecord r;
  r.config = config;
  r.info.runName = config.name;
  r.incomplete = true;  // until the trainer's result arrives
  records_.push_back(std::move(r));
  meta_.push_back({});
  relationsChanged();
  const int index = size() - 1;
  emit runAdded(index);
  return index;
}

void RunStore::appendStored(plab::StoredRun run, bool linked, bool detailed) {
  Meta m;
  m.state = stateOf(run.status);
  m.hasInfo = run.record.info.parameterCount > 0;
  m.visible = !run.display.hidden;
  m.linked = linked;
  m.detailed = detailed;
  m.started = QDateTime::fromSecsSinceEpoch(run.startedAt);
  m.skippedLines = run.metricsLinesSkipped;
  plab::RunRecord& r = run.record;
  if (!run.display.name.empty()) r.config.name = r.info.runName = run.display.name;
  records_.push_back(std::move(r));
  meta_.push_back(std::move(m));
}

int RunStore::addStoredRun(const plab::StoredRun& run, bool linked, bool detailed) {
  appendStored(run, linked, detailed);
  relationsChanged();
  const int index = size() - 1;
  emit runAdded(index);
  return index;
}

void RunStore::addStoredRuns(std::vector<StoredRunToAdd> runs) {
  if (runs.empty()) return;
  const int first = size();
  records_.reserve(records_.size() + runs.size());
  meta_.reserve(meta_.size() + runs.size());
  for (StoredRunToAdd& r : runs) appendStored(std::move(r.run), r.linked, r.detailed);
  relationsChanged();
  emit runsAdded(first, static_cast<int>(runs.size()));
}

void RunStore::setDetail(int run, plab::RunRecord detailed) {
  if (run < 0 || run >= size() || isDetailed(run)) return;
  plab::RunRecord& r = records_.at(static_cast<size_t>(run));
  // Read while the list changed (the run removed, another in its place): not this run.
  if (r.config.output_dir != detailed.config.output_dir || r.steps.size() != detailed.steps.size()) return;
  r.steps = std::move(detailed.steps);
  meta_.at(static_cast<size_t>(run)).detailed = true;
  emit detailLoaded(run);
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
  relationsChanged();
  const int index = size() - 1;
  emit runAdded(index);
  return index;
}

void RunStore::setInfo(int run, const plab::RunInfo& info) {
  plab::RunRecord& r = records_.at(static_cast<size_t>(run));
  r.info = info;
  r.info.runName = r.config.name;  // a rename while it runs wins
  meta_.at(static_cast<size_t>(run)).hasInfo = true;
  fieldsChanged(run);
  emit runChanged(run);
}

void RunStore::appendStep(int run, const plab::StepMetrics& step) {
  auto& steps = records_.at(static_cast<size_t>(run)).steps;
  steps.push_back(step);
  if (steps.size() == 1) relationsChanged();  // a run with a step can be a twin
  fieldsChanged(run);                         // its figures
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
  relationsChanged();
  fieldsChanged(run);
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
  relationsChanged();
  fieldsChanged(run);
  emit runChanged(run);
}

void RunStore::setFolder(int run, const QString& folder, const QDateTime& started) {
  records_.at(static_cast<size_t>(run)).config.output_dir = folder.toStdString();
  meta_.at(static_cast<size_t>(run)).started = started;
  configChanged(run);
  relationsChanged();
  fieldsChanged(run);
  emit runChanged(run);
}

void RunStore::setVisible(int run, bool visible) {
  Meta& m = meta_.at(static_cast<size_t>(run));
  if (m.visible == visible) return;
  m.visible = visible;
  emit runChanged(run);
}

void RunStore::setVisible(const std::vector<int>& runs, bool visible) {
  bool changed = false;
  for (int run : runs) {
    if (run < 0 || run >= size()) continue;
    Meta& m = meta_.at(static_cast<size_t>(run));
    changed = changed || m.visible != visible;
    m.visible = visible;
  }
  if (changed) emit visibilityChanged();
}

void RunStore::rename(int run, const QString& name) {
  plab::RunRecord& r = records_.at(static_cast<size_t>(run));
  r.config.name = r.info.runName = name.toStdString();
  configChanged(run);
  relationsChanged();
  fieldsChanged(run);
  emit runChanged(run);
}

void RunStore::setFp32Reference(int run, const QString& folderName) {
  std::string& reference = records_.at(static_cast<size_t>(run)).fp32Reference;
  if (reference == folderName.toStdString()) return;
  reference = folderName.toStdString();
  relationsChanged();
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
  relationsChanged();
  emit runRemoved(run);
  return true;
}

void RunStore::clear() {
  records_.clear();
  meta_.clear();
  relationsChanged();
  emit cleared();
}

void RunStore::setFilter(const QString& filter) {
  if (filter == filter_) return;
  filter_ = filter;
  query_ = plab::report::parseRunQuery(filter.toStdString());
  emit filterChanged();
}

bool RunStore::matchesFilter(int run) const {
  if (query_.empty()) return true;
  return plab::report::matchesQuery(query_, fields(run));
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

std::vector<plab::RunRecord> RunStore::exportableRecords(std::vector<std::string>* detailFolders) const {
  std::vector<plab::RunRecord> out;
  if (detailFolders) detailFolders->clear();
  for (int i : visibleRuns()) {
    const RunState s = state(i);
    if (s == RunState::Queued && records_[static_cast<size_t>(i)].steps.empty()) continue;
    if (detailFolders) detailFolders->push_back(isDetailed(i) ? std::string() : records_[static_cast<size_t>(i)].config.output_dir);
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
