#include "util/thread_priority.h"

#include <cstdlib>

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace plab::ui {
namespace {

// PLAB_TRAINING_NICE=0..19 overrides the default (0 leaves the thread as it
// is): bench_notebook measures the window's input latency with and without.
int trainingNice() {
  constexpr int kDefault = 10;
  const char* env = std::getenv("PLAB_TRAINING_NICE");
  if (env == nullptr || *env == '\0') return kDefault;
  char* end = nullptr;
  const long value = std::strtol(env, &end, 10);
  return *end == '\0' && value >= 0 && value <= 19 ? static_cast<int>(value) : kDefault;
}

}  // namespace

bool lowerCurrentThreadPriority() {
#ifdef __linux__
  const int nice = trainingNice();
  if (nice == 0) return false;
  // Linux keeps a nice value per thread; PRIO_PROCESS with a thread id sets that thread's.
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  const int current = ::getpriority(PRIO_PROCESS, tid);
  if (current >= nice) return true;
  return ::setpriority(PRIO_PROCESS, tid, nice) == 0;
#else
  return false;
#endif
}

}  // namespace plab::ui
