#pragma once
// What a comparison report's header names: the model that most of its
// completed runs trained, described by one of those runs' RunInfo. A run
// that failed before its model loaded has an empty RunInfo ("Model: , 0
// parameters"), so the first run is not a safe choice. Torch-free.
#include <optional>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab::report {

struct ReportHeader {
  std::optional<size_t> run;  // the run whose RunInfo describes the model; empty when none has one
  size_t runsOnModel = 0;     // runs with that model (any status)
  size_t otherRuns = 0;       // runs on other models
};
ReportHeader reportHeader(const std::vector<RunRecord>& runs);

// "Model: gpt2, 124439808 parameters; device cpu; 2048 tokens per step."
// (+ " 2 runs on other models.") or "Model: unknown (no run loaded it)."
std::string reportHeaderLine(const std::vector<RunRecord>& runs);

// The fp32 AdamW baseline memory of the header's model (zero when unknown).
MemoryBreakdown headerFp32Baseline(const std::vector<RunRecord>& runs);

}  // namespace plab::report
