#include "util/thread_priority.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace plab::ui {

bool lowerCurrentThreadPriority() {
#ifdef __linux__
  // Linux keeps a nice value per thread; PRIO_PROCESS with a thread id sets that thread's.
  constexpr int kTrainingNice = 10;
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  const int current = ::getpriority(PRIO_PROCESS, tid);
  if (current >= kTrainingNice) return true;
  return ::setpriority(PRIO_PROCESS, tid, kTrainingNice) == 0;
#else
  return false;
#endif
}

}  // namespace plab::ui
