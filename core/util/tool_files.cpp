#include "util/tool_files.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "util/errors.h"
#include "util/hf_file_names.h"

namespace plab {
namespace fs = std::filesystem;

namespace {

// The kinds of folder the tool writes, each with its own names.
enum class ToolFileKind { None, Run, Charts, Checkpoint, Runs };

bool allDigits(std::string_view s) {
  if (s.empty() || s.size() > 12) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool nameEndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

bool nameStartsWith(std::string_view s, std::string_view head) { return s.substr(0, head.size()) == head; }

// checkpoint-<step>, as the trainer names them (not checkpoint-final).
bool isCheckpointName(std::string_view name) { return nameStartsWith(name, "checkpoint-") && allDigits(name.substr(11)); }

// A temporary the tool writes while replacing a file: "<base>.tmp.<pid>"
// (safetensors, checkpoint config), ".<base>.tmp-<pid>-<n>" (atomic_file),
// ".tokens-<pid>-<n>.tmp" (token store), ".metrics-tmp-<pid>" and
// ".qt-report-tmp-<pid>" (report folders).
struct Temporary {
  std::string base;  // the file it replaces; "" for the token store's and the report folders
  long pid = 0;
};

std::optional<Temporary> temporaryOf(std::string_view name) {
  if (const auto dot = name.rfind(".tmp."); dot != std::string_view::npos && dot > 0 && allDigits(name.substr(dot + 5)))
    return Temporary{std::string(name.substr(0, dot)), std::stol(std::string(name.substr(dot + 5)))};
  if (nameStartsWith(name, ".") && !nameStartsWith(name, ".tokens-")) {
    if (const auto dash = name.rfind(".tmp-"); dash != std::string_view::npos && dash > 1) {
      const std::string_view rest = name.substr(dash + 5);
      const auto sep = rest.find('-');
      if (sep != std::string_view::npos && allDigits(rest.substr(0, sep)) && allDigits(rest.substr(sep + 1)))
        return Temporary{std::string(name.substr(1, dash - 1)), std::stol(std::string(rest.substr(0, sep)))};
    }
  }
  if (nameStartsWith(name, ".tokens-") && nameEndsWith(name, ".tmp")) {
    const std::string_view rest = name.substr(8, name.size() - 12);
    const auto sep = rest.find('-');
    if (sep != std::string_view::npos && allDigits(rest.substr(0, sep)) && allDigits(rest.substr(sep + 1)))
      return Temporary{"", std::stol(std::string(rest.substr(0, sep)))};
  }
  for (std::string_view prefix : {std::string_view(".metrics-tmp-"), std::string_view(".qt-report-tmp-")})
    if (nameStartsWith(name, prefix) && allDigits(name.substr(prefix.size())))
      return Temporary{"", std::stol(std::string(name.substr(prefix.size())))};
  return std::nullopt;
}

bool isReportTemporaryFolder(std::string_view name) {
  return nameStartsWith(name, ".metrics-tmp-") || nameStartsWith(name, ".qt-report-tmp-");
}

// The files the tool writes in a folder of this kind (not counting temporaries).
bool isToolFileName(ToolFileKind kind, std::string_view name) {
  switch (kind) {
    case ToolFileKind::Run:
      for (const char* n : {"config.json", "run_info.json", "summary.json", "summary.csv", "metrics.jsonl",
                            "metrics.csv", "layers.csv", "report.html", "report.pdf", "display.json", "index.json",
                            "index.columns",
                            ".summary-reserve", ".precision-lab-run", ".precision-lab.lock",
                            // advise's folder
                            "advice.json", "plan.json", "plan-gemm.json", "frontier.svg"})
        if (name == n) return true;
      return false;
    case ToolFileKind::Charts:
      return nameEndsWith(name, ".svg") || nameEndsWith(name, ".png");
    case ToolFileKind::Checkpoint:
      for (const char* n : {"model.safetensors", "optimizer.safetensors", "trainer_state.json", "config.json",
                            "checksums.json"})
        if (name == n) return true;
      for (const char* n : kHfModelFileNames)
        if (name == n) return true;
      return false;
    default:
      return false;
  }
}

bool isToolTemporary(ToolFileKind kind, std::string_view name) {
  const std::optional<Temporary> t = temporaryOf(name);
  if (!t) return false;
  if (t->base.empty()) return kind == ToolFileKind::Run;  // token files and report folders sit in a run's folder
  return isToolFileName(kind, t->base);
}

// What a real sub-folder of a folder of this kind is, when the tool made it.
ToolFileKind subFolderKind(ToolFileKind kind, std::string_view name) {
  if (kind == ToolFileKind::Runs) return ToolFileKind::Run;  // runs/<run>/: one per run of a sweep
  if (kind != ToolFileKind::Run) return ToolFileKind::None;
  if (name == "charts") return ToolFileKind::Charts;
  if (name == "runs") return ToolFileKind::Runs;
  if (isCheckpointName(name)) return ToolFileKind::Checkpoint;
  if (isReportTemporaryFolder(name) && temporaryOf(name)) return ToolFileKind::Run;
  return ToolFileKind::None;
}

// A link, file, FIFO... at a name where the tool writes a folder: the entry
// itself goes (a link is never followed).
bool isToolFolderName(ToolFileKind kind, std::string_view name) {
  return kind == ToolFileKind::Run && (name == "charts" || name == "runs" || isCheckpointName(name) ||
                               (isReportTemporaryFolder(name) && temporaryOf(name)));
}

fs::file_status entryStatus(const fs::path& p) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(p, ec);  // never follows a link
  if (ec) throw IoError("cannot inspect " + p.string() + ": " + ec.message());
  return st;
}

std::vector<fs::path> folderEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  if (ec) throw IoError("cannot list " + dir.string() + ": " + ec.message());
  return out;
}

// unlink(2) for anything but a real folder: a link goes, its target stays.
void removeEntry(const fs::path& p) {
  if (::unlink(p.c_str()) != 0 && errno != ENOENT)
    throw IoError("cannot remove " + p.string() + ": " + std::strerror(errno));
}

void removeEmptyFolder(const fs::path& p) {
  if (::rmdir(p.c_str()) != 0 && errno != ENOENT)
    throw IoError("cannot remove " + p.string() + ": " + std::strerror(errno));
}

bool isEmptyFolder(const fs::path& p) {
  std::error_code ec;
  return fs::is_empty(p, ec) && !ec;
}

void clear(const fs::path& dir, ToolFileKind kind, bool top, const fs::path& relative, std::vector<fs::path>& kept) {
  for (const fs::path& entry : folderEntries(dir)) {
    const std::string name = entry.filename().string();
    const fs::path rel = relative / name;
    // The top folder's lock and marker belong to the caller.
    if (top && (name == ".precision-lab-run" || name == ".precision-lab.lock")) continue;
    const fs::file_status st = entryStatus(entry);
    if (fs::is_directory(st)) {  // a real folder: symlink_status never calls a link one
      const ToolFileKind sub = subFolderKind(kind, name);
      if (sub == ToolFileKind::None) {
        kept.push_back(rel);
        continue;
      }
      clear(entry, sub, false, rel, kept);
      if (isEmptyFolder(entry)) removeEmptyFolder(entry);
    } else if (isToolFileName(kind, name) || isToolTemporary(kind, name) || isToolFolderName(kind, name)) {
      removeEntry(entry);
    } else {
      kept.push_back(rel);
    }
  }
}

bool processIsGone(long pid) {
  if (pid <= 0) return false;
  if (pid == static_cast<long>(::getpid())) return false;  // this process may be writing it now
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

int removeStale(const fs::path& dir, ToolFileKind kind) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path entry = it->path();
    const std::string name = entry.filename().string();
    std::error_code stEc;
    const fs::file_status st = fs::symlink_status(entry, stEc);
    if (stEc) continue;
    const std::optional<Temporary> t = temporaryOf(name);
    try {
      if (t && isToolTemporary(kind, name) && processIsGone(t->pid)) {
        if (fs::is_directory(st)) {
          std::vector<fs::path> kept;
          clear(entry, ToolFileKind::Run, false, {}, kept);
          if (isEmptyFolder(entry)) removeEmptyFolder(entry);
        } else {
          removeEntry(entry);
        }
        ++removed;
      } else if (fs::is_directory(st)) {
        const ToolFileKind sub = subFolderKind(kind, name);
        if (sub == ToolFileKind::Checkpoint || sub == ToolFileKind::Runs || (kind == ToolFileKind::Runs && sub == ToolFileKind::Run)) {
          const int inside = removeStale(entry, sub);
          // A checkpoint the kill interrupted before its first file landed.
          if (inside > 0 && sub == ToolFileKind::Checkpoint && isEmptyFolder(entry)) removeEmptyFolder(entry);
          removed += inside;
        }
      }
    } catch (const Error&) {
      // Best effort: what cannot be removed now is tried again next time.
    }
  }
  return removed;
}

}  // namespace

std::vector<fs::path> removeToolFiles(const fs::path& dir) {
  std::vector<fs::path> kept;
  clear(dir, ToolFileKind::Run, true, {}, kept);
  return kept;
}

int removeStaleTemporaries(const fs::path& dir) { return removeStale(dir, ToolFileKind::Run); }

void removeStaleTemporariesOf(const fs::path& file) {
  const std::string target = file.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(file.parent_path().empty() ? fs::path(".") : file.parent_path(), ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::optional<Temporary> t = temporaryOf(it->path().filename().string());
    if (!t || t->base != target || !processIsGone(t->pid)) continue;
    std::error_code stEc;
    if (fs::is_directory(fs::symlink_status(it->path(), stEc)) || stEc) continue;
    ::unlink(it->path().c_str());
  }
}

}  // namespace plab
