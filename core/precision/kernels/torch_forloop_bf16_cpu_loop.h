// CPU loop of torch.optim.AdamW's for-loop step on bf16 tensors: the element
// math of torch_forloop_bf16_element.h over [begin, end), vectorised by the
// compiler. Included by one .cpp per instruction set (PLAB_TORCH_FORLOOP_KERNEL
// names its entry point), each compiled with -ffp-contract=off and
// -fno-math-errno (the only fused multiply-adds are the element function's
// fmaf calls). Every element is independent: no order, no sums.
#pragma once
#include "precision/kernels/torch_forloop_bf16_element.h"

#ifndef PLAB_TORCH_FORLOOP_KERNEL
#error "define PLAB_TORCH_FORLOOP_KERNEL to the entry point's name before including this file"
#endif

namespace plab::kernels {
namespace {

// The lerp's form is a template argument, so that the loop has no select.
template <bool LerpSmall>
void stepRange(const TorchForloopBf16Args& a, int64_t begin, int64_t end) {
  uint16_t* __restrict param = a.param;
  const uint16_t* __restrict grad = a.grad;
  uint16_t* __restrict mp = a.m;
  uint16_t* __restrict vp = a.v;
  const TorchForloopBf16Scalars s = a.s;
  for (int64_t i = begin; i < end; ++i) {
    uint16_t m = mp[i], v = vp[i];
    param[i] = torchForloopBf16Element<LerpSmall>(param[i], grad[i], m, v, s);
    mp[i] = m;
    vp[i] = v;
  }
}

}  // namespace

void PLAB_TORCH_FORLOOP_KERNEL(const TorchForloopBf16Args& a, int64_t begin, int64_t end) {
  if (a.s.lerpSmall)
    stepRange<true>(a, begin, end);
  else
    stepRange<false>(a, begin, end);
}

}  // namespace plab::kernels
