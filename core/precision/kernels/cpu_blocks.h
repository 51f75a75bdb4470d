#pragma once
// How the CPU steps (fused_adamw_cpu.cpp, torch_fused_adamw_cpu.cpp,
// quantized_adamw_cpu.cpp) split their work: fixed blocks of kCpuBlock
// elements on torch's threads (util/parallel_chunks.h), block k filling its
// own partial sums, which are then added in block order, so that no sum
// depends on the thread count.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "precision/kernels/fused_adamw_cpu.h"
#include "util/parallel_chunks.h"

namespace plab::kernels {

inline size_t cpuBlockCount(int64_t n) { return static_cast<size_t>((n + kCpuBlock - 1) / kCpuBlock); }

// step(begin, end, k) for every block k of [0, n).
template <typename StepBlock>
void forEachCpuBlock(int64_t n, const StepBlock& step) {
  parallelChunks(static_cast<int64_t>(cpuBlockCount(n)), 1, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b)
      step(b * kCpuBlock, std::min(n, (b + 1) * kCpuBlock), static_cast<size_t>(b));
  });
}

// A variant (args, begin, end, sums) over every block of a.n elements, the
// blocks' statistics added to *sums in block order when sums is not null.
template <typename Args>
void runCpuVariant(void (*variant)(const Args&, int64_t, int64_t, StepSums*), const Args& a, StepSums* sums) {
  std::vector<StepSums> partial(sums ? cpuBlockCount(a.n) : 0);
  forEachCpuBlock(a.n, [&](int64_t begin, int64_t end, size_t k) {
    variant(a, begin, end, sums ? &partial[k] : nullptr);
  });
  if (!sums) return;
  for (const StepSums& p : partial) sums->add(p);
}

}  // namespace plab::kernels
