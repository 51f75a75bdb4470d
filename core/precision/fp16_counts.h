#pragma once
// What writing a tensor to fp16 would do to its elements: how many non-zero
// values flush to zero and how many finite values overflow to +-Inf. The
// per-layer "share of gradient elements that flush to zero in fp16" reads it.
#include <torch/torch.h>

#include <cstdint>

namespace plab {

struct Fp16WriteCounts {
  int64_t elements = 0;
  int64_t nonZeroFinite = 0;  // finite, non-zero inputs: the share's denominator
  int64_t flushedToZero = 0;  // non-zero finite -> +-0 (|x| <= 2^-25)
  int64_t overflowed = 0;     // finite -> +-Inf (|x| >= 65520)
  int64_t nonFinite = 0;      // +-Inf or NaN already in the input

  // Of the non-zero finite values, the share that flush to zero (0 when there are none).
  double flushedShare() const {
    return nonZeroFinite == 0 ? 0.0 : static_cast<double>(flushedToZero) / static_cast<double>(nonZeroFinite);
  }
  void add(const Fp16WriteCounts& o) {
    elements += o.elements;
    nonZeroFinite += o.nonZeroFinite;
    flushedToZero += o.flushedToZero;
    overflowed += o.overflowed;
    nonFinite += o.nonFinite;
  }
};

// Counts for `values` (fp32 or bf16, any shape). On the CPU one fused pass
// over the elements on torch's thread pool, with no temporaries (a
// non-contiguous tensor is copied once); elsewhere tensor operations that
// compute the same counts.
Fp16WriteCounts fp16WriteCounts(const torch::Tensor& values);

// The tensor-operation formulation (any device), which the CPU pass is
// tested against.
Fp16WriteCounts fp16WriteCountsByTensorOps(const torch::Tensor& values);

}  // namespace plab
