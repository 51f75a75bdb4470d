#pragma once
// The AdamW step with block-wise quantized moments (adamw.moments "8bit",
// "4bit", "fp8"): torchao's AdamW8bit / AdamW4bit / AdamWFp8 step (torchaoAdamwElement in adamw_element.h) on an
// fp32 or bf16 parameter, its m and v held as dynamic-tree codes with one
// scale per block (dynamic_tree_8bit.h), the weight written by the recipe's
// rule (fp32: as computed; bf16: nearest, Kahan or stochastic). A tensor
// torchao would not quantize (dynamicTreeQuantizes) keeps its moments in the
// parameter's dtype, as torchao's zeros_like(p) does. Torch-free.
//
// The CPU loop (quantized_adamw_cpu_loop.h, one variant per instruction
// set, picked at run time) runs a block at a time: dequantize its m and v,
// step its elements, quantize the new m and v, each pass vectorised. Its
// element functions (quantized_adamw_element.h, dynamic_tree_*.h) are the
// ones its CUDA twin (quantized_adamw_cuda.cu) runs, a thread per element.
#include <cstdint>

#include "precision/kernels/adamw_element.h"
#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {

enum class MomentLayout : int32_t {
  DynamicTree8bit,  // uint8 codes, one fp32 scale per kDynamicTreeBlock elements
  DynamicTree4bit,  // 4-bit codes, two per byte, one fp32 scale per kDynamicTree4Block (dynamic_tree_4bit.h)
  Fp8E4m3,          // e4m3 bytes, one fp32 scale per kDynamicTreeBlock (torchao's OptimStateFp8)
  PlainFp32,        // float (fp32 parameter below torchao's size rule)
  PlainBf16,        // bf16 bits, written nearest (bf16 parameter below the rule)
};

struct QuantizedAdamWArgs {
  int64_t n = 0;
  bool fp32Weights = false;  // param and grad float*, else bf16 bits
  WeightRule rule = WeightRule::Nearest;  // bf16 weights: Nearest, Kahan or Stochastic
  void* param = nullptr;
  const void* grad = nullptr;
  MomentLayout layout = MomentLayout::DynamicTree8bit;
  void* m = nullptr;  // codes (uint8; 4-bit: packed, n / 2 bytes), float or bf16 bits per layout
  void* v = nullptr;
  float* mScale = nullptr;  // quantized layouts only: one per block
  float* vScale = nullptr;
  const float* signedCode = nullptr;    // the sorted code values for m: 256 (8-bit) or 16 (4-bit)
  const float* unsignedCode = nullptr;  // for v
  const uint8_t* signedStarts = nullptr;    // 8-bit: their bucket starts (dynamicTreeLookup)
  const uint8_t* unsignedStarts = nullptr;
  // 8-bit: the codes' thresholds and the code of each bucket's lowest value
  // (dynamicTreeCodeByThresholds; precision/dynamic_tree_code.h), what the
  // CPU loop quantizes with.
  // 4-bit: its 16 thresholds (dynamicTree4CodeBySearch; null: the loop
  // counts table entries instead).
  const float* signedThresholds = nullptr;
  const float* unsignedThresholds = nullptr;
  const uint8_t* signedCodeStarts = nullptr;
  const uint8_t* unsignedCodeStarts = nullptr;
  // The thresholds in search order (thresholdSearchOrderOf), for the loop
  // that searches them (AVX-512): quantizedAdamWCpu sets them; callers
  // leave them null.
  const float* signedSearch = nullptr;
  const float* unsignedSearch = nullptr;
  uint16_t* comp = nullptr;             // Kahan only
  TorchaoScalars s;
  RandomStream random;  // stochastic weight writes (stream random.stream)
  double* windowSum = nullptr;  // as FusedAdamWArgs
  int64_t windowStride = 1;
};

// What storing the moments lost in one step (docs/metrics.md, "Moment
// error"): over the elements, the squared difference between the stored
// moment as the next step reads it (dequantized codes, or the plain tensor)
// and the fp32 moment this step computed from the previous stored moment and
// the gradient, and the squared fp32 moment. Plain fp32 moments add exactly 0
// error.
struct MomentErrorSums {
  double mErrorSq = 0, mSq = 0, vErrorSq = 0, vSq = 0;
  void add(const MomentErrorSums& o) {
    mErrorSq += o.mErrorSq;
    mSq += o.mSq;
    vErrorSq += o.vErrorSq;
    vSq += o.vSq;
  }
};

// Parallel over fixed blocks; statistics summed in block order as
// fusedAdamWCpu. momentErrors, when not null, receives this step's
// MomentErrorSums added to what it holds (in task order: a fixed order).
void quantizedAdamWCpu(const QuantizedAdamWArgs& args, StepSums* sums, MomentErrorSums* momentErrors = nullptr);

// CUDA twin (quantized_adamw_cuda.cu; only in builds with CUDA kernels):
// launches on `stream` (a cudaStream_t). Every pointer of args is on the
// device, the tables included (codes; 8-bit: thresholds, read in search
// order; the bucket starts and search orders are not used). deviceSums and
// deviceMomentErrors, when not null, point to 4 device doubles each that the
// kernel adds the StepSums / MomentErrorSums fields to, in their order.
void quantizedAdamWCuda(const QuantizedAdamWArgs& args, double* deviceSums, double* deviceMomentErrors, void* stream);

}  // namespace plab::kernels
