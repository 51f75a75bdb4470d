// CPU twin of the fused AdamW step: a plain loop over the element math of
// adamw_element.h, parallel over fixed blocks of elements. Compiled with
// -ffp-contract=off (core/CMakeLists.txt) so that it rounds as the CUDA twin.
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "precision/kernels/adamw_element.h"

namespace plab::kernels {
namespace {

// Elements per task: a multiple of 8 so that every block starts a Philox group.
constexpr int64_t kBlock = 1 << 14;

template <WeightRule Rule, typename Moment, bool Stats>
void stepRange(const FusedAdamWArgs& a, int64_t begin, int64_t end, StepSums& sums) {
  const bool random = Rule == WeightRule::Stochastic || a.moments == MomentStore::Bf16Stochastic;
  // The first window-tracked index at or after begin (no division per element).
  const int64_t stride = a.windowStride;
  int64_t nextTracked = a.windowSum ? (begin + stride - 1) / stride * stride : end;
  GroupRandoms r{};
  for (int64_t i = begin; i < end; ++i) {
    if (random && (i & 7) == 0) r = groupRandoms(a, static_cast<uint64_t>(i) >> 3);
    const ElementResult e = stepElement<Rule, Moment>(a, i, r);
    if (Stats) addToSums(sums, e);
    if (i == nextTracked) {
      a.windowSum[i / stride] += static_cast<double>(e.updated) - static_cast<double>(e.origin);
      nextTracked += stride;
    }
  }
}

template <WeightRule Rule, typename Moment>
void runBlocks(const FusedAdamWArgs& a, StepSums* sums) {
  const int64_t blocks = (a.n + kBlock - 1) / kBlock;
  std::vector<StepSums> partial(sums ? static_cast<size_t>(blocks) : 0);
  at::parallel_for(0, blocks, 1, [&](int64_t first, int64_t last) {
    StepSums unused;
    for (int64_t b = first; b < last; ++b) {
      const int64_t begin = b * kBlock, end = std::min(a.n, begin + kBlock);
      if (sums)
        stepRange<Rule, Moment, true>(a, begin, end, partial[static_cast<size_t>(b)]);
      else
        stepRange<Rule, Moment, false>(a, begin, end, unused);
    }
  });
  if (!sums) return;
  for (const StepSums& p : partial) {
    sums->intendedNonZero += p.intendedNonZero;
    sums->roundedAway += p.roundedAway;
    sums->intendedSq += p.intendedSq;
    sums->changeSq += p.changeSq;
  }
}

template <WeightRule Rule>
void runRule(const FusedAdamWArgs& a, StepSums* sums) {
  if (a.moments == MomentStore::Fp32)
    runBlocks<Rule, float>(a, sums);
  else
    runBlocks<Rule, uint16_t>(a, sums);
}

}  // namespace

void fusedAdamWCpu(const FusedAdamWArgs& a, StepSums* sums) {
  switch (a.rule) {
    case WeightRule::Nearest: runRule<WeightRule::Nearest>(a, sums); break;
    case WeightRule::Kahan: runRule<WeightRule::Kahan>(a, sums); break;
    case WeightRule::Stochastic: runRule<WeightRule::Stochastic>(a, sums); break;
    case WeightRule::Master: runRule<WeightRule::Master>(a, sums); break;
  }
}

}  // namespace plab::kernels
