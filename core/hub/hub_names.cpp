#include "hub/hub_names.h"

#include <cctype>

#include "util/errors.h"

namespace plab {

namespace {

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool validRepoPart(const std::string& part) {
  if (part.empty() || part.size() > 96) return false;
  for (char c : part)
    if (!isWordChar(c) && c != '-' && c != '.') return false;
  return isWordChar(part.front()) && isWordChar(part.back());
}

bool hasSuffix(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Bad names are shown short and with odd bytes escaped: they come from users
// and servers.
std::string shown(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f) {
      static const char* const kHex = "0123456789abcdef";
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    } else {
      out += char(c);
    }
  }
  return s.size() > 80 ? out + "..." : out;
}

}  // namespace

void validateRepoId(const std::string& repoId) {
  const size_t slash = repoId.find('/');
  const bool twoParts = slash != std::string::npos;
  const bool ok = !repoId.empty() && repoId.find("--") == std::string::npos &&
                  repoId.find("..") == std::string::npos && !hasSuffix(repoId, ".git") &&
                  (twoParts ? validRepoPart(repoId.substr(0, slash)) && validRepoPart(repoId.substr(slash + 1))
                            : validRepoPart(repoId));
  if (!ok)
    throw ConfigError("invalid repository id '" + shown(repoId) +
                      "': expected 'name' or 'org/name' of letters, digits, '-', '_' and '.'");
}

void validateRevision(const std::string& revision) {
  bool ok = !revision.empty() && revision.size() <= 255 && revision != "@" && revision.front() != '/' &&
            revision.back() != '/' && revision.back() != '.' && revision.find("..") == std::string::npos &&
            revision.find("//") == std::string::npos && revision.find("@{") == std::string::npos;
  for (char ch : revision) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || c == ' ' || std::string("~^:?*[\\").find(char(c)) != std::string::npos) ok = false;
  }
  for (size_t start = 0; ok && start < revision.size();) {
    size_t end = revision.find('/', start);
    if (end == std::string::npos) end = revision.size();
    const std::string part = revision.substr(start, end - start);
    if (part.empty() || part.front() == '.' || hasSuffix(part, ".lock")) ok = false;
    start = end + 1;
  }
  if (!ok) throw ConfigError("invalid revision '" + shown(revision) + "': expected a branch, tag or commit name");
}

}  // namespace plab
