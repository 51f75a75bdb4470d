#include "train/metrics_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "util/errors.h"

namespace plab {
namespace {

namespace fs = std::filesystem;

std::string systemReason() {
  return errno != 0 ? std::string(std::strerror(errno)) : std::string("write failed");
}

// Append-only: an existing file is never truncated or rewritten; the header
// goes only into a new (empty) file.
void openFile(std::ofstream& out, const fs::path& file, const char* header) {
  errno = 0;
  out.open(file, std::ios::out | std::ios::app);
  if (!out) throw IoError("cannot open " + file.string() + " for writing: " + systemReason());
  std::error_code ec;
  const bool fresh = !fs::is_regular_file(file, ec) || fs::file_size(file, ec) == 0;
  if (header && fresh) out << header << '\n';
  out.flush();
  if (!out) throw IoError("cannot write " + file.string() + ": " + systemReason());
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

void flushOrThrow(std::ofstream& out, const fs::path& file) {
  errno = 0;
  out.flush();
  if (!out) throw IoError("cannot write " + file.string() + ": " + systemReason());
}

}  // namespace

MetricsWriter::MetricsWriter(const fs::path& dir) : dir_(dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create output folder " + dir.string() + ": " + ec.message());
  openFile(jsonl_, dir / "metrics.jsonl", nullptr);
  openFile(csv_, dir / "metrics.csv",
           "step,loss,val_loss,grad_norm,lr,rounded_away,update_ratio,update_lost,update_error,tokens_per_s,elapsed_s,"
           "mem_weights,mem_gradients,mem_moments,mem_master,mem_kahan,mem_total");
  openFile(layers_, dir / "layers.csv", "step,layer,rounded_away,update_ratio,update_lost,update_error");
}

void MetricsWriter::write(const StepMetrics& m) {
  jsonl_ << toJson(m).dump() << '\n';
  flushOrThrow(jsonl_, dir_ / "metrics.jsonl");

  csv_ << m.step << ',' << cell(m.loss) << ',' << (m.valLoss ? cell(*m.valLoss) : "") << ','
       << cell(m.gradNorm) << ',' << cell(m.lr) << ',' << optionalCell(m.roundedAwayFraction) << ','
       << optionalCell(m.updateRatio) << ',' << optionalCell(m.updateLost) << ',' << optionalCell(m.updateError) << ','
       << cell(m.tokensPerSecond) << ',' << cell(m.elapsedSeconds) << ','
       << m.memory.weights << ',' << m.memory.gradients << ',' << m.memory.moments << ','
       << m.memory.master << ',' << m.memory.kahan << ',' << m.memory.total() << '\n';
  flushOrThrow(csv_, dir_ / "metrics.csv");

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
  for (const std::string& layer : order) {
    const auto& [l, w] = rows[layer];
    layers_ << m.step << ',' << layer << ',' << (l ? cell(l->roundedAwayFraction) : "") << ','
            << (l ? cell(l->updateRatio) : "") << ',' << (w ? cell(w->updateLost) : "") << ','
            << (w ? cell(w->updateError) : "") << '\n';
  }
  flushOrThrow(layers_, dir_ / "layers.csv");
}

std::vector<StepMetrics> readMetricsJsonl(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw IoError("cannot read " + file.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::vector<StepMetrics> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    const bool last = i + 1 == lines.size();
    if (j.is_discarded()) {
      if (last) break;  // torn by a crash mid-write
      throw ConfigError(file.string() + ": line " + std::to_string(i + 1) + " is not valid JSON");
    }
    try {
      out.push_back(stepMetricsFromJson(j));
    } catch (const ConfigError& e) {
      throw ConfigError(file.string() + ": line " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  return out;
}

}  // namespace plab
