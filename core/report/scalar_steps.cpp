#include "report/scalar_steps.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

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
// The step number and each dense field: a column of 8 bytes a step.
static_assert(kPackedStepBytes == 8 * (1 + sizeof(kDense) / sizeof(kDense[0])));

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

json finiteOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double numberField(const json& v, const std::string& what) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) throw ConfigError("scalar steps: " + what + " must hold numbers");
  return v.get<double>();
}

uint64_t bitsOf(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

void putWord(std::string& out, uint64_t v) {
  for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
}

uint64_t wordAt(std::string_view bytes, size_t i) {
  uint64_t v = 0;
  for (int b = 7; b >= 0; --b) v = v << 8 | static_cast<uint8_t>(bytes[i * 8 + static_cast<size_t>(b)]);
  return v;
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

PackedSteps packScalarSteps(const std::vector<StepMetrics>& steps) {
  PackedSteps packed;
  packed.columns.reserve(steps.size() * kPackedStepBytes);
  for (const StepMetrics& m : steps) putWord(packed.columns, static_cast<uint64_t>(m.step));
  for (const DenseField& f : kDense)
    for (const StepMetrics& m : steps) putWord(packed.columns, bitsOf(m.*(f.member)));
  json& j = packed.sparse;
  j = json::object();
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
           [&](const StepMetrics& m) { return finiteOrNull(*(m.*(f.member))); });
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
  return packed;
}

std::vector<StepMetrics> unpackScalarSteps(const json& j, std::string_view columns) {
  if (!j.is_object()) throw ConfigError("scalar steps: expected an object");
  if (columns.size() % kPackedStepBytes != 0)
    throw ConfigError("scalar steps: the columns hold " + std::to_string(columns.size()) + " bytes, not whole steps of " +
                      std::to_string(kPackedStepBytes));
  const size_t count = columns.size() / kPackedStepBytes;
  std::vector<StepMetrics> steps(count);
  int64_t previous = 0;
  for (size_t i = 0; i < count; ++i) {
    steps[i].step = static_cast<int64_t>(wordAt(columns, i));
    if (steps[i].step <= previous) throw ConfigError("scalar steps: step numbers must increase from 1");
    previous = steps[i].step;
  }
  size_t column = 1;
  for (const DenseField& f : kDense) {
    for (size_t i = 0; i < count; ++i) {
      const uint64_t bits = wordAt(columns, column * count + i);
      std::memcpy(&(steps[i].*(f.member)), &bits, sizeof(double));
    }
    ++column;
  }
  for (const OptionalField& f : kOptional)
    readSparse(j, f.key, steps.size(),
               [&](size_t i, const json& v) { steps[i].*(f.member) = numberField(v, f.key); });
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
