#pragma once
// What a list of runs says about each run in relation to the others: its
// fp32 twin (report/fp32_twin.h), its seed family (the runs with the same
// config except seed and bookkeeping: report/paired_gap.h), its label
// ("name (2)"), its start rank and its style. Derived once per change of the
// list — a run added, removed, renamed, finished, or its first step — in
// O(n log n) with each config's keys computed once, so that a table of a
// thousand runs never recomputes them per cell. Every view (the app's table
// and charts, the reports, the CLI summary) gets the same answers as from
// the per-run functions, which are this applied to the list. Torch-free.
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/mode_colors.h"
#include "report/run_report.h"

namespace plab::report {

struct RunRelations {
  std::vector<std::optional<size_t>> twins;  // fp32TwinIndex of each run
  std::vector<std::string> labels;           // runLabel of each run
  std::vector<size_t> startOrder;            // startOrder(runs)
  std::vector<RunStyle> styles;              // runStyles(runs)
  // familyKeys[i]: the run's config without seed and bookkeeping (dumped);
  // families: each key's runs in list order.
  std::vector<std::string> familyKeys;
  std::unordered_map<std::string, std::vector<size_t>> families;
  // The key of the `mixed` family a run's gap is split against (its config
  // without moments, mode mixed), and every run under its key without
  // moments: mixedFamilies.at(mixedFamilyKeys[i]) are those mixed runs.
  std::vector<std::string> mixedFamilyKeys;
  std::unordered_map<std::string, std::vector<size_t>> mixedFamilies;

  // The runs whose config equals a run's except seed, bookkeeping and GEMM
  // formats: where a low-precision GEMM run finds its bf16 reference
  // (report/gemm_format_verdict.h).
  std::vector<std::string> gemmReferenceKeys;
  std::unordered_map<std::string, std::vector<size_t>> gemmReferenceFamilies;

  const std::vector<size_t>& familyOf(size_t run) const { return families.at(familyKeys.at(run)); }
  // The mixed runs of run's family (empty when none is listed).
  const std::vector<size_t>& mixedFamilyOf(size_t run) const;
};

// What relateRuns derives from a run's config alone (its twin, family,
// GEMM-reference and mixed-family keys, dumped): it depends on nothing else,
// so a list that changes often (a workspace listed in batches, runs
// finishing) keeps each run's keys and relates again without rebuilding them
// (RunConfig::toJson and four dumps a run were most of a relate).
struct RunKeys {
  std::string twin;           // fp32TwinKey
  std::string family;         // familyKey
  std::string gemmReference;  // familyKey without the plan's GEMM formats
  std::string mixedFamily;    // familyKey without moments, mode mixed
};
RunKeys runKeys(const RunConfig& config);

RunRelations relateRuns(const std::vector<RunRecord>& runs);
// The same with each run's keys given (keys[i] == runKeys(runs[i].config)).
RunRelations relateRuns(const std::vector<RunRecord>& runs, const std::vector<const RunKeys*>& keys);

// The key of a seed family: the config without name, seed, output_dir,
// resume_from and checkpoint_every; withoutMoments also drops adamw.moments
// (`mixed` ignores it, so a family compared with mixed does too).
nlohmann::json familyKey(const RunConfig& config, bool withoutMoments = false);
// The same from the config's JSON (RunConfig::toJson).
nlohmann::json familyKeyOfJson(nlohmann::json config, bool withoutMoments = false);

}  // namespace plab::report
