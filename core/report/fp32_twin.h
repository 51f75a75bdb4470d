#pragma once
// Which fp32 run a run is measured against: its fp32 twin. One rule for the
// CLI summary, the desktop table and charts, and the reports. Torch-free.
#include <optional>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab::report {

struct RunRelations;  // report/run_relations.h: the answers below for a whole list at once

// What must be equal for an fp32 run to be a run's twin: the whole config
// except the mode and the plan (what is compared), the fields fp32 ignores
// (adamw.moments, adamw.kernels) and bookkeeping that cannot change a loss
// (name, output_dir, resume_from, checkpoint_every, and the measurement
// cadences layer_stats_every and update_window: test_report checks that
// two fp32 runs differing in them train identically).
nlohmann::json fp32TwinKey(const RunConfig& config);
// The same from the config's JSON (RunConfig::toJson), for callers that have it.
nlohmann::json fp32TwinKeyOfJson(nlohmann::json config);

// A run that trained all its steps and measured some (not failed, stopped
// or still training): what a twin is preferred to be and a paired test uses.
bool finishedRun(const RunRecord& run);

// The dotted fields ("adamw.lr", "steps") in which two configs' fp32TwinKey
// differ: why an fp32 run is not a run's twin.
std::vector<std::string> fp32TwinKeyDifferences(const RunConfig& a, const RunConfig& b);

// A run's folder name (the last part of config.output_dir): how a reference
// chosen by hand (RunRecord::fp32Reference) names its fp32 run.
std::string runFolderName(const RunRecord& run);

// The fp32 twin of runs[run]: the run itself when it is fp32; else, when the
// user chose one (RunRecord::fp32Reference), that fp32 run if listed with
// measured steps and not failed (empty otherwise: never silently another);
// else an fp32 run with the same fp32TwinKey that has measured steps, the
// last completed one listed, else the last one in progress. Empty when there
// is none. The one rule every view uses.
std::optional<size_t> fp32TwinIndex(const std::vector<RunRecord>& runs, size_t run);
// The same for every run at once, each config's key computed once.
std::vector<std::optional<size_t>> fp32TwinIndices(const std::vector<RunRecord>& runs);

// The config of the twin to run when there is none: this run's config with
// mode fp32 and the name "<name>-fp32-twin".
RunConfig fp32TwinConfig(const RunConfig& run);

// How runs[i] is named to a reader: its name, with " (2)", " (3)"... when
// earlier runs in the list share it, so that two runs called "run" stay
// apart in legends, tables and verdicts.
std::string runLabel(const std::vector<RunRecord>& runs, size_t i);

// How runs[i]'s reference was picked, for the words around it.
struct Fp32ReferenceChoice {
  std::optional<size_t> index;           // fp32TwinIndex
  bool byHand = false;                   // RunRecord::fp32Reference is set (and the run is not fp32)
  bool missing = false;                  // chosen by hand but not listed, not fp32, failed or unmeasured
  std::vector<std::string> differences;  // by hand: the fp32TwinKey fields in which its config differs
};
Fp32ReferenceChoice fp32ReferenceChoice(const std::vector<RunRecord>& runs, size_t i);
Fp32ReferenceChoice fp32ReferenceChoice(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i);

// The twin column's cell: "itself", "no fp32 twin", the twin's label, with
// " (chosen)" when picked by hand, or "chosen <folder> not listed".
std::string fp32TwinCell(const std::vector<RunRecord>& runs, size_t i);
std::string fp32TwinCell(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i);

// For tooltips: "fp32 twin: <label>", "no fp32 twin", or for a reference
// chosen by hand "fp32 run <label>, chosen by hand; its config differs in:
// adamw.lr, steps" (or "the same config except mode and plan").
std::string fp32TwinText(const std::vector<RunRecord>& runs, size_t i);
std::string fp32TwinText(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i);

// How a verdict names the reference: "fp32 twin <label>", or "fp32 run
// <label> (chosen by hand; differs in: adamw.lr, steps)". Empty without one.
std::string fp32ReferencePhrase(const std::vector<RunRecord>& runs, size_t i);
std::string fp32ReferencePhrase(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i);

}  // namespace plab::report
