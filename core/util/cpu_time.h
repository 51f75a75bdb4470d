#pragma once
// The CPU time this process has used, all its threads together (user and
// system): what a measured overhead is taken in, so that another process
// on a shared machine does not count (wall-clock time would).
#include <ctime>

namespace plab {

inline double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace plab
