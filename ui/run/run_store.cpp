#include "run/run_store.h"

namespace plab::ui {

QString runStateText(RunState s) {
  switch (s) {
    case RunState::Queued: return "queued";
    case RunState::Running: return "running";
    case RunState::Paused: return "paused";
    case RunState::Completed: return "completed";
    case RunState::Stopped: return "stopped";
    case RunState::Failed: return "failed";
  }
  return "unknown";
}

RunStore::RunStore(QObject* parent) : QObject(parent) {}

int RunStore::addRun(const plab::RunConfig& config) {
  plab::RunRecord r;
  r.config = config;
  r.info.runName = config.name;
  records_.push_back(std::move(r));
  states_.push_back(RunState::Queued);
  hasInfo_.push_back(false);
  const int index = size() - 1;
  emit runAdded(index);
  return index;
}

void RunStore::setInfo(int run, const plab::RunInfo& info) {
  records_.at(static_cast<size_t>(run)).info = info;
  hasInfo_.at(static_cast<size_t>(run)) = true;
  emit runChanged(run);
}

void RunStore::appendStep(int run, const plab::StepMetrics& step) {
  records_.at(static_cast<size_t>(run)).steps.push_back(step);
  emit stepAppended(run);
}

void RunStore::setResult(int run, const plab::RunResult& result) {
  records_.at(static_cast<size_t>(run)).result = result;
  switch (result.status) {
    case plab::RunStatus::Completed: states_.at(static_cast<size_t>(run)) = RunState::Completed; break;
    case plab::RunStatus::Stopped: states_.at(static_cast<size_t>(run)) = RunState::Stopped; break;
    case plab::RunStatus::Failed: states_.at(static_cast<size_t>(run)) = RunState::Failed; break;
  }
  emit runChanged(run);
}

void RunStore::setState(int run, RunState state) {
  states_.at(static_cast<size_t>(run)) = state;
  emit runChanged(run);
}

bool RunStore::isFinished(int run) const {
  const RunState s = state(run);
  return s == RunState::Completed || s == RunState::Stopped || s == RunState::Failed;
}

bool RunStore::removeRun(int run) {
  if (run < 0 || run >= size() || !isFinished(run)) return false;
  const auto at = static_cast<std::ptrdiff_t>(run);
  records_.erase(records_.begin() + at);
  states_.erase(states_.begin() + at);
  hasInfo_.erase(hasInfo_.begin() + at);
  emit runRemoved(run);
  return true;
}

void RunStore::clear() {
  records_.clear();
  states_.clear();
  hasInfo_.clear();
  emit cleared();
}

std::vector<plab::RunRecord> RunStore::exportableRecords() const {
  std::vector<plab::RunRecord> out;
  for (size_t i = 0; i < records_.size(); ++i) {
    const RunState s = states_[i];
    if (s == RunState::Queued && records_[i].steps.empty()) continue;
    plab::RunRecord r = records_[i];
    // A run still in progress is exported as what it is so far.
    if (s == RunState::Running || s == RunState::Paused) {
      r.result.status = plab::RunStatus::Stopped;
      r.result.message = "exported while running";
      r.result.stepsDone = static_cast<int64_t>(r.steps.size());
      if (!r.steps.empty()) r.result.finalLoss = r.steps.back().loss;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace plab::ui
