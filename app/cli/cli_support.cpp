#include "cli_support.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>

namespace plab::cli {

bool Args::flag(const std::string& name) {
  for (auto it = args_.begin(); it != args_.end(); ++it)
    if (*it == name) {
      args_.erase(it);
      return true;
    }
  return false;
}

std::optional<std::string> Args::value(const std::string& name) {
  for (auto it = args_.begin(); it != args_.end(); ++it) {
    if (*it == name) {
      if (it + 1 == args_.end()) throw UsageError("option " + name + " needs a value");
      std::string v = *(it + 1);
      args_.erase(it, it + 2);
      return v;
    }
    if (it->rfind(name + "=", 0) == 0) {
      std::string v = it->substr(name.size() + 1);
      args_.erase(it);
      return v;
    }
  }
  return std::nullopt;
}

std::optional<long long> Args::intValue(const std::string& name, long long min) {
  const auto v = value(name);
  if (!v) return std::nullopt;
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(*v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v->size()) throw UsageError("option " + name + " expects an integer, got '" + *v + "'");
  if (n < min) throw UsageError("option " + name + " must be >= " + std::to_string(min));
  return n;
}

std::vector<std::string> Args::positionals(size_t maxPositionals) {
  for (const std::string& a : args_)
    if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option '" + a + "'");
  if (args_.size() > maxPositionals)
    throw UsageError("unexpected argument '" + args_[maxPositionals] + "'");
  return args_;
}

bool stderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

std::vector<unsigned long long> parseSeedList(const std::string& text, size_t maxSeeds, const std::string& option) {
  std::vector<unsigned long long> seeds;
  const std::string most = option + ": at most " + std::to_string(maxSeeds) + " seeds";
  if (text.size() > 64 * maxSeeds) throw UsageError(most);  // before anything is split
  std::stringstream parts(text);
  const auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError(option + ": '" + s.substr(0, 40) + "' is not a seed (a whole number)");
    return std::stoull(s);
  };
  for (std::string part; std::getline(parts, part, ',');) {
    const size_t dash = part.find('-');
    const unsigned long long first = number(part.substr(0, dash));
    const unsigned long long last = dash == std::string::npos ? first : number(part.substr(dash + 1));
    if (last < first) throw UsageError(option + ": the range '" + part + "' runs backwards");
    if (last - first >= maxSeeds || seeds.size() + (last - first) >= maxSeeds) throw UsageError(most);
    for (unsigned long long s = first; s <= last; ++s) seeds.push_back(s);
  }
  if (seeds.empty()) throw UsageError(option + ": no seed given");
  std::sort(seeds.begin(), seeds.end());
  if (const auto twice = std::adjacent_find(seeds.begin(), seeds.end()); twice != seeds.end())
    throw UsageError(option + ": seed " + std::to_string(*twice) + " is listed twice");
  return seeds;
}

std::optional<double> parseDecimal(const std::string& text) {
  if (text.empty() || text.size() > 64 || text.find_first_not_of("0123456789.eE+-") != std::string::npos ||
      text.find_first_of("0123456789") == std::string::npos)
    return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;  // out of range ("1e999") or not a number
  }
}

}  // namespace plab::cli
