#pragma once
// The math of one element of the quantized-moment AdamW step
// (quantized_adamw.h), as pure functions written so that the CPU loop
// (quantized_adamw_cpu_loop.h) vectorises them and the CUDA kernel
// (quantized_adamw_cuda.cu) runs them as they are (PLAB_HD).
#include <cstdint>

#include "precision/kernels/adamw_element.h"
#include "precision/kernels/dynamic_tree_4bit.h"
#include "precision/kernels/dynamic_tree_8bit.h"

// Unrolls a short loop of constant trip count (what lets the loop over
// elements around it vectorise).
#if defined(__CUDACC__)  // nvcc unrolls it unasked (and hands GCC no unknown pragma)
#define PLAB_UNROLL
#else
#define PLAB_UNROLL _Pragma("GCC unroll 16")
#endif

namespace plab::kernels {

// One element's step: torchao's AdamW element (torchaoAdamwElement) on the
// dequantized moments m and v (updated in place, fp32), then the weight
// written by the recipe's rule. `before` is the weight as loaded (bf16 value
// or fp32), comp Kahan's buffer (bf16 value), random16 the element's
// stochastic-rounding bits.
struct QuantizedElementOut {
  float updated;    // the fp32 result of the step
  float after;      // the weight as stored (fp32 weights: updated)
  uint16_t weight;  // bf16 weights: the bits written
  uint16_t comp;    // Kahan only
};
template <bool Fp32Weights, WeightRule Rule>
PLAB_HD QuantizedElementOut quantizedElementStep(float before, float grad, float& m, float& v, float comp,
                                                 uint32_t random16, const TorchaoScalars& s) {
  QuantizedElementOut out{};
  out.updated = torchaoAdamwElement(before, grad, m, v, s);
  out.after = out.updated;
  if (!Fp32Weights) {
    const Bf16Write w = writeBf16<Rule>(before, comp, out.updated, random16);
    out.weight = w.weight;
    out.comp = w.comp;
    out.after = bf16ToFloat(w.weight);
  }
  return out;
}

// dynamicTree4Code's code found by counting instead of searching: the last
// entry <= q of a sorted table is the number of entries 1..15 that are <= q
// (0 for NaN, as the search gives), and the two entries around q are picked
// along the way (upTable[k] = table[min(k + 1, 15)]). Every lane does the
// same 15 comparisons with constants, so a loop over elements vectorises;
// test_quantized_kernels holds it to the search.
PLAB_HD uint8_t dynamicTree4CodeByCount(float q, const float* table, const float* upTable) {
  int code = 0;
  float down = table[0], up = table[1];
  PLAB_UNROLL
  for (int k = 1; k < kDynamicTree4Codes; ++k) {
    const bool above = q >= table[k];
    code += above ? 1 : 0;
    down = above ? table[k] : down;
    up = above ? upTable[k] : up;
  }
  const float residual = q - down;
  return static_cast<uint8_t>(residual >= (up - down) * 0.5f ? (code + 1 > 15 ? 15 : code + 1) : code);
}

}  // namespace plab::kernels
