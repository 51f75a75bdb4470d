#pragma once
// Work split over LibTorch's threads from code built without OpenMP.
// at::parallel_for is a header template whose OpenMP pragma only takes
// effect in a translation unit compiled with -fopenmp; this project's
// sources are not, so there it runs on one thread (measured: the quantizers
// took as long on 2 threads as on 1, and the fused AdamW step 11.9 ms on 1
// thread against 10.7 ms on 2). This runs ranges of [0, count) on
// at::get_num_threads() threads: the caller's and at::launch's inter-op
// pool. f must not throw. The split depends on the thread count only; each
// range is [first, last) with last - first >= grain except the final one.
#include <ATen/Parallel.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace plab {

template <typename F>
void parallelChunks(int64_t count, int64_t grain, const F& f) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t parts = std::min<int64_t>(at::get_num_threads(), (count + grain - 1) / grain);
  if (parts <= 1 || at::in_parallel_region()) {
    f(int64_t(0), count);
    return;
  }
  const int64_t per = (count + parts - 1) / parts;
  std::mutex m;
  std::condition_variable done;
  int64_t pending = parts - 1;
  for (int64_t p = 1; p < parts; ++p) {
    at::launch([&, p] {
      const int64_t first = p * per, last = std::min(count, first + per);
      if (first < last) f(first, last);
      std::lock_guard<std::mutex> lock(m);
      if (--pending == 0) done.notify_one();
    });
  }
  f(int64_t(0), std::min(count, per));
  std::unique_lock<std::mutex> lock(m);
  done.wait(lock, [&] { return pending == 0; });
}

}  // namespace plab
