// A run folder read back as the app lists a workspace (findRunFolders, then
// readRunFolder). The input is the folder's files separated by NUL bytes,
// in this order: config.json, metrics.jsonl, summary.json, run_info.json,
// display.json; a part that is not there (fewer NULs) leaves its file out.
// The files are rewritten per input in a per-process scratch folder.
//
// PLAB_FUZZ_VERBOSE=1 prints each input's outcome.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "fuzz_input_file.h"
#include "report/run_folder_reader.h"
#include "util/errors.h"

namespace {

constexpr const char* kParts[] = {"config.json", "metrics.jsonl", "summary.json", "run_info.json", "display.json"};

struct Scratch {
  std::filesystem::path dir = plab::fuzz::scratchFolder() / "run";
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Scratch scratch;
  static const bool verbose = std::getenv("PLAB_FUZZ_VERBOSE") != nullptr;
  std::error_code ec;
  std::filesystem::remove_all(scratch.dir, ec);
  std::filesystem::create_directories(scratch.dir);
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (size_t part = 0; part < std::size(kParts); ++part) {
    const size_t end = rest.find('\0');
    const std::string_view bytes = rest.substr(0, end);
    plab::fuzz::writeInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                           std::string("run/") + kParts[part]);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  try {
    for (const std::filesystem::path& run : plab::findRunFolders(scratch.dir.parent_path())) {
      const plab::StoredRun read = plab::readRunFolder(run);
      if (verbose)
        std::printf("  read: %zu steps, %zu lines skipped%s%s\n", read.record.steps.size(), read.metricsLinesSkipped,
                    read.displayProblem.empty() ? "" : "; display ignored: ", read.displayProblem.c_str());
    }
  } catch (const plab::Error& e) {
    if (verbose) std::printf("  unreadable: %s\n", e.what());
  }
  return 0;
}
