#pragma once
// Streams metrics to disk as they are measured, flushed every record, so
// that a crash keeps everything measured so far. The files are append-only:
// opening a writer on a folder that has them appends, never truncates.
// A step whose write fails (disk full) is taken back from all three files:
// each ends at its last complete record and all three at the same step.
//   metrics.jsonl  one StepMetrics JSON per line; a statistic the step did not
//                  measure is left out (the window's ± and pending are only here)
//   metrics.csv    step,loss,val_loss,grad_norm,lr,rounded_away,update_ratio,update_lost,update_error,
//                  tokens_per_s,elapsed_s,mem_*; an unmeasured statistic is an empty cell. A file
//                  written before mem_scales existed keeps its own columns when a run resumes into it
//   layers.csv     step,layer,rounded_away,update_ratio,update_lost,update_error
#include <filesystem>

#include "train/step_metrics.h"
#include "util/record_file.h"

namespace plab {

class MetricsWriter {
 public:
  explicit MetricsWriter(const std::filesystem::path& dir);  // throws IoError
  void write(const StepMetrics& m);                          // throws IoError "disk full at step N: ..."
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  RecordFile jsonl_, csv_, layers_;
  bool csvHasScales_ = true;  // false: an older metrics.csv whose header has no mem_scales column
};

// Reads metrics.jsonl back. A line that is not JSON (torn by a crash, or
// over 1 MiB) is skipped and counted in skippedLines, except a torn last
// line (a killed or still running run's normal end); a JSON record that is
// not a valid step throws ConfigError naming the line; a file that is not a
// regular file throws IoError.
std::vector<StepMetrics> readMetricsJsonl(const std::filesystem::path& file, size_t* skippedLines = nullptr);

}  // namespace plab
