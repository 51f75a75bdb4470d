// CPU loop of torch.optim.AdamW's for-loop step on bf16 tensors: the element
// math of torch_forloop_bf16_element.h over [begin, end), vectorised by the
// compiler. Included by one .cpp per instruction set (PLAB_TORCH_FORLOOP_KERNEL
// names its entry point), each compiled with -ffp-contract=off and
// -fno-math-errno (the only fused multiply-adds are the element function's
// fmaf calls). Every element is independent: no order, no sums.
#pragma once
#include "precision/kernels/torch_forloop_bf16_element.h"

#if !defined(PLAB_TORCH_FORLOOP_KERNEL) || !defined(PLAB_TORCH_FORLOOP_REFERENCE_END)
#error "define PLAB_TORCH_FORLOOP_KERNEL and PLAB_TORCH_FORLOOP_REFERENCE_END to the entry points' names before including this file"
#endif

namespace plab::kernels {
namespace {

// The lerp's form is a template argument, so that the loop has no select;
// Reference: the statistics' fp32 reference's first part too.
template <bool LerpSmall, bool Reference>
void stepRange(const TorchForloopBf16Args& a, int64_t begin, int64_t end) {
  uint16_t* __restrict param = a.param;
  const uint16_t* __restrict grad = a.grad;
  uint16_t* __restrict mp = a.m;
  uint16_t* __restrict vp = a.v;
  float* __restrict before = a.refBefore;
  float* __restrict after = a.refAfter;
  float* __restrict wRef = a.refWeight;
  float* __restrict mRef = a.refM;
  float* __restrict vRef = a.refV;
  const TorchForloopBf16Scalars s = a.s;
  // The arrays never overlap: without this GCC kept a scalar loop for some
  // of the four forms (or versioned them on a run-time alias check).
#pragma GCC ivdep
  for (int64_t i = begin; i < end; ++i) {
    const uint16_t w = param[i], g = grad[i];
    uint16_t m = mp[i], v = vp[i];
    if (Reference) {
      before[i] = bf16ToFloat(w);
      torchForloopFp32ReferenceStart<LerpSmall>(bf16ToFloat(w), bf16ToFloat(g), bf16ToFloat(m), bf16ToFloat(v), s,
                                                wRef[i], mRef[i], vRef[i]);
    }
    const uint16_t stored = torchForloopBf16Element<LerpSmall>(w, g, m, v, s);
    param[i] = stored;
    mp[i] = m;
    vp[i] = v;
    if (Reference) after[i] = bf16ToFloat(stored);
  }
}

template <bool LerpSmall>
void stepRangeOf(const TorchForloopBf16Args& a, int64_t begin, int64_t end) {
  if (a.refWeight)
    stepRange<LerpSmall, true>(a, begin, end);
  else
    stepRange<LerpSmall, false>(a, begin, end);
}

}  // namespace

void PLAB_TORCH_FORLOOP_KERNEL(const TorchForloopBf16Args& a, int64_t begin, int64_t end) {
  if (a.s.lerpSmall)
    stepRangeOf<true>(a, begin, end);
  else
    stepRangeOf<false>(a, begin, end);
}

void PLAB_TORCH_FORLOOP_REFERENCE_END(const TorchForloopBf16Args& a, int64_t begin, int64_t end) {
  float* __restrict wRef = a.refWeight;
  const float* __restrict mRef = a.refM;
  const float* __restrict root = a.refV;
  const TorchForloopBf16Scalars s = a.s;
#pragma GCC ivdep
  for (int64_t i = begin; i < end; ++i) wRef[i] = torchForloopFp32ReferenceEnd(wRef[i], mRef[i], root[i], s);
}

}  // namespace plab::kernels
