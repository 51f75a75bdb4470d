#pragma once
// What Precision Lab writes into a run folder, by name, and removing exactly
// that. --overwrite and the app's delete act through here only: they never
// follow a symbolic link (a link at one of these names is removed itself,
// never its target) and keep every file the tool does not write.
#include <filesystem>
#include <vector>

namespace plab {

// Removes from dir what a run, a report or an export writes: config.json,
// run_info.json, summary.json/.csv, metrics.jsonl/.csv, layers.csv,
// report.html/.pdf, display.json, charts/*.svg|png, checkpoint-<N>/ (its
// weights, optimizer state, trainer_state.json, config.json,
// checksums.json and the tokenizer files of util/hf_file_names.h), the sub-runs
// in runs/<run>/ (by the same rule) and the tool's temporaries. Sub-folders
// left empty go; dir itself stays. Returns the entries kept, relative to dir.
// dir must be a real folder, not a link (the caller checks); IoError when
// something cannot be removed.
std::vector<std::filesystem::path> removeToolFiles(const std::filesystem::path& dir);

// Removes the temporaries a killed writer left behind (model.safetensors.tmp.
// <pid>, .summary.json.tmp-<pid>-<n>, .tokens-<pid>-<n>.tmp, .metrics-tmp-<pid>/,
// .qt-report-tmp-<pid>/) in dir, its checkpoint-<N>/ and runs/<run>/ folders,
// when process <pid> is gone. Never throws; returns how many it removed.
int removeStaleTemporaries(const std::filesystem::path& dir);

// The same for the siblings of one file about to be written (file.tmp.<pid>).
void removeStaleTemporariesOf(const std::filesystem::path& file);

}  // namespace plab
