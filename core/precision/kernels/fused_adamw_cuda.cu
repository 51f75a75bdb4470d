// CUDA twin of the fused AdamW step: each thread runs the element math of
// adamw_element.h on one Philox group of 8 consecutive elements (one random
// draw per group, as the CPU loop). Built with --fmad=false
// (cmake/CudaKernels.cmake) so that it rounds as the CPU twin. Statistics:
// per-thread sums, a block reduction in shared memory, one atomicAdd per
// block and field.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "precision/kernels/adamw_element.h"

namespace plab::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kGroup = 8;

__device__ void blockAddSums(const StepSums& mine, double* deviceSums) {
  __shared__ double shared[4][kThreads];
  shared[0][threadIdx.x] = mine.intendedNonZero;
  shared[1][threadIdx.x] = mine.roundedAway;
  shared[2][threadIdx.x] = mine.intendedSq;
  shared[3][threadIdx.x] = mine.changeSq;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      for (int f = 0; f < 4; ++f) shared[f][threadIdx.x] += shared[f][threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int f = 0; f < 4; ++f) atomicAdd(deviceSums + f, shared[f][0]);
}

template <WeightRule Rule, typename Moment>
__global__ void fusedAdamWKernel(FusedAdamWArgs a, double* deviceSums) {
  const int64_t groups = (a.n + kGroup - 1) / kGroup;
  const bool random = Rule == WeightRule::Stochastic || a.moments == MomentStore::Bf16Stochastic;
  StepSums mine;
  for (int64_t group = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; group < groups;
       group += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    GroupRandoms r{};
    if (random) r = groupRandoms(a, static_cast<uint64_t>(group));
    const int64_t end = group * kGroup + kGroup < a.n ? group * kGroup + kGroup : a.n;
    for (int64_t i = group * kGroup; i < end; ++i) {
      const auto index = static_cast<uint64_t>(i);
      const ElementResult e = stepElement<Rule, Moment>(a, i, random16Of(r.weight, index), random16Of(r.m, index),
                                                        random16Of(r.v, index));
      if (deviceSums) addToSums(mine, e);
      if (a.windowSum && i % a.windowStride == 0)
        a.windowSum[i / a.windowStride] += static_cast<double>(e.updated) - static_cast<double>(e.origin);
    }
  }
  // Every thread of the block reaches the reduction (no early return above).
  if (deviceSums) blockAddSums(mine, deviceSums);
}

template <WeightRule Rule, typename Moment>
void launch(const FusedAdamWArgs& a, double* deviceSums, cudaStream_t stream) {
  const int64_t groups = (a.n + kGroup - 1) / kGroup;
  const int64_t wanted = (groups + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(wanted < 65535 ? (wanted > 0 ? wanted : 1) : 65535);
  fusedAdamWKernel<Rule, Moment><<<blocks, kThreads, 0, stream>>>(a, deviceSums);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("fused AdamW kernel: ") + cudaGetErrorString(err));
}

template <WeightRule Rule>
void launchRule(const FusedAdamWArgs& a, double* deviceSums, cudaStream_t stream) {
  if (a.moments == MomentStore::Fp32)
    launch<Rule, float>(a, deviceSums, stream);
  else
    launch<Rule, uint16_t>(a, deviceSums, stream);
}

}  // namespace

void fusedAdamWCuda(const FusedAdamWArgs& a, double* deviceSums, void* stream) {
  if (a.n == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  switch (a.rule) {
    case WeightRule::Nearest: launchRule<WeightRule::Nearest>(a, deviceSums, s); break;
    case WeightRule::Kahan: launchRule<WeightRule::Kahan>(a, deviceSums, s); break;
    case WeightRule::Stochastic: launchRule<WeightRule::Stochastic>(a, deviceSums, s); break;
    case WeightRule::Master: launchRule<WeightRule::Master>(a, deviceSums, s); break;
  }
}

}  // namespace plab::kernels
