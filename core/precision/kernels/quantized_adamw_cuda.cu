// CUDA twin of the quantized-moment AdamW step (quantized_adamw.h): one
// thread block per quantization block (256 elements; 128 for 4 bits), one
// thread per element, running the element functions the CPU loop runs
// (quantized_adamw_element.h, dynamic_tree_*.h, fp8_element.h). A block
// dequantizes its m and v, steps its elements, finds the new scales by a
// reduction (max |x| is the same in any order; a block holding a NaN takes
// the scalar dynamicTreeScale, as the CPU loop does) and writes the new
// codes with the scalar code functions the CPU loop is tested against:
// weights, Kahan buffers, codes and scales the CPU twin's bits. Built with
// --fmad=false (cmake/CudaKernels.cmake), so no multiply-add is contracted.
//
// The statistics, window and moment-error sums are fp64 block sums added by
// atomicAdd, so their order (and last bits) differ from the CPU's element
// order: equal within rounding, not bit for bit (as fused_adamw_cuda.cu).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "formats/fp8_element.h"
#include "precision/kernels/quantized_adamw.h"
#include "precision/kernels/quantized_adamw_element.h"

namespace plab::kernels {
namespace {

constexpr int kMaxThreads = static_cast<int>(kDynamicTreeBlock);
static_assert(kDynamicTree4Block <= kDynamicTreeBlock, "a 4-bit block fits the thread block");

// Sums `value[0..Fields)` of every thread of the block into `out` (device,
// Fields doubles) with one atomicAdd per field. Every thread must call it.
template <int Threads, int Fields>
__device__ void blockAddToDevice(const double (&value)[Fields], double* out) {
  __shared__ double shared[Fields][Threads];
  for (int f = 0; f < Fields; ++f) shared[f][threadIdx.x] = value[f];
  __syncthreads();
  for (int half = Threads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half)
      for (int f = 0; f < Fields; ++f) shared[f][threadIdx.x] += shared[f][threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    for (int f = 0; f < Fields; ++f) atomicAdd(out + f, shared[f][0]);
  __syncthreads();
}

// The block's scale of x[0..len) as dynamicTreeScale computes it: max |x|
// by a tree of `a > b ? a : b` (order-free for non-NaN values), clipped at
// 1e-12; with a NaN, the scalar function (its last NaN). Every thread calls
// it and receives the scale.
template <int Threads>
__device__ float blockScale(const float* x, int len) {
  __shared__ float top[Threads];
  __shared__ float result;
  const int t = static_cast<int>(threadIdx.x);
  float a = 0;
  if (t < len) a = x[t] < 0 ? -x[t] : x[t];
  const bool nan = __syncthreads_or(t < len && a != a) != 0;
  if (nan) {
    if (t == 0) result = dynamicTreeScale(x, len);
    __syncthreads();
    return result;
  }
  top[t] = a;
  __syncthreads();
  for (int half = Threads / 2; half > 0; half /= 2) {
    if (t < half) top[t] = top[t + half] > top[t] ? top[t + half] : top[t];
    __syncthreads();
  }
  const float best = top[0];
  __syncthreads();
  return best < 1e-12f ? 1e-12f : best;
}

// The stored value of element j of the block as the next step reads it.
template <MomentLayout Layout>
__device__ float storedValue(const void* store, int64_t i, const float* table, float scale) {
  if (Layout == MomentLayout::DynamicTree8bit)
    return dequantizeDynamicTree(static_cast<const uint8_t*>(store)[i], table, scale);
  if (Layout == MomentLayout::DynamicTree4bit)
    return dequantizeDynamicTree(unpack4(static_cast<const uint8_t*>(store), i), table, scale);
  if (Layout == MomentLayout::Fp8E4m3) return formats::e4m3ToFloat(static_cast<const uint8_t*>(store)[i]) * scale;
  if (Layout == MomentLayout::PlainFp32) return static_cast<const float*>(store)[i];
  return bf16ToFloat(static_cast<const uint16_t*>(store)[i]);
}

// Stores one moment of the block: the scale and the codes (quantized
// layouts) or the values (plain ones). `order` holds the 8-bit thresholds
// in search order (codeByThresholdSearch, equal to dynamicTreeCode:
// test_quantized_kernels), `table` the 4-bit code values. Every thread calls it.
template <int Threads, MomentLayout Layout>
__device__ void storeMoment(void* store, float* scales, int64_t first, int len, const float* x, const float* table,
                            const float* order) {
  const int t = static_cast<int>(threadIdx.x);
  const int64_t i = first + t;
  if (Layout == MomentLayout::PlainFp32) {
    if (t < len) static_cast<float*>(store)[i] = x[t];
    return;
  }
  if (Layout == MomentLayout::PlainBf16) {
    if (t < len) static_cast<uint16_t*>(store)[i] = bf16Nearest(x[t]);
    return;
  }
  float scale = blockScale<Threads>(x, len);
  if (Layout == MomentLayout::Fp8E4m3) scale = scale / 448.0f;
  uint8_t* codes = static_cast<uint8_t*>(store);
  if (Layout == MomentLayout::DynamicTree8bit) {
    if (t < len) codes[i] = codeByThresholdSearch<8>(x[t] / scale, order);
  } else if (Layout == MomentLayout::Fp8E4m3) {
    if (t < len) codes[i] = formats::e4m3FromFloat(x[t] / scale);
  } else {
    __shared__ uint8_t four[Threads];
    if (t < len) four[t] = dynamicTree4Code(x[t] / scale, table);
    __syncthreads();
    if (2 * t < len) codes[(first + 2 * t) / 2] = static_cast<uint8_t>((four[2 * t] << 4) | four[2 * t + 1]);
  }
  if (t == 0) scales[first / Threads] = scale;
}

// The tables a block reads, copied into shared memory: the code values
// (dequantization; 4-bit quantization) and, for 8 bits, the thresholds in
// search order (thresholdSearchOrderOf<8>, one entry per thread).
struct BlockTables {
  float signedCode[256], unsignedCode[256];
  float signedOrder[kDynamicTreeSearchOrder], unsignedOrder[kDynamicTreeSearchOrder];
};

template <MomentLayout Layout>
__device__ void loadTables(const QuantizedAdamWArgs& a, BlockTables& tables) {
  const int t = static_cast<int>(threadIdx.x);
  const int codes = Layout == MomentLayout::DynamicTree4bit ? kDynamicTree4Codes : 256;
  for (int k = t; k < codes; k += blockDim.x) {
    tables.signedCode[k] = a.signedCode[k];
    tables.unsignedCode[k] = a.unsignedCode[k];
  }
  if (Layout == MomentLayout::DynamicTree8bit) {
    for (int k = t; k < kDynamicTreeSearchOrder; k += blockDim.x) {
      // order[0] = threshold[0]; order[2^l + i] = threshold[(2i + 1) * 2^(7 - l)].
      int index = 0;
      if (k > 0) {
        const int level = 31 - __clz(k);
        index = (2 * (k - (1 << level)) + 1) * (128 >> level);
      }
      tables.signedOrder[k] = a.signedThresholds[index];
      tables.unsignedOrder[k] = a.unsignedThresholds[index];
    }
  }
  __syncthreads();
}

template <bool Fp32Weights, WeightRule Rule, MomentLayout Layout, int Threads>
__global__ void __launch_bounds__(Threads)
    quantizedAdamWKernel(QuantizedAdamWArgs a, double* deviceSums, double* deviceErrors) {
  constexpr bool kQuantized = Layout == MomentLayout::DynamicTree8bit || Layout == MomentLayout::DynamicTree4bit ||
                              Layout == MomentLayout::Fp8E4m3;
  __shared__ BlockTables tables;
  __shared__ float newM[Threads], newV[Threads];
  if (kQuantized) loadTables<Layout>(a, tables);
  const int t = static_cast<int>(threadIdx.x);
  const int64_t blocks = (a.n + Threads - 1) / Threads;
  using W = typename std::conditional<Fp32Weights, float, uint16_t>::type;
  W* param = static_cast<W*>(a.param);
  const W* grad = static_cast<const W*>(a.grad);
  double sums[4] = {0, 0, 0, 0}, errors[4] = {0, 0, 0, 0};
  // Every thread runs every iteration (the reductions need the whole block).
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const int64_t first = b * Threads;
    const int len = a.n - first < Threads ? static_cast<int>(a.n - first) : Threads;
    const int64_t i = first + t;
    const bool active = t < len;
    float m = 0, v = 0, before = 0, updated = 0, after = 0;
    if (active) {
      const float mScale = kQuantized ? a.mScale[b] : 1.0f, vScale = kQuantized ? a.vScale[b] : 1.0f;
      m = storedValue<Layout>(a.m, i, tables.signedCode, mScale);
      v = storedValue<Layout>(a.v, i, tables.unsignedCode, vScale);
      float g = 0, comp = 0;
      uint32_t random16 = 0;
      if constexpr (Fp32Weights) {
        before = param[i];
        g = grad[i];
      } else {
        before = bf16ToFloat(param[i]);
        g = bf16ToFloat(grad[i]);
        if (Rule == WeightRule::Kahan) comp = bf16ToFloat(a.comp[i]);
        if (Rule == WeightRule::Stochastic)  // the CPU loop's bits: group i / 8, its (i % 8)-th number
          random16 = random16Of(randomGroup(a.random, static_cast<uint64_t>(i / 8)), static_cast<uint64_t>(i % 8));
      }
      const QuantizedElementOut out = quantizedElementStep<Fp32Weights, Rule>(before, g, m, v, comp, random16, a.s);
      updated = out.updated;
      after = out.after;
      if constexpr (Fp32Weights) {
        param[i] = out.updated;
      } else {
        param[i] = out.weight;
        if (Rule == WeightRule::Kahan) a.comp[i] = out.comp;
      }
      if (a.windowSum && i % a.windowStride == 0)
        a.windowSum[i / a.windowStride] += static_cast<double>(updated) - static_cast<double>(before);
      newM[t] = m;
      newV[t] = v;
    }
    __syncthreads();
    storeMoment<Threads, Layout>(a.m, a.mScale, first, len, newM, tables.signedCode, tables.signedOrder);
    storeMoment<Threads, Layout>(a.v, a.vScale, first, len, newV, tables.unsignedCode, tables.unsignedOrder);
    __syncthreads();
    if (active && deviceSums) {
      const double intended = static_cast<double>(updated) - static_cast<double>(before);
      const double change = static_cast<double>(after) - static_cast<double>(before);
      const bool moved = intended != 0;
      sums[0] += moved ? 1.0 : 0.0;
      sums[1] += moved && after == before ? 1.0 : 0.0;
      sums[2] += intended * intended;
      sums[3] += change * change;
    }
    if (active && deviceErrors) {
      const float mScale = kQuantized ? a.mScale[b] : 1.0f, vScale = kQuantized ? a.vScale[b] : 1.0f;
      const double dm = static_cast<double>(storedValue<Layout>(a.m, i, tables.signedCode, mScale)) - m;
      const double dv = static_cast<double>(storedValue<Layout>(a.v, i, tables.unsignedCode, vScale)) - v;
      errors[0] += dm * dm;
      errors[1] += static_cast<double>(m) * m;
      errors[2] += dv * dv;
      errors[3] += static_cast<double>(v) * v;
    }
    __syncthreads();
  }
  if (deviceSums) blockAddToDevice<Threads, 4>(sums, deviceSums);
  if (deviceErrors) blockAddToDevice<Threads, 4>(errors, deviceErrors);
}

template <bool Fp32Weights, WeightRule Rule, MomentLayout Layout>
void launch(const QuantizedAdamWArgs& a, double* deviceSums, double* deviceErrors, cudaStream_t stream) {
  constexpr int kThreads = Layout == MomentLayout::DynamicTree4bit ? static_cast<int>(kDynamicTree4Block) : kMaxThreads;
  const int64_t blocks = (a.n + kThreads - 1) / kThreads;
  const int grid = static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
  quantizedAdamWKernel<Fp32Weights, Rule, Layout, kThreads><<<grid, kThreads, 0, stream>>>(a, deviceSums, deviceErrors);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string("quantized AdamW kernel: ") + cudaGetErrorString(err));
}

template <bool Fp32Weights, WeightRule Rule>
void launchLayout(const QuantizedAdamWArgs& a, double* sums, double* errors, cudaStream_t s) {
  switch (a.layout) {
    case MomentLayout::DynamicTree8bit: launch<Fp32Weights, Rule, MomentLayout::DynamicTree8bit>(a, sums, errors, s); break;
    case MomentLayout::DynamicTree4bit: launch<Fp32Weights, Rule, MomentLayout::DynamicTree4bit>(a, sums, errors, s); break;
    case MomentLayout::Fp8E4m3: launch<Fp32Weights, Rule, MomentLayout::Fp8E4m3>(a, sums, errors, s); break;
    case MomentLayout::PlainFp32: launch<Fp32Weights, Rule, MomentLayout::PlainFp32>(a, sums, errors, s); break;
    case MomentLayout::PlainBf16: launch<Fp32Weights, Rule, MomentLayout::PlainBf16>(a, sums, errors, s); break;
  }
}

}  // namespace

void quantizedAdamWCuda(const QuantizedAdamWArgs& a, double* deviceSums, double* deviceMomentErrors, void* stream) {
  if (a.n == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  if (a.fp32Weights) {
    launchLayout<true, WeightRule::Nearest>(a, deviceSums, deviceMomentErrors, s);
    return;
  }
  switch (a.rule) {
    case WeightRule::Kahan: launchLayout<false, WeightRule::Kahan>(a, deviceSums, deviceMomentErrors, s); break;
    case WeightRule::Stochastic:
      launchLayout<false, WeightRule::Stochastic>(a, deviceSums, deviceMomentErrors, s);
      break;
    case WeightRule::Nearest:
    case WeightRule::Master: launchLayout<false, WeightRule::Nearest>(a, deviceSums, deviceMomentErrors, s); break;
  }
}

}  // namespace plab::kernels
