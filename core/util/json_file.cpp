#include "util/json_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/json_limits.h"
#include "util/regular_file.h"

namespace plab {
namespace {

std::string errnoMessage(const char* what) { return std::string(what) + " (" + std::strerror(errno) + ")"; }

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens path only when it is (or links to) a regular file: the type is
// checked before open (a device is never opened), and again on the open
// descriptor (the file may have been swapped in between). O_NONBLOCK so
// that even a FIFO swapped in never blocks the open. On success st holds
// the file's size at open.
bool openRegular(const std::filesystem::path& path, Fd& file, struct stat& st, std::string& problem,
                 bool& missing) {
  missing = false;
  if (::stat(path.c_str(), &st) != 0) {
    missing = errno == ENOENT;
    problem = missing ? "is missing" : errnoMessage("cannot stat");
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    problem = notRegularFileReason(st.st_mode);
    return false;
  }
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (file.fd < 0) {
    missing = errno == ENOENT;
    problem = missing ? "is missing" : errnoMessage("cannot open");
    return false;
  }
  if (::fstat(file.fd, &st) != 0) {
    problem = errnoMessage("cannot stat");
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    problem = notRegularFileReason(st.st_mode);
    return false;
  }
  return true;
}

// read(2) that retries on EINTR; -1 on error.
ssize_t readSome(int fd, char* buffer, size_t size) {
  for (;;) {
    const ssize_t n = ::read(fd, buffer, size);
    if (n >= 0 || errno != EINTR) return n;
  }
}

}  // namespace

std::string utf8Problem(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte (no overlongs, surrogates, > U+10FFFF)
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    }
    bool valid = len != 0 && i + len <= n && s[i + 1] >= lo && s[i + 1] <= hi;
    for (size_t k = 2; valid && k < len; ++k) valid = s[i + k] >= 0x80 && s[i + k] <= 0xBF;
    if (!valid) return "is not valid UTF-8 (at byte " + std::to_string(i) + ")";
    i += len;
  }
  return {};
}

std::string parseJsonText(std::string_view text, nlohmann::json& value) {
  if (std::string problem = utf8Problem(text); !problem.empty()) return problem;
  if (std::string problem = jsonNestingProblem(text); !problem.empty()) return "has " + problem;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    value = nullptr;
    return "is not valid JSON: " + jsonErrorText(e, text);
  }
  return {};
}

JsonFile readJsonFile(const std::filesystem::path& path, std::uint64_t maxBytes, bool refuseDuplicateKeys) {
  JsonFile out;
  Fd file;
  struct stat st {};
  bool missing = false;
  if (!openRegular(path, file, st, out.problem, missing)) {
    out.status = missing ? JsonFileStatus::Missing : JsonFileStatus::Refused;
    return out;
  }
  out.status = JsonFileStatus::Refused;
  const auto tooBig = [&](std::uint64_t size) {
    out.problem = "is " + fileSizeText(size) + ", over the " + fileSizeText(maxBytes) + " limit for this file";
  };
  if (static_cast<std::uint64_t>(st.st_size) > maxBytes) {
    tooBig(static_cast<std::uint64_t>(st.st_size));
    return out;
  }
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = readSome(file.fd, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      out.problem = errnoMessage("cannot read");
      return out;
    }
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > maxBytes) {  // grew since it was opened
      tooBig(text.size());
      return out;
    }
  }
  if (std::string problem = utf8Problem(text); !problem.empty()) {
    out.problem = problem;
    return out;
  }
  if (std::string problem = jsonNestingProblem(text); !problem.empty()) {
    out.problem = "has " + problem;
    return out;
  }
  try {
    out.value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    out.value = nullptr;
    out.status = JsonFileStatus::Malformed;
    out.problem = "is not valid JSON: " + jsonErrorText(e, text);
    return out;
  }
  if (refuseDuplicateKeys)
    if (const std::string twice = jsonDuplicateKey(text); !twice.empty()) {
      out.value = nullptr;
      out.status = JsonFileStatus::Malformed;
      out.problem = "gives '" + twice + "' twice (each field may appear once)";
      return out;
    }
  out.status = JsonFileStatus::Read;
  return out;
}

std::string forEachLine(const std::filesystem::path& path, std::uint64_t maxLineBytes,
                        const std::function<void(std::string_view line, bool tooLong)>& onLine) {
  Fd file;
  struct stat st {};
  bool missing = false;
  std::string problem;
  if (!openRegular(path, file, st, problem, missing)) return problem;
  std::uint64_t left = static_cast<std::uint64_t>(st.st_size);  // a file still growing is read up to here
  std::string line;
  bool tooLong = false;
  char buffer[1 << 16];
  while (left > 0) {
    const ssize_t n = readSome(file.fd, buffer, static_cast<size_t>(std::min<std::uint64_t>(sizeof buffer, left)));
    if (n == 0) break;  // shrank since it was opened
    if (n < 0) return errnoMessage("cannot read");
    left -= static_cast<std::uint64_t>(n);
    std::string_view chunk(buffer, static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t end = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, end);
      if (!tooLong) {
        if (line.size() + piece.size() > maxLineBytes) {
          tooLong = true;
          line.clear();
          line.shrink_to_fit();
        } else {
          line.append(piece);
        }
      }
      if (end == std::string_view::npos) break;
      onLine(tooLong ? std::string_view() : std::string_view(line), tooLong);
      line.clear();
      tooLong = false;
      chunk.remove_prefix(end + 1);
    }
  }
  if (tooLong || !line.empty()) onLine(tooLong ? std::string_view() : std::string_view(line), tooLong);
  return {};
}

}  // namespace plab
