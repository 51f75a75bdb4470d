#include "report/scalar_steps.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "util/base64.h"
#include "util/errors.h"

namespace plab::report {
namespace {

using nlohmann::json;

// One list of the scalar fields serves the writer and the reader.
struct DenseField {
  const char* key;
  double StepMetrics::*member;
};
constexpr DenseField kDense[] = {{"loss", &StepMetrics::loss},
                                 {"grad_norm", &StepMetrics::gradNorm},
                                 {"lr", &StepMetrics::lr},
                                 {"tokens_per_second", &StepMetrics::tokensPerSecond},
                                 {"elapsed_seconds", &StepMetrics::elapsedSeconds}};

struct OptionalField {
  const char* key;
  std::optional<double> StepMetrics::*member;
};
constexpr OptionalField kOptional[] = {{"val_loss", &StepMetrics::valLoss},
                                       {"rounded_away_fraction", &StepMetrics::roundedAwayFraction},
                                       {"update_ratio", &StepMetrics::updateRatio},
                                       {"update_lost", &StepMetrics::updateLost},
                                       {"update_error", &StepMetrics::updateError},
                                       {"update_lost_se", &StepMetrics::updateLostStdError},
                                       {"update_pending", &StepMetrics::updatePending},
                                       {"loss_scale", &StepMetrics::lossScale},
                                       {"grad_fp16_zero_share", &StepMetrics::gradFp16ZeroShare},
                                       {"grad_fp16_flush_share", &StepMetrics::gradFp16FlushShare}};

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// A dense column: its 64-bit values little-endian, in base64 (util/base64.h).
// Parsing a thousand runs' columns as JSON numbers was most of a listing's
// index reads; a double keeps every bit, NaN and infinities included.
template <class T>
std::string packColumn(const std::vector<StepMetrics>& steps, T value) {
  std::string bytes(steps.size() * 8, '\0');
  for (size_t i = 0; i < steps.size(); ++i) {
    const uint64_t v = value(steps[i]);
    for (int b = 0; b < 8; ++b) bytes[i * 8 + static_cast<size_t>(b)] = static_cast<char>((v >> (8 * b)) & 0xff);
  }
  return base64Encode(bytes);
}

uint64_t bitsOf(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// The column's values as 64-bit words; size: the steps' count (0: any).
std::vector<uint64_t> unpackColumn(const json& j, const std::string& key, size_t size, bool anySize = false) {
  if (!j.contains(key) || !j.at(key).is_string())
    throw ConfigError("scalar steps: '" + key + "' must be a base64 string of 64-bit values");
  const std::optional<std::string> bytes = base64Decode(j.at(key).get_ref<const std::string&>());
  if (!bytes || bytes->size() % 8 != 0)
    throw ConfigError("scalar steps: '" + key + "' is not base64 of 64-bit values");
  const size_t count = bytes->size() / 8;
  if (!anySize && count != size)
    throw ConfigError("scalar steps: '" + key + "' has " + std::to_string(count) + " entries for " +
                      std::to_string(size) + " steps");
  std::vector<uint64_t> words(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = v << 8 | static_cast<uint8_t>((*bytes)[i * 8 + static_cast<size_t>(b)]);
    words[i] = v;
  }
  return words;
}

double numberOf(const json& v, const std::string& what) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) throw ConfigError("scalar steps: " + what + " must hold numbers");
  return v.get<double>();
}

// {"at": [positions], "value": [...]}: positions strictly increasing and
// below `count`; calls onEntry(position, value) for each.
template <class OnEntry>
void readSparse(const json& j, const std::string& key, size_t count, const OnEntry& onEntry) {
  if (!j.contains(key)) return;
  const json& s = j.at(key);
  if (!s.is_object() || !s.contains("at") || !s.contains("value") || !s.at("at").is_array() ||
      !s.at("value").is_array() || s.at("at").size() != s.at("value").size())
    throw ConfigError("scalar steps: '" + key + "' must be {\"at\": [...], \"value\": [...]} of one length");
  int64_t previous = -1;
  for (size_t k = 0; k < s.at("at").size(); ++k) {
    const json& at = s.at("at")[k];
    if (!at.is_number_integer()) throw ConfigError("scalar steps: '" + key + "' positions must be integers");
    const int64_t position = at.get<int64_t>();
    if (position <= previous || position >= static_cast<int64_t>(count))
      throw ConfigError("scalar steps: '" + key + "' positions must increase and stay below " + std::to_string(count));
    previous = position;
    onEntry(static_cast<size_t>(position), s.at("value")[k]);
  }
}

}  // namespace

StepMetrics scalarStep(const StepMetrics& m) {
  StepMetrics s;
  s.step = m.step;
  for (const DenseField& f : kDense) s.*(f.member) = m.*(f.member);
  for (const OptionalField& f : kOptional) s.*(f.member) = m.*(f.member);
  s.stepSkipped = m.stepSkipped;
  s.memory = m.memory;
  return s;
}

std::vector<StepMetrics> scalarSteps(const std::vector<StepMetrics>& steps) {
  std::vector<StepMetrics> out;
  out.reserve(steps.size());
  for (const StepMetrics& m : steps) out.push_back(scalarStep(m));
  return out;
}

json scalarStepsToJson(const std::vector<StepMetrics>& steps) {
  json j = json::object();
  j["step"] = packColumn(steps, [](const StepMetrics& m) { return static_cast<uint64_t>(m.step); });
  for (const DenseField& f : kDense) j[f.key] = packColumn(steps, [&](const StepMetrics& m) { return bitsOf(m.*(f.member)); });
  const auto sparse = [&](const char* key, auto has, auto value) {
    json at = json::array(), values = json::array();
    for (size_t i = 0; i < steps.size(); ++i)
      if (has(steps[i])) {
        at.push_back(i);
        values.push_back(value(steps[i]));
      }
    if (!at.empty()) j[key] = {{"at", std::move(at)}, {"value", std::move(values)}};
  };
  for (const OptionalField& f : kOptional)
    sparse(f.key, [&](const StepMetrics& m) { return (m.*(f.member)).has_value(); },
           [&](const StepMetrics& m) { return number(*(m.*(f.member))); });
  sparse("step_skipped", [](const StepMetrics& m) { return m.stepSkipped.has_value(); },
         [](const StepMetrics& m) { return json(*m.stepSkipped); });
  // The measured state rarely changes after step 1: written where it does.
  json at = json::array(), memory = json::array();
  for (size_t i = 0; i < steps.size(); ++i) {
    const MemoryBreakdown& m = steps[i].memory;
    const bool same = i > 0 && json(toJson(m)) == memory.back();
    if (same) continue;
    at.push_back(i);
    memory.push_back(toJson(m));
  }
  j["memory"] = {{"at", std::move(at)}, {"value", std::move(memory)}};
  return j;
}

std::vector<StepMetrics> scalarStepsFromJson(const json& j) {
  if (!j.is_object()) throw ConfigError("scalar steps: expected an object");
  const std::vector<uint64_t> numbers = unpackColumn(j, "step", 0, /*anySize=*/true);
  std::vector<StepMetrics> steps(numbers.size());
  int64_t previous = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i].step = static_cast<int64_t>(numbers[i]);
    if (steps[i].step <= previous) throw ConfigError("scalar steps: step numbers must increase from 1");
    previous = steps[i].step;
  }
  for (const DenseField& f : kDense) {
    const std::vector<uint64_t> column = unpackColumn(j, f.key, steps.size());
    for (size_t i = 0; i < steps.size(); ++i) std::memcpy(&(steps[i].*(f.member)), &column[i], sizeof(double));
  }
  for (const OptionalField& f : kOptional)
    readSparse(j, f.key, steps.size(),
               [&](size_t i, const json& v) { steps[i].*(f.member) = numberOf(v, f.key); });
  readSparse(j, "step_skipped", steps.size(), [&](size_t i, const json& v) {
    if (!v.is_boolean()) throw ConfigError("scalar steps: 'step_skipped' must hold true or false");
    steps[i].stepSkipped = v.get<bool>();
  });
  if (!steps.empty() && !j.contains("memory")) throw ConfigError("scalar steps: 'memory' is missing");
  std::optional<MemoryBreakdown> current;
  size_t next = 0;
  readSparse(j, "memory", steps.size(), [&](size_t i, const json& v) {
    if (i > 0 && !current) throw ConfigError("scalar steps: 'memory' must start at the first step");
    for (; next < i; ++next) steps[next].memory = *current;
    current = memoryBreakdownFromJson(v);
  });
  for (; next < steps.size() && current; ++next) steps[next].memory = *current;
  return steps;
}

}  // namespace plab::report
