#include "precision/kernels/change_sums_cpu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "precision/kernels/fused_adamw_cpu.h"
#include "util/parallel_chunks.h"

namespace plab::kernels {
namespace {

constexpr int kLanes = 8;

// Element i goes to lane i % 8 of its block, then the lanes are added in order.
StepSums blockSums(const float* before, const float* intendedAfter, const float* after, int64_t begin,
                   int64_t end) {
  double nonZero[kLanes] = {}, away[kLanes] = {}, intendedSq[kLanes] = {}, changeSq[kLanes] = {};
  for (int64_t row = begin; row < end; row += kLanes) {
    const int width = static_cast<int>(std::min<int64_t>(kLanes, end - row));
    for (int l = 0; l < width; ++l) {
      const double start = before[row + l];
      const double intended = static_cast<double>(intendedAfter[row + l]) - start;
      const double change = static_cast<double>(after[row + l]) - start;
      const double wanted = intended != 0 ? 1.0 : 0.0;
      nonZero[l] += wanted;
      away[l] += change == 0 ? wanted : 0.0;
      intendedSq[l] += intended * intended;
      changeSq[l] += change * change;
    }
  }
  StepSums s;
  for (int l = 0; l < kLanes; ++l) {
    s.intendedNonZero += nonZero[l];
    s.roundedAway += away[l];
    s.intendedSq += intendedSq[l];
    s.changeSq += changeSq[l];
  }
  return s;
}

}  // namespace

void addStepSumsCpu(StepSums& sums, const float* before, const float* intendedAfter, const float* after, int64_t n) {
  const int64_t blocks = (n + kCpuBlock - 1) / kCpuBlock;
  std::vector<StepSums> partial(static_cast<size_t>(blocks));
  parallelChunks(blocks, 1, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b)
      partial[static_cast<size_t>(b)] =
          blockSums(before, intendedAfter, after, b * kCpuBlock, std::min(n, (b + 1) * kCpuBlock));
  });
  for (const StepSums& p : partial) sums.add(p);
}

StepSums stepSumsCpu(const float* before, const float* intendedAfter, const float* after, int64_t n) {
  StepSums sums;
  addStepSumsCpu(sums, before, intendedAfter, after, n);
  return sums;
}

}  // namespace plab::kernels
