// CPU twin of the fused AdamW step: the element math of adamw_element.h in a
// loop the compiler vectorises, parallel over fixed blocks of elements.
// Included by one .cpp per instruction set (PLAB_CPU_KERNEL names its entry
// point), each compiled with -ffp-contract=off (no fused multiply-add, as the
// CUDA twin's --fmad=false) and -fno-math-errno (sqrt without an errno
// branch): every variant rounds identically.
//
// Each block runs in chunks of 64 elements: the Philox bits of the chunk's
// 8 groups first, then the element loop (straight-line code over arrays),
// then the statistics in 8 lanes of fp64 sums (a fixed order, so the sums
// do not depend on the thread count), then the few window-tracked elements.
#pragma once
// Nothing here includes torch or the standard library's templates: every
// function this file brings into a variant's translation unit has internal
// linkage, so no AVX2 code can be shared with the baseline by the linker.
#include "precision/kernels/adamw_element.h"
#include "precision/kernels/chunk_lane_sums.h"
#include "precision/kernels/fused_adamw_cpu.h"
#if defined(__AVX2__)
#include "precision/kernels/philox_x8_avx2.h"
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define PLAB_PHILOX_X16 1
#include "precision/kernels/philox_x16_avx512.h"
#endif

#ifndef PLAB_CPU_KERNEL
#error "define PLAB_CPU_KERNEL to the entry point's name before including this file"
#endif

namespace plab::kernels {
namespace {

constexpr int64_t kChunk = 64;  // elements: 8 Philox groups
static_assert(kCpuBlock % kChunk == 0, "blocks start Philox groups");

constexpr int kGroups = kChunk / 8;  // Philox groups per chunk

// The Philox counters of the chunk's 8 groups in stream `tag` (the chunk starts at element `first`).
void fillCounters(const FusedAdamWArgs& a, int64_t first, uint32_t tag, uint32_t* c0, uint32_t* c1, uint32_t* c2,
                  uint32_t* c3) {
  for (int g = 0; g < kGroups; ++g) {
    const uint64_t group = a.random.firstGroup + static_cast<uint64_t>(first / 8 + g);
    c0[g] = static_cast<uint32_t>(group);
    c1[g] = static_cast<uint32_t>(group >> 32);
    c2[g] = a.random.step;
    c3[g] = a.random.stream + tag;
  }
}

// The chunk's random bits: Philox of its 8 groups, run side by side (one
// lane per group, round by round; with AVX2 in one register per word). Each lane
// computes exactly randomGroup(r, group); random16Of's order follows.
void chunkRandoms(const FusedAdamWArgs& a, int64_t first, uint32_t* out, uint32_t tag) {
  uint32_t c0[kGroups], c1[kGroups], c2[kGroups], c3[kGroups];
  fillCounters(a, first, tag, c0, c1, c2, c3);
  uint32_t k0 = static_cast<uint32_t>(a.random.seed), k1 = static_cast<uint32_t>(a.random.seed >> 32);
#if defined(__AVX2__)
  static_assert(kGroups == 8, "one AVX2 lane per group");
  random16OfGroups8(c0, c1, c2, c3, k0, k1, out);
#else
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kPhiloxBump0;
      k1 += kPhiloxBump1;
    }
    for (int g = 0; g < kGroups; ++g) philoxRound(c0[g], c1[g], c2[g], c3[g], k0, k1);
  }
  for (int g = 0; g < kGroups; ++g) {
    const uint32_t words[4] = {c0[g], c1[g], c2[g], c3[g]};
    for (int w = 0; w < 4; ++w) {
      out[g * 8 + 2 * w] = words[w] & 0xFFFFu;
      out[g * 8 + 2 * w + 1] = words[w] >> 16;
    }
  }
#endif
}

// The moments' bits (streams +1 and +2); with AVX-512 both in one pass.
void momentRandoms(const FusedAdamWArgs& a, int64_t first, uint32_t* m, uint32_t* v) {
#if defined(PLAB_PHILOX_X16)
  uint32_t c0[2 * kGroups], c1[2 * kGroups], c2[2 * kGroups], c3[2 * kGroups];
  fillCounters(a, first, 1, c0, c1, c2, c3);
  fillCounters(a, first, 2, c0 + kGroups, c1 + kGroups, c2 + kGroups, c3 + kGroups);
  random16OfGroups8x2(c0, c1, c2, c3, static_cast<uint32_t>(a.random.seed), static_cast<uint32_t>(a.random.seed >> 32),
                      m, v);
#else
  chunkRandoms(a, first, m, 1);
  chunkRandoms(a, first, v, 2);
#endif
}

// Store is the moments' rounding as a constant, so that the loop computes
// only that rounding.
template <WeightRule Rule, typename Moment, MomentStore Store, bool Stats>
LaneSums stepBlock(const FusedAdamWArgs& a, int64_t begin, int64_t end) {
  // Hoisted, non-aliasing pointers and scalars: what lets the loop vectorise.
  uint16_t* __restrict param = a.param;
  const uint16_t* __restrict grad = a.grad;
  Moment* __restrict mp = static_cast<Moment*>(a.m);
  Moment* __restrict vp = static_cast<Moment*>(a.v);
  float* __restrict master = a.master;
  uint16_t* __restrict comp = a.comp;
  const AdamWScalars s = a.s;
  const bool randomWeight = Rule == WeightRule::Stochastic;
  const bool randomMoments = Store == MomentStore::Bf16Stochastic;

  LaneSums sums;  // a local no store through the pointers above can alias
  alignas(64) uint32_t rw[kChunk] = {}, rm[kChunk] = {}, rv[kChunk] = {};
  alignas(64) float origin[kChunk], updated[kChunk], before[kChunk], after[kChunk];
  for (int64_t c = begin; c < end; c += kChunk) {
    const int64_t len = end - c < kChunk ? end - c : kChunk;
    if (randomWeight) chunkRandoms(a, c, rw, 0);
    if (randomMoments) momentRandoms(a, c, rm, rv);
    for (int64_t j = 0; j < len; ++j) {
      const int64_t i = c + j;
      ElementIn in{};
      in.weight = bf16ToFloat(param[i]);
      in.grad = bf16ToFloat(grad[i]);
      in.m = loadMoment(mp, i);
      in.v = loadMoment(vp, i);
      if (Rule == WeightRule::Master) in.master = master[i];
      if (Rule == WeightRule::Kahan) in.comp = bf16ToFloat(comp[i]);
      const ElementOut out = stepValues<Rule>(in, s, rw[j]);
      storeMoment(mp, i, out.m, Store, rm[j]);
      storeMoment(vp, i, out.v, Store, rv[j]);
      if (Rule == WeightRule::Master) master[i] = out.updated;
      if (Rule == WeightRule::Kahan) comp[i] = out.comp;
      param[i] = out.weight;
      origin[j] = out.origin;
      updated[j] = out.updated;
      before[j] = in.weight;
      after[j] = bf16ToFloat(out.weight);
    }
    if (Stats) sums.addChunk(origin, updated, before, after, len);
    if (a.windowSum) addChunkWindowSums(a.windowSum, a.windowStride, c, len, origin, updated);
  }
  return sums;
}

template <WeightRule Rule, typename Moment, MomentStore Store>
void runRange(const FusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums) {
  if (sums)
    stepBlock<Rule, Moment, Store, true>(a, begin, end).addTo(*sums);
  else
    stepBlock<Rule, Moment, Store, false>(a, begin, end);
}

template <WeightRule Rule>
void runRule(const FusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums) {
  switch (a.moments) {
    case MomentStore::Fp32: runRange<Rule, float, MomentStore::Fp32>(a, begin, end, sums); break;
    case MomentStore::Bf16Nearest: runRange<Rule, uint16_t, MomentStore::Bf16Nearest>(a, begin, end, sums); break;
    case MomentStore::Bf16Stochastic:
      runRange<Rule, uint16_t, MomentStore::Bf16Stochastic>(a, begin, end, sums);
      break;
  }
}

}  // namespace

void PLAB_CPU_KERNEL(const FusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums) {
  switch (a.rule) {
    case WeightRule::Nearest: runRule<WeightRule::Nearest>(a, begin, end, sums); break;
    case WeightRule::Kahan: runRule<WeightRule::Kahan>(a, begin, end, sums); break;
    case WeightRule::Stochastic: runRule<WeightRule::Stochastic>(a, begin, end, sums); break;
    case WeightRule::Master: runRule<WeightRule::Master>(a, begin, end, sums); break;
  }
}

}  // namespace plab::kernels
