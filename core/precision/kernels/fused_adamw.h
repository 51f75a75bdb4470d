#pragma once
// The fused AdamW step of a bf16 parameter: the contract its CPU loop and its
// CUDA kernel share. One pass per element reads weight, gradient, moments and
// the rule's extra state (fp32 master or bf16 Kahan buffer), writes them back
// and adds the update statistics, with no full-size temporaries.
//
// The element math is in adamw_element.h, compiled into both twins; both are
// built without fused multiply-add (-ffp-contract=off, nvcc --fmad=false) and
// with IEEE division and square root, so they agree bit for bit. They follow
// torch::optim::AdamW's order of operations except the last (they compute
// -step * (m / denom), its addcdiv_ (-step * m) / denom), each operation
// rounded once; the tensor-op reference in precision/steps/ states the same
// arithmetic and agrees with them bit for bit on every step (it avoids
// torch's fused multiply-adds and its fp32 sqrt, which is not correctly
// rounded). Torch-free.
#include <cstdint>

#include "precision/kernels/philox.h"

namespace plab::kernels {

enum class WeightRule : int32_t {
  Nearest,     // bf16-nearest: weight = nearest(update in fp32)
  Kahan,       // bf16-kahan: compensated write, bf16 buffer `comp`
  Stochastic,  // bf16-sr: stochastically rounded write
  Master,      // mixed: fp32 `master` updated, weight = nearest(master)
};

enum class MomentStore : int32_t { Fp32, Bf16Nearest, Bf16Stochastic };

// torch::optim::AdamW's scalars as the fp32 values its kernels use.
struct AdamWScalars {
  float decay = 1;  // 1 - lr * weight_decay (exactly 1 without decay)
  float beta1 = 0.9f, oneMinusBeta1 = 0.1f, beta2 = 0.999f, oneMinusBeta2 = 0.001f;
  float sqrtBiasCorrection2 = 1;  // sqrt(1 - beta2^t)
  float eps = 1e-8f;
  float negStepSize = 0;  // -lr / (1 - beta1^t)
};

struct FusedAdamWArgs {
  int64_t n = 0;
  WeightRule rule = WeightRule::Nearest;
  MomentStore moments = MomentStore::Fp32;
  uint16_t* param = nullptr;       // bf16 bits, updated in place
  const uint16_t* grad = nullptr;  // bf16 bits
  void* m = nullptr;               // float* (Fp32) or uint16_t* (bf16 bits)
  void* v = nullptr;
  float* master = nullptr;  // Master only
  uint16_t* comp = nullptr;  // Kahan only
  AdamWScalars s;
  // Stochastic writes: weight bits from stream `random.stream`, m from +1, v from +2.
  RandomStream random;
  // Update-lost window: the intended update of every windowStride-th element
  // is added to windowSum[index / windowStride] (null: no window open).
  double* windowSum = nullptr;
  int64_t windowStride = 1;
};

// The per-step statistics of one parameter (see precision/update_stats.h),
// summed over its elements.
struct StepSums {
  double intendedNonZero = 0;
  double roundedAway = 0;
  double intendedSq = 0;  // ||intended update||^2
  double changeSq = 0;    // ||stored weight change||^2
  void add(const StepSums& o) {  // host code: the parallel loops' block sums, in block order
    intendedNonZero += o.intendedNonZero;
    roundedAway += o.roundedAway;
    intendedSq += o.intendedSq;
    changeSq += o.changeSq;
  }
};

// CPU twin: parallelChunks (util/parallel_chunks.h) over fixed blocks; the block sums are added in
// block order, so the statistics do not depend on the thread count.
// sums may be null (no statistics).
void fusedAdamWCpu(const FusedAdamWArgs& args, StepSums* sums);

// CUDA twin (precision/kernels/fused_adamw_cuda.cu; only in builds with
// CUDA kernels): launches on `stream` (a cudaStream_t). deviceSums, when not
// null, points to 4 doubles on the device that the kernel adds the
// StepSums fields to, in that order.
void fusedAdamWCuda(const FusedAdamWArgs& args, double* deviceSums, void* stream);

}  // namespace plab::kernels
