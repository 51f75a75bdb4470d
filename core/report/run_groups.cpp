#include "report/run_groups.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "report/fp32_comparison.h"
#include "report/run_figures.h"

namespace plab::report {
namespace {

std::string trimmed(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// "default-bf16-s3" -> "default-bf16": the CLI's --seeds suffix.
std::string withoutSeedSuffix(const std::string& name) {
  const size_t dash = name.rfind("-s");
  if (dash == std::string::npos || dash + 2 >= name.size()) return name;
  for (size_t i = dash + 2; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  return name.substr(0, dash);
}

std::optional<PairedEstimate> estimate(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return pairedEstimate(values);
}

}  // namespace

Grouping parseGrouping(const std::string& text) {
  Grouping g;
  std::string t = trimmed(text);
  std::string lower = t;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (lower.empty() || lower == "none") return g;
  if (lower == "seeds" || lower == "seed family" || lower == "seed families") {
    g.kind = Grouping::Kind::SeedFamily;
    return g;
  }
  g.kind = Grouping::Kind::Fields;
  std::string part;
  for (char c : t + ",") {
    if (c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      if (!part.empty()) {
        const std::string field = canonicalField(part);
        if (std::find(g.fields.begin(), g.fields.end(), field) == g.fields.end()) g.fields.push_back(field);
      }
      part.clear();
    } else {
      part += c;
    }
  }
  if (g.fields.empty()) g.kind = Grouping::Kind::None;
  return g;
}

std::string groupingText(const Grouping& g) {
  switch (g.kind) {
    case Grouping::Kind::None: return "none";
    case Grouping::Kind::SeedFamily: return "seeds";
    case Grouping::Kind::Fields: {
      std::string out;
      for (const std::string& f : g.fields) out += (out.empty() ? "" : ", ") + f;
      return out;
    }
  }
  return "none";
}

std::vector<RunGroup> groupRuns(const std::vector<RunRecord>& all, const std::vector<const RunFields*>& fields,
                                const RunRelations& relations, const std::vector<size_t>& runs,
                                const Grouping& grouping) {
  std::vector<RunGroup> groups;
  std::unordered_map<std::string, size_t> at;
  for (size_t run : runs) {
    std::string key, label;
    switch (grouping.kind) {
      case Grouping::Kind::None:
        key = std::to_string(run);
        label = relations.labels.at(run);
        break;
      case Grouping::Kind::SeedFamily:
        key = relations.familyKeys.at(run);
        break;
      case Grouping::Kind::Fields:
        for (const std::string& f : grouping.fields) {
          const FieldValue* v = fields.at(run)->find(f);
          key += (v ? v->text : std::string("\x1f-")) + '\x1e';
          label += (label.empty() ? "" : " · ") + fieldValueLabel(f, v);
        }
        break;
    }
    const auto found = at.find(key);
    if (found == at.end()) {
      at.emplace(key, groups.size());
      groups.push_back({key, label, {run}});
    } else {
      groups[found->second].members.push_back(run);
    }
  }
  if (grouping.kind == Grouping::Kind::SeedFamily)
    for (RunGroup& g : groups) {
      const std::string base = withoutSeedSuffix(all.at(g.members.front()).config.name);
      g.label = g.members.size() == 1 ? relations.labels.at(g.members.front())
                                      : base + " × " + std::to_string(g.members.size()) + " seeds";
    }
  return groups;
}

GroupFigures groupFigures(const std::vector<RunRecord>& all, const RunRelations& relations,
                          const std::vector<size_t>& members) {
  GroupFigures g;
  g.count = static_cast<int>(members.size());
  std::vector<double> loss, val, lost, rounded, tokens, saved, memory, peak, gap;
  for (size_t i : members) {
    const RunRecord& run = all.at(i);
    const RunResult r = shownResult(run);
    const bool measured = r.stepsDone > 0 || !run.steps.empty();
    if (measured && std::isfinite(r.finalLoss)) loss.push_back(r.finalLoss);
    if (r.finalValLoss && std::isfinite(*r.finalValLoss)) val.push_back(*r.finalValLoss);
    if (r.meanUpdateLost && std::isfinite(*r.meanUpdateLost)) lost.push_back(*r.meanUpdateLost);
    if (measured) rounded.push_back(r.meanRoundedAwayFraction);
    if (r.meanTokensPerSecond > 0) tokens.push_back(r.meanTokensPerSecond);
    if (r.memory.total() > 0 && run.info.fp32Baseline.total() > 0) saved.push_back(r.memorySavedFraction);
    if (r.memory.total() > 0) memory.push_back(static_cast<double>(r.memory.total()));
    const auto twin = relations.twins.at(i);
    if (const auto p = measuredPeakSaving(run, twin ? &all.at(*twin) : nullptr); p && twin != i) peak.push_back(*p);
    if (run.config.mode != OptimizerMode::Fp32AdamW && twin && *twin != i) {
      if (const auto d = finalDifference(run, all.at(*twin))) {
        gap.push_back(d->delta);
        g.gapIsValidation = g.gapIsValidation && d->validation;
      }
    }
  }
  g.finalLoss = estimate(loss);
  g.finalValLoss = estimate(val);
  g.updateLost = estimate(lost);
  g.roundedAway = estimate(rounded);
  g.tokensPerSecond = estimate(tokens);
  g.stateSaved = estimate(saved);
  g.memoryBytes = estimate(memory);
  g.peakSaved = estimate(peak);
  g.gapToFp32 = estimate(gap);
  return g;
}

GroupTwinText groupFp32TwinText(const std::vector<RunRecord>& all, const RunRelations& relations,
                                const std::vector<size_t>& members) {
  if (members.empty()) return {"–", "No run of the group is shown by the filter"};
  std::vector<size_t> twins;  // distinct, in the order the members name them
  size_t fp32 = 0, measured = 0, byHand = 0;
  for (size_t i : members) {
    if (all.at(i).config.mode == OptimizerMode::Fp32AdamW) {
      ++fp32;
      continue;
    }
    const auto twin = relations.twins.at(i);
    if (!twin) continue;
    ++measured;
    byHand += all.at(i).fp32Reference.empty() ? 0 : 1;
    if (std::find(twins.begin(), twins.end(), *twin) == twins.end()) twins.push_back(*twin);
  }
  const size_t others = members.size() - fp32;
  if (others == 0) return {"themselves", "Every run of the group is an fp32 run: its own reference"};
  const std::string n = std::to_string(members.size());
  if (twins.empty())
    return {"no fp32 twin", "None of the group's " + std::to_string(others) +
                                " runs that are not fp32 has an fp32 run with its config except mode and plan"};
  const bool oneFamily = std::all_of(twins.begin(), twins.end(), [&](size_t t) {
    return relations.familyKeys.at(t) == relations.familyKeys.at(twins.front());
  });
  std::string cell = twins.size() == 1 ? relations.labels.at(twins.front())
                     : oneFamily
                         ? withoutSeedSuffix(all.at(twins.front()).config.name) + " × " + std::to_string(twins.size()) + " seeds"
                         : std::to_string(twins.size()) + " fp32 runs";
  if (measured < members.size()) cell += " (" + std::to_string(measured) + " of " + n + " runs)";
  std::string tip = "Each run is measured against its own fp32 twin (Verdict pairs them): ";
  for (size_t k = 0; k < twins.size() && k < 5; ++k) tip += (k ? ", " : "") + relations.labels.at(twins[k]);
  if (twins.size() > 5) tip += " and " + std::to_string(twins.size() - 5) + " more";
  if (byHand > 0) tip += "; " + std::to_string(byHand) + " of them chosen by hand";
  if (others > measured) tip += "; " + std::to_string(others - measured) + " runs have none";
  if (fp32 > 0) tip += "; " + std::to_string(fp32) + " fp32 runs are their own reference";
  return {cell, tip};
}

std::string estimateText(const PairedEstimate& e, int decimals, bool percent, bool signedLoss) {
  const double scale = percent ? 100.0 : 1.0;
  char buf[96];
  const double mean = e.mean * scale;
  const double half = (e.ciHigh - e.ciLow) / 2 * scale;
  std::snprintf(buf, sizeof buf, signedLoss ? "%+.*f" : "%.*f", decimals, mean);
  std::string text = buf;
  // No sign without a digit: "-0.0000" reads as a loss.
  if ((text[0] == '-' || text[0] == '+') && text.find_first_of("123456789") == std::string::npos)
    text = text.substr(1);
  if (e.pairs >= 2) {
    std::snprintf(buf, sizeof buf, " ± %.*f", decimals, half);
    text += buf;
  }
  if (percent) text += " %";
  return text;
}

}  // namespace plab::report
