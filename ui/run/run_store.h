#pragma once
// Every run of the session (config, info, measured steps, result) with its
// live status. Failed and stopped runs stay here so they can be exported.
#include <QObject>
#include <QString>
#include <vector>

#include "report/run_report.h"

namespace plab::ui {

enum class RunState { Queued, Running, Paused, Completed, Stopped, Failed };
QString runStateText(RunState s);  // "queued", "running", ... (matches plab::runStatusId)

class RunStore : public QObject {
  Q_OBJECT
 public:
  explicit RunStore(QObject* parent = nullptr);

  int addRun(const plab::RunConfig& config);  // returns the run index, state Queued
  void setInfo(int run, const plab::RunInfo& info);
  void appendStep(int run, const plab::StepMetrics& step);
  void setResult(int run, const plab::RunResult& result);
  void setState(int run, RunState state);
  // Removes a finished (completed, stopped or failed) run; later runs move
  // up one index. Returns false for a queued or running run: the controller
  // still refers to it by index.
  bool removeRun(int run);
  bool isFinished(int run) const;
  void clear();

  int size() const { return static_cast<int>(records_.size()); }
  const std::vector<plab::RunRecord>& records() const { return records_; }
  const plab::RunRecord& record(int run) const { return records_.at(static_cast<size_t>(run)); }
  RunState state(int run) const { return states_.at(static_cast<size_t>(run)); }
  bool hasInfo(int run) const { return hasInfo_.at(static_cast<size_t>(run)); }
  // Runs that measured anything or finished (what an export can show).
  std::vector<plab::RunRecord> exportableRecords() const;

 signals:
  void runAdded(int run);
  void runChanged(int run);        // info, result or state
  void stepAppended(int run);
  void runRemoved(int run);        // indices after run have shifted down by one
  void cleared();

 private:
  std::vector<plab::RunRecord> records_;
  std::vector<RunState> states_;
  std::vector<bool> hasInfo_;
};

}  // namespace plab::ui
