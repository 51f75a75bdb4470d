#pragma once
// Every run of the session (config, info, measured steps, result) with its
// live status, where it lives on disk and whether it is shown. Runs read
// back from a workspace or an opened folder sit next to the session's own.
// Failed and stopped runs stay here so they can be exported.
#include <QDateTime>
#include <QObject>
#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "report/run_fields.h"
#include "report/run_folder_reader.h"
#include "report/run_query.h"
#include "report/run_relations.h"
#include "report/run_report.h"

namespace plab::ui {

// Incomplete: read from a folder without summary.json (killed, or still
// running in another process). Unreadable: a folder that looks like a run
// but could not be read (problem() says why); it is listed, never shown in
// charts or exports, and nothing in it is written.
enum class RunState { Queued, Running, Paused, Completed, Stopped, Failed, Incomplete, Unreadable };
QString runStateText(RunState s);  // "queued", "running", ... (matches plab::runStatusId)

class RunStore : public QObject {
  Q_OBJECT
 public:
  explicit RunStore(QObject* parent = nullptr);

  int addRun(const plab::RunConfig& config);  // returns the run index, state Queued
  // A run read from disk (finished or incomplete). linked: it lives outside
  // the workspace (opened with File > Open run). detailed: its steps hold
  // the per-layer records (else scalar steps, report/run_index.h).
  int addStoredRun(const plab::StoredRun& run, bool linked, bool detailed = true);
  // Many at once (a workspace being read): one runsAdded signal.
  struct StoredRunToAdd {
    plab::StoredRun run;
    bool linked = false;
    bool detailed = false;
  };
  void addStoredRuns(std::vector<StoredRunToAdd> runs);
  // A run folder that could not be read: a row named after the folder,
  // state Unreadable, with the reason.
  int addUnreadableRun(const QString& folder, const QString& problem, bool linked);
  void setInfo(int run, const plab::RunInfo& info);
  void appendStep(int run, const plab::StepMetrics& step);
  void setResult(int run, const plab::RunResult& result);
  void setState(int run, RunState state);
  void setFolder(int run, const QString& folder, const QDateTime& started);
  void setVisible(int run, bool visible);
  // Many at once (a group ticked): one visibilityChanged signal.
  void setVisible(const std::vector<int>& runs, bool visible);
  void rename(int run, const QString& name);
  // The fp32 run `run` is measured against, by folder name ("": the twin
  // rule picks; RunRecord::fp32Reference).
  void setFp32Reference(int run, const QString& folderName);
  // The per-layer records of a run listed with scalar steps, read in the
  // background (run/run_details.h); ignored when the run changed since.
  void setDetail(int run, plab::RunRecord detailed);
  // Removes a finished (completed, stopped, failed or incomplete) run; later
  // runs move up one index. Returns false for a queued or running run: the
  // controller still refers to it by index.
  bool removeRun(int run);
  bool isFinished(int run) const;
  void clear();

  int size() const { return static_cast<int>(records_.size()); }
  const std::vector<plab::RunRecord>& records() const { return records_; }
  const plab::RunRecord& record(int run) const { return records_.at(static_cast<size_t>(run)); }
  RunState state(int run) const { return meta_.at(static_cast<size_t>(run)).state; }
  bool hasInfo(int run) const { return meta_.at(static_cast<size_t>(run)).hasInfo; }
  bool isVisible(int run) const { return meta_.at(static_cast<size_t>(run)).visible; }
  bool isLinked(int run) const { return meta_.at(static_cast<size_t>(run)).linked; }
  // Whether the run's steps hold their per-layer records (the heatmap, the
  // layer tree and exports need them); runs listed from a workspace start
  // with scalar steps only.
  bool isDetailed(int run) const { return meta_.at(static_cast<size_t>(run)).detailed; }
  // Why an Unreadable run could not be read; "" otherwise.
  QString problem(int run) const { return meta_.at(static_cast<size_t>(run)).problem; }
  // metrics.jsonl lines of a stored run that were not JSON (torn by a crash).
  size_t skippedLines(int run) const { return meta_.at(static_cast<size_t>(run)).skippedLines; }
  QDateTime started(int run) const { return meta_.at(static_cast<size_t>(run)).started; }
  // The run's folder on disk; empty while queued (or without a workspace).
  QString folder(int run) const;
  int findFolder(const QString& folder) const;  // -1 when no run has it

  // The comparison's filter (comparison/run_filter.h): runs it excludes are
  // left out of visibleRuns (charts, export) for this session; display.json
  // is not touched.
  void setFilter(const QString& filter);
  QString filter() const { return filter_; }
  const plab::report::RunQuery& query() const { return query_; }
  bool matchesFilter(int run) const;

  // Derived from all runs once per change of the list (a run added,
  // removed, renamed, given a result, a folder or a reference, or its first
  // step), never per cell: twins, seed families, labels, styles.
  const plab::report::RunRelations& relations() const;
  // The run as named fields (filter, grouping), cached until it changes.
  const plab::report::RunFields& fields(int run) const;
  // Bumped whenever relations() would change.
  quint64 relationsGeneration() const { return generation_; }

  std::vector<int> visibleRuns() const;  // ticked and matching the filter, in order (never an Unreadable run)
  std::vector<plab::RunRecord> visibleRecords() const;
  // Visible runs that measured anything or finished (what an export can show).
  // detailFolders (when given) gets, per run, the folder to read its
  // per-layer records from when it holds scalar steps only (else "").
  std::vector<plab::RunRecord> exportableRecords(std::vector<std::string>* detailFolders = nullptr) const;

 signals:
  void runAdded(int run);
  void runsAdded(int first, int count);  // addStoredRuns
  void detailLoaded(int run);            // setDetail: per-layer records arrived
  void visibilityChanged();              // setVisible of many runs
  void runChanged(int run);        // info, result, state, name, folder or visibility
  void stepAppended(int run);
  void runRemoved(int run);        // indices after run have shifted down by one
  void cleared();
  void filterChanged();

 private:
  void relationsChanged();                        // marks relations() for recomputation
  void appendStored(plab::StoredRun run, bool linked, bool detailed);  // moved in: steps are not copied
  void fieldsChanged(int run) { meta_.at(static_cast<size_t>(run)).fields.reset(); }
  void configChanged(int run) { meta_.at(static_cast<size_t>(run)).keys.reset(); }
  struct Meta {
    RunState state = RunState::Queued;
    bool hasInfo = false;
    bool visible = true;
    bool linked = false;
    bool detailed = true;
    mutable std::shared_ptr<const plab::report::RunFields> fields;  // cache
    // The run's relation keys (report/run_relations.h), kept until its
    // config changes: relating 1,000 runs again is then a matter of hashing.
    mutable std::shared_ptr<const plab::report::RunKeys> keys;
    QDateTime started;
    QString problem;
    size_t skippedLines = 0;
  };
  std::vector<plab::RunRecord> records_;
  std::vector<Meta> meta_;
  QString filter_;
  plab::report::RunQuery query_;
  mutable std::optional<plab::report::RunRelations> relations_;
  quint64 generation_ = 0;
};

}  // namespace plab::ui
