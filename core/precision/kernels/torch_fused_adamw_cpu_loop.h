// CPU loop of torch.optim.AdamW(fused=True)'s step: the element math of
// torch_fused_adamw_element.h over [begin, end), vectorised by the compiler.
// Included by one .cpp per instruction set (PLAB_TORCH_FUSED_KERNEL names
// its entry point), each compiled with -ffp-contract=off and -fno-math-errno
// (the only fused multiply-adds are the element function's fmaf calls).
// Statistics as in fused_adamw_cpu_loop.h: element i to lane i % 8, chunks
// of 64, so the sums do not depend on the threads or the variant.
#pragma once
#include "precision/kernels/bf16_bits.h"
#include "precision/kernels/chunk_lane_sums.h"
#include "precision/kernels/torch_fused_adamw_element.h"

#ifndef PLAB_TORCH_FUSED_KERNEL
#error "define PLAB_TORCH_FUSED_KERNEL to the entry point's name before including this file"
#endif

namespace plab::kernels {
namespace {

constexpr int64_t kTorchChunk = 64;

// Values, not pointers, cross these helpers: the loops index their own
// __restrict pointers, which is what lets GCC vectorise without a runtime
// alias check (a pointer passed to a helper lost the restrict).
PLAB_HD float toFloat(float x) { return x; }
PLAB_HD float toFloat(uint16_t b) { return bf16ToFloat(b); }
// x in the dtype of the tag (the tensor's element type).
PLAB_HD float fromFloat(float x, float) { return x; }
PLAB_HD uint16_t fromFloat(float x, uint16_t) { return bf16Nearest(x); }

// Steps [begin, end), all on the same side of torch's scalar remainder.
template <typename T, bool ScalarTail, bool Track, bool LerpSmall>
void stepRange(const TorchFusedAdamWArgs& a, int64_t begin, int64_t end, LaneSums& sums, bool stats) {
  T* __restrict param = static_cast<T*>(a.param);
  const T* __restrict grad = static_cast<const T*>(a.grad);
  T* __restrict mp = static_cast<T*>(a.m);
  T* __restrict vp = static_cast<T*>(a.v);
  const TorchFusedScalars s = a.s;
  if (!Track) {
    for (int64_t i = begin; i < end; ++i) {
      float m = toFloat(mp[i]), v = toFloat(vp[i]);
      const float w = torchFusedAdamwElement<ScalarTail, LerpSmall>(toFloat(param[i]), toFloat(grad[i]), m, v, s);
      mp[i] = fromFloat(m, T{});
      vp[i] = fromFloat(v, T{});
      param[i] = fromFloat(w, T{});
    }
    return;
  }
  alignas(64) float before[kTorchChunk], updated[kTorchChunk], after[kTorchChunk];
  for (int64_t c = begin; c < end; c += kTorchChunk) {
    const int64_t len = end - c < kTorchChunk ? end - c : kTorchChunk;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t i = c + j;
      float m = toFloat(mp[i]), v = toFloat(vp[i]);
      const float w0 = toFloat(param[i]);
      const float w = torchFusedAdamwElement<ScalarTail, LerpSmall>(w0, toFloat(grad[i]), m, v, s);
      mp[i] = fromFloat(m, T{});
      vp[i] = fromFloat(v, T{});
      const T stored = fromFloat(w, T{});
      param[i] = stored;
      before[j] = w0;
      updated[j] = w;
      after[j] = toFloat(stored);
    }
    // Chunks start at multiples of 8 (blocks and the tail start do); the
    // intended update starts from the weight itself.
    if (stats) sums.addChunk(before, updated, before, after, len);
    if (a.windowSum) addChunkWindowSums(a.windowSum, a.windowStride, c, len, before, updated);
  }
}

template <typename T, bool Track, bool LerpSmall>
void stepBlockIn(const TorchFusedAdamWArgs& a, int64_t begin, int64_t end, LaneSums& sums, bool stats) {
  const int64_t split = a.scalarFrom < begin ? begin : (a.scalarFrom > end ? end : a.scalarFrom);
  stepRange<T, false, Track, LerpSmall>(a, begin, split, sums, stats);
  stepRange<T, true, Track, LerpSmall>(a, split, end, sums, stats);
}

// The lerp's form is a template argument: a select inside the tracked loop
// kept it from vectorising.
template <typename T, bool Track>
void stepBlockOf(const TorchFusedAdamWArgs& a, int64_t begin, int64_t end, LaneSums& sums, bool stats) {
  if (a.s.lerpSmall)
    stepBlockIn<T, Track, true>(a, begin, end, sums, stats);
  else
    stepBlockIn<T, Track, false>(a, begin, end, sums, stats);
}

template <typename T>
void stepBlock(const TorchFusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums) {
  LaneSums lanes;
  if (sums || a.windowSum)
    stepBlockOf<T, true>(a, begin, end, lanes, sums != nullptr);
  else
    stepBlockOf<T, false>(a, begin, end, lanes, false);
  if (sums) lanes.addTo(*sums);
}

}  // namespace

void PLAB_TORCH_FUSED_KERNEL(const TorchFusedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums) {
  if (a.type == TorchParamType::Fp32)
    stepBlock<float>(a, begin, end, sums);
  else
    stepBlock<uint16_t>(a, begin, end, sums);
}

}  // namespace plab::kernels
