#include "cli_support.h"

#include <unistd.h>

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

}  // namespace plab::cli
