#include "notebook/process_stats.h"

#include <sys/resource.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace plab::bench {

namespace {

double statusKiB(const std::string& text, const std::string& key) {
  const size_t at = text.find(key + ":");
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + key.size() + 1));
}

std::string readWhole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

ProcessSample sampleProcess() {
  ProcessSample s;
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0)
    s.cpuSeconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                   static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  const std::string status = readWhole("/proc/self/status");
  s.rssMiB = statusKiB(status, "VmRSS") / 1024.0;
  s.hwmMiB = statusKiB(status, "VmHWM") / 1024.0;
  return s;
}

int64_t monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

std::string loadAverage() {
  std::istringstream in(readWhole("/proc/loadavg"));
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "?";
  return a + " " + b + " " + c;
}

std::vector<std::pair<int, int>> threadNiceCounts() {
  std::map<int, int> counts;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    // stat: "tid (comm) state ..." — field 19 is the nice value; comm may hold spaces.
    const std::string stat = readWhole(task.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    for (int i = 3; i <= 19 && fields >> field; ++i)
      if (i == 19) ++counts[std::stoi(field)];
  }
  return {counts.begin(), counts.end()};
}

}  // namespace plab::bench
