#include "train/metrics_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "util/errors.h"
#include "util/json_file.h"

namespace plab {
namespace {

namespace fs = std::filesystem;

// Append-only: an existing file is never truncated or rewritten; the header
// goes only into a new (empty) file.
void writeHeader(RecordFile& out, const char* header) {
  if (out.size() == 0) out.append(std::string(header) + '\n');
}

// Whether an existing metrics.csv's header names mem_scales (a file written
// before the column existed does not; its rows keep its own layout). Reads at
// most the first 4 KiB: the header is one short line.
bool csvHeaderHasScales(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  const size_t end = head.find('\n');
  return head.substr(0, end).find("mem_scales") != std::string::npos;
}

// A number, or nan/inf for a non-finite one.
std::string cell(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  std::ostringstream s;
  s << std::setprecision(9) << v;
  return s.str();
}

// Empty: not measured at this step (never the last measured value again).
std::string optionalCell(const std::optional<double>& v) { return v ? cell(*v) : ""; }

}  // namespace

MetricsWriter::MetricsWriter(const fs::path& dir) : dir_(dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create output folder " + dir.string() + ": " + ec.message());
  jsonl_.open(dir / "metrics.jsonl");
  csv_.open(dir / "metrics.csv");
  layers_.open(dir / "layers.csv");
  csvHasScales_ = csv_.size() == 0 || csvHeaderHasScales(dir / "metrics.csv");
  writeHeader(csv_,
              "step,loss,val_loss,grad_norm,lr,rounded_away,update_ratio,update_lost,update_error,tokens_per_s,elapsed_s,"
              "mem_weights,mem_gradients,mem_moments,mem_master,mem_kahan,mem_scales,mem_total");
  writeHeader(layers_, "step,layer,rounded_away,update_ratio,update_lost,update_error");
}

void MetricsWriter::write(const StepMetrics& m) {
  // Each file's record is built whole first, then appended in one write.
  const std::string jsonl = toJson(m).dump() + '\n';

  std::ostringstream csv;
  csv << m.step << ',' << cell(m.loss) << ',' << (m.valLoss ? cell(*m.valLoss) : "") << ','
      << cell(m.gradNorm) << ',' << cell(m.lr) << ',' << optionalCell(m.roundedAwayFraction) << ','
      << optionalCell(m.updateRatio) << ',' << optionalCell(m.updateLost) << ',' << optionalCell(m.updateError) << ','
      << cell(m.tokensPerSecond) << ',' << cell(m.elapsedSeconds) << ','
      << m.memory.weights << ',' << m.memory.gradients << ','
      // An older file's mem_moments held the scales too, as its rows before did.
      << (csvHasScales_ ? m.memory.moments : m.memory.moments + m.memory.scales) << ',' << m.memory.master << ','
      << m.memory.kahan << ',';
  if (csvHasScales_) csv << m.memory.scales << ',';
  csv << m.memory.total() << '\n';

  // One row per layer: the per-step columns and, on window steps, the window's.
  std::vector<std::string> order;
  std::map<std::string, std::pair<const LayerStepMetrics*, const LayerWindowMetrics*>> rows;
  for (const LayerStepMetrics& l : m.layers) {
    if (!rows.count(l.layer)) order.push_back(l.layer);
    rows[l.layer].first = &l;
  }
  for (const LayerWindowMetrics& w : m.windowLayers) {
    if (!rows.count(w.layer)) order.push_back(w.layer);
    rows[w.layer].second = &w;
  }
  std::ostringstream layers;
  for (const std::string& layer : order) {
    const auto& [l, w] = rows[layer];
    layers << m.step << ',' << layer << ',' << (l ? cell(l->roundedAwayFraction) : "") << ','
           << (l ? cell(l->updateRatio) : "") << ',' << (w ? cell(w->updateLost) : "") << ','
           << (w ? cell(w->updateError) : "") << '\n';
  }

  // A step is in all three files or in none: a failed append truncates its
  // own file back, and the files already written take the step back too.
  RecordFile* files[] = {&jsonl_, &csv_, &layers_};
  const std::string records[] = {jsonl, csv.str(), layers.str()};
  off_t starts[3];
  for (int i = 0; i < 3; ++i) starts[i] = files[i]->size();
  for (int i = 0; i < 3; ++i) {
    try {
      files[i]->append(records[i]);
    } catch (const IoError& e) {
      const int reason = files[i]->lastError();
      std::string message = e.what();
      for (int j = 0; j < i; ++j) {
        try {
          files[j]->truncateTo(starts[j]);
        } catch (const IoError& undo) {
          message += "; " + std::string(undo.what());
        }
      }
      const bool full = reason == ENOSPC || reason == EDQUOT || reason == EFBIG;
      throw IoError((full ? "disk full at step " : "write failed at step ") + std::to_string(m.step) + ": " +
                    message);
    }
  }
}

std::vector<StepMetrics> readMetricsJsonl(const fs::path& file, size_t* skippedLines) {
  // Through the one reader of files read back (util/json_file.h): a regular
  // file only, lines of at most 1 MiB, no more than the file held when
  // opened. A line that is not a JSON record (torn by a crash, first,
  // middle or last) is skipped, and counted unless it is the last: one torn
  // line must not lose the run. A record that is JSON but not a valid step
  // is still refused.
  std::vector<StepMetrics> out;
  size_t skipped = 0, lineNumber = 0;
  bool lastSkipped = false;  // a torn last line is a killed (or running) run's normal end: not counted
  const std::string problem =
      forEachLine(file, kMaxJsonLineBytes, [&](std::string_view line, bool tooLong) {
        ++lineNumber;
        if (!tooLong && line.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank
        nlohmann::json j;
        lastSkipped = tooLong || !parseJsonText(line, j).empty();
        if (lastSkipped) {
          ++skipped;
          return;
        }
        try {
          out.push_back(stepMetricsFromJson(j));
        } catch (const ConfigError& e) {
          throw ConfigError(file.string() + ": line " + std::to_string(lineNumber) + ": " + e.what());
        }
      });
  if (!problem.empty()) throw IoError(file.string() + " " + problem);
  if (skippedLines) *skippedLines = lastSkipped ? skipped - 1 : skipped;
  return out;
}

}  // namespace plab
