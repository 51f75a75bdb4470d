#pragma once
// What one process of the notebook bench costs: CPU time of all its threads,
// resident memory now and at its peak, the machine's load, the nice value of
// its threads. Linux (/proc); elsewhere the figures read 0.
#include <cstdint>
#include <string>
#include <vector>

namespace plab::bench {

struct ProcessSample {
  double cpuSeconds = 0;  // user + system, every thread of the process (getrusage)
  double rssMiB = 0;      // VmRSS
  double hwmMiB = 0;      // VmHWM: the peak resident set so far
};
ProcessSample sampleProcess();

// CLOCK_MONOTONIC, shared by every process of the machine: a parent passes
// its spawn time to a child in PLAB_BENCH_SPAWN_NS.
int64_t monotonicNs();
inline double msBetween(int64_t fromNs, int64_t toNs) { return static_cast<double>(toNs - fromNs) / 1e6; }

// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID).
double threadCpuSeconds();

std::string loadAverage();  // "/proc/loadavg"'s three averages, "?" when unreadable

// How many of this process's threads run at each nice value: {nice, threads}.
std::vector<std::pair<int, int>> threadNiceCounts();

}  // namespace plab::bench
