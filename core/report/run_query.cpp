#include "report/run_query.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>

namespace plab::report {
namespace {

std::string foldedQuery(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<double> parsedNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Whitespace-separated, with "..." keeping spaces (the quotes are dropped).
std::vector<std::string> tokens(const std::string& text) {
  std::vector<std::string> out;
  std::string current;
  bool quoted = false, any = false;
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && std::isspace(static_cast<unsigned char>(c))) {
      if (any) out.push_back(current);
      current.clear();
      any = false;
    } else {
      current += c;
      any = true;
    }
  }
  if (any) out.push_back(current);
  return out;
}

bool fieldCharacter(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; }

// Fields every run has (a default config's paths, the aliases and figures),
// and the prefixes whose children are per-layer paths.
bool knownField(const std::string& path) {
  static const std::set<std::string> known = [] {
    std::set<std::string> k;
    RunRecord blank;
    for (const auto& [name, value] : runFields(blank, "", "").values) k.insert(name);
    for (const auto& [alias, target] : fieldAliases()) k.insert(target.empty() ? alias : target);
    for (const char* optional : {"loss_scale.init_scale", "loss_scale.growth_interval", "shadow_recipes",
                                 "shadow_gemm_formats", "plan.gemm_format"})
      k.insert(optional);
    return k;
  }();
  if (known.count(path)) return true;
  for (const char* prefix : {"plan.overrides.", "plan.gemm_formats.", "plan.recipes.", "plan.moments."})
    if (path.rfind(prefix, 0) == 0) return true;
  return false;
}

bool compare(RunQuery::Op op, double a, double b) {
  const bool equal = a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
  switch (op) {
    case RunQuery::Op::Contains:
    case RunQuery::Op::Equal: return equal;
    case RunQuery::Op::NotEqual: return !equal;
    case RunQuery::Op::Less: return a < b && !equal;
    case RunQuery::Op::LessEqual: return a < b || equal;
    case RunQuery::Op::Greater: return a > b && !equal;
    case RunQuery::Op::GreaterEqual: return a > b || equal;
    case RunQuery::Op::Word: return false;
  }
  return false;
}

bool termMatches(const RunQuery::Term& t, const RunFields& run) {
  if (t.op == RunQuery::Op::Word) return run.words.find(t.value) != std::string::npos;
  const auto it = run.values.find(t.field);
  if (it == run.values.end()) return t.op == RunQuery::Op::NotEqual;  // a run without the field differs from any value
  const FieldValue& v = it->second;
  if (v.number && t.number) return compare(t.op, *v.number, *t.number);
  switch (t.op) {
    case RunQuery::Op::Contains: return v.folded.find(t.value) != std::string::npos;
    case RunQuery::Op::Equal: return v.folded == t.value;
    case RunQuery::Op::NotEqual: return v.folded != t.value;
    default: return false;  // an order on text or on a missing number: no match
  }
}

}  // namespace

RunQuery parseRunQuery(const std::string& text) {
  RunQuery q;
  for (std::string token : tokens(text)) {
    RunQuery::Term t;
    if (token.size() > 1 && token[0] == '-') {
      t.exclude = true;
      token.erase(0, 1);
    }
    size_t nameEnd = 0;
    while (nameEnd < token.size() && fieldCharacter(token[nameEnd])) ++nameEnd;
    static const std::pair<const char*, RunQuery::Op> kOps[] = {
        {"<=", RunQuery::Op::LessEqual}, {">=", RunQuery::Op::GreaterEqual}, {"!=", RunQuery::Op::NotEqual},
        {":", RunQuery::Op::Contains},   {"=", RunQuery::Op::Equal},         {"<", RunQuery::Op::Less},
        {">", RunQuery::Op::Greater}};
    bool isField = false;
    if (nameEnd > 0 && nameEnd < token.size()) {
      for (const auto& [symbol, op] : kOps) {
        if (token.compare(nameEnd, std::string(symbol).size(), symbol) != 0) continue;
        t.op = op;
        t.field = canonicalField(token.substr(0, nameEnd));
        t.value = foldedQuery(token.substr(nameEnd + std::string(symbol).size()));
        isField = true;
        break;
      }
    }
    if (!isField) {
      t.op = RunQuery::Op::Word;
      t.value = foldedQuery(token);
    } else if (!knownField(t.field) &&
               std::find(q.unknownFields.begin(), q.unknownFields.end(), t.field) == q.unknownFields.end()) {
      q.unknownFields.push_back(t.field);
    }
    t.number = parsedNumber(t.value);
    if (!t.value.empty() || t.op != RunQuery::Op::Word) q.terms.push_back(std::move(t));
  }
  return q;
}

bool matchesQuery(const RunQuery& query, const RunFields& run) {
  for (const RunQuery::Term& t : query.terms)
    if (termMatches(t, run) == t.exclude) return false;
  return true;
}

}  // namespace plab::report
