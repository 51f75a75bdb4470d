#include "report/run_report.h"

#include <unistd.h>

#include <set>

#include "report/fp32_comparison.h"
#include "report/fp32_twin.h"
#include "report/report_charts.h"
#include "report/run_index.h"
#include "report/run_figures.h"
#include "train/metrics_writer.h"
#include "util/atomic_file.h"
#include "util/errors.h"

namespace plab {
namespace fs = std::filesystem;

namespace {

void makeDir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw IoError("cannot create folder " + dir.string() + ": " + (ec ? ec.message() : "not a directory"));
}

// Every report file is derived: replaced whole, never rewritten in place.
void writeText(const fs::path& file, const std::string& text) { writeFileAtomically(file, text); }

// The metrics files of a run that streamed into dir are the record of what
// was measured: append-only, never rewritten by the report. Only a folder
// without them (an export elsewhere) gets them, built under temporary names
// and renamed into place.
void writeMetricsIfMissing(const fs::path& dir, const std::vector<StepMetrics>& steps) {
  const char* const kFiles[] = {"metrics.jsonl", "metrics.csv", "layers.csv"};
  for (const char* f : kFiles)
    if (fs::exists(dir / f)) return;
  const fs::path tmp = dir / (".metrics-tmp-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(tmp, ec);
  {
    MetricsWriter writer(tmp);
    for (const StepMetrics& m : steps) writer.write(m);
  }
  for (const char* f : kFiles) {
    fs::rename(tmp / f, dir / f, ec);
    if (ec) {
      fs::remove_all(tmp, ec);
      throw IoError("cannot write " + (dir / f).string() + ": " + ec.message());
    }
  }
  fs::remove_all(tmp, ec);
}

void writeCharts(const fs::path& dir, const std::vector<RunRecord>& runs) {
  makeDir(dir / "charts");
  for (const report::SvgChart& c : report::renderReportCharts(runs)) writeText(dir / "charts" / c.fileName, c.svg);
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void writeRunReport(const fs::path& dir, const RunRecord& run) {
  makeDir(dir);
  writeText(dir / "config.json", dumpJsonForFile(run.config.toJson()));
  writeText(dir / "run_info.json", dumpJsonForFile(toJson(run.info)));
  writeText(dir / "summary.json", dumpJsonForFile(toJson(run.result)));
  writeMetricsIfMissing(dir, run.steps);
  writeCharts(dir, {run});
  writeText(dir / "report.html", renderReportHtml({run}, "Precision Lab run: " + run.config.name));
  // Last: the index stamps the files above as they are now.
  report::indexRunFolder(dir);
}

void writeComparisonReport(const fs::path& dir, const std::vector<RunRecord>& runs) {
  makeDir(dir);
  std::set<std::string> used;
  std::string csv =
      "name,mode,status,steps_done,final_loss,final_val_loss,memory_bytes,memory_saved_fraction,"
      "training_peak_bytes,peak_saved_fraction,"
      "mean_update_lost,mean_update_error,mean_rounded_away_fraction,mean_tokens_per_second,folder,verdict\n";
  const std::vector<std::optional<size_t>> twins = report::fp32TwinIndices(runs);  // once: relating the runs is O(n)
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& r = runs[i];
    const auto ref = twins[i];
    const auto optional = [](const std::optional<double>& v) { return v ? nlohmann::json(*v).dump() : std::string(); };
    std::string folder = report::safeFileName(r.config.name);
    for (int i = 2; used.count(folder); ++i) folder = report::safeFileName(r.config.name) + "-" + std::to_string(i);
    used.insert(folder);
    writeRunReport(dir / "runs" / folder, r);
    const RunResult res = report::shownResult(r);  // what the reports show (report/run_figures.h)
    csv += csvField(r.config.name) + "," + optimizerModeId(r.config.mode) + "," + report::runStatusText(r) + "," +
           std::to_string(res.stepsDone) + "," + nlohmann::json(res.finalLoss).dump() + "," +
           (res.finalValLoss ? nlohmann::json(*res.finalValLoss).dump() : "") + "," +
           std::to_string(res.memory.total()) + "," + nlohmann::json(res.memorySavedFraction).dump() + "," +
           (res.trainingPeakBytes ? std::to_string(*res.trainingPeakBytes) : "") + "," +
           optional(report::measuredPeakSaving(r, ref ? &runs[*ref] : nullptr)) + "," +
           optional(res.meanUpdateLost) + "," + optional(res.meanUpdateError) + "," +
           nlohmann::json(res.meanRoundedAwayFraction).dump() + "," + nlohmann::json(res.meanTokensPerSecond).dump() +
           ",runs/" + folder + "," + csvField(report::comparisonVerdict(runs, i)) + "\n";
  }
  writeText(dir / "summary.csv", csv);
  writeCharts(dir, runs);
  writeText(dir / "report.html", renderReportHtml(runs, "Precision Lab comparison (" + std::to_string(runs.size()) + " runs)"));
}

}  // namespace plab
