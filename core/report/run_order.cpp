#include "report/run_order.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <tuple>

#include "report/fp32_twin.h"
#include "report/report_charts.h"
#include "util/utc_time.h"

namespace plab::report {
namespace {

bool digits(const std::string& s, size_t from, size_t count) {
  if (from + count > s.size()) return false;
  for (size_t i = from; i < from + count; ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

struct StartKey {
  int group = 0;          // 0: a folder without a stamp, 1: with one, 2: no folder yet
  std::string stamp;      // "YYYYMMDDHHMMSSmmm" (util/utc_time.h: sortableUtcStamp)
  long long ordinal = 1;  // createUniqueRunFolder's "-N" for a second folder in one second
  std::string path;
  bool operator<(const StartKey& o) const {
    return std::tie(group, stamp, ordinal, path) < std::tie(o.group, o.stamp, o.ordinal, o.path);
  }
};

// The "YYYYMMDDHHMMSS" of a name ending in "-YYYYMMDD-HHMMSS", else "".
std::string trailingStamp(const std::string& name) {
  if (name.size() < 16) return {};
  const size_t at = name.size() - 16;
  if (name[at] != '-' || !digits(name, at + 1, 8) || name[at + 9] != '-' || !digits(name, at + 10, 6)) return {};
  return name.substr(at + 1, 8) + name.substr(at + 10, 6);
}

StartKey startKey(const RunRecord& run) {
  StartKey key;
  if (run.config.output_dir.empty()) {
    key.group = 2;
    return key;
  }
  const std::filesystem::path dir = std::filesystem::path(run.config.output_dir).lexically_normal();
  key.path = dir.string();
  const std::string name = dir.has_filename() ? dir.filename().string() : dir.parent_path().filename().string();
  key.stamp = trailingStamp(name);
  if (key.stamp.empty()) {  // "<stamp>-N": the N-th folder made in that second
    const size_t dash = name.rfind('-');
    const size_t count = dash == std::string::npos ? 0 : name.size() - dash - 1;
    if (count >= 1 && count <= 4 && digits(name, dash + 1, count)) {
      key.stamp = trailingStamp(name.substr(0, dash));
      if (!key.stamp.empty()) key.ordinal = std::stoll(name.substr(dash + 1));
    }
  }
  // The folder name's stamp says the second, the run's own started_at the
  // millisecond: runs/<name>/ of a sweep and --out folders have only the latter.
  if (!key.stamp.empty()) key.stamp += "000";
  if (std::string started = sortableUtcStamp(run.info.startedAt); !started.empty()) {
    key.stamp = std::move(started);
    key.ordinal = 1;
  }
  key.group = key.stamp.empty() ? 0 : 1;
  return key;
}

}  // namespace

std::vector<size_t> startOrder(const std::vector<RunRecord>& runs) {
  std::vector<StartKey> keys;
  keys.reserve(runs.size());
  for (const RunRecord& r : runs) keys.push_back(startKey(r));
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  return order;
}

std::vector<std::string> uniqueFileStems(const std::vector<RunRecord>& runs) {
  std::vector<std::string> stems;
  std::set<std::string> used;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string base = safeFileName(runLabel(runs, i));
    std::string stem = base;
    for (int n = 2; used.count(stem); ++n) stem = base + "-" + std::to_string(n);
    used.insert(stem);
    stems.push_back(stem);
  }
  return stems;
}

}  // namespace plab::report
