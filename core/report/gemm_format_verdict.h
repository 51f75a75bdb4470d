#pragma once
// A verdict line per run with low-precision GEMMs: its final validation loss
// minus that of the bf16-GEMM run of the same config and seed, paired over
// the seeds when there are several (report/paired_gap.h's estimate). Torch-free.
#include <string>
#include <vector>

#include "report/paired_gap.h"
#include "report/run_report.h"

namespace plab::report {

struct GemmFormatVerdict {
  size_t run = 0;         // index of the first run of its family (lowest seed first as listed)
  std::string label;      // the run's name without its "-s<seed>" suffix
  std::vector<double> differences;  // per seed: val loss minus the bf16 run's
  PairedEstimate estimate;
  std::string text;       // "+0.0123 over 2 seeds (95 % CI ... , paired): beyond seed noise"
};

// One verdict per distinct low-precision configuration (seeds pooled), in
// run order; none without a finished bf16 reference.
std::vector<GemmFormatVerdict> gemmFormatVerdicts(const std::vector<RunRecord>& runs);

// The verdict of run i's family as one phrase for the app's table
// ("GEMMs: val loss minus the bf16 run's ..."); "" when run i has no
// low-precision GEMMs, is not finished or has no bf16 reference.
std::string gemmFormatVerdictText(const std::vector<RunRecord>& runs, size_t i);
struct RunRelations;  // report/run_relations.h
std::string gemmFormatVerdictText(const std::vector<RunRecord>& runs, const RunRelations& relations, size_t i);

}  // namespace plab::report
