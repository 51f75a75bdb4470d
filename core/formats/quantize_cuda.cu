// CUDA twin of the GEMM formats' fake quantization: the per-block and
// per-element functions of quantize_kernels.h, one thread per block (block
// schemes) or grid-stride over elements. The per-tensor schemes first reduce
// the amax into one uint32 (magnitude bits, NaN largest) with atomicMax;
// every thread then derives the same tensor scale from it. Built with
// --fmad=false (core/CMakeLists.txt) so that it rounds as the CPU twin.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "formats/quantize_kernels.h"

namespace plab::formats {
namespace {

constexpr int kThreads = 256;

template <typename In>
__global__ void amaxKernel(const In* in, int64_t n, uint32_t* amaxBits) {
  __shared__ uint32_t shared[kThreads];
  uint32_t mine = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint32_t m = magnitudeBits(loadInput(in, i));
    mine = m > mine ? m : mine;
  }
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half && shared[threadIdx.x + half] > shared[threadIdx.x])
      shared[threadIdx.x] = shared[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicMax(amaxBits, shared[0]);
}

__device__ float tensorScaleFrom(Scheme s, const uint32_t* amaxBits) {
  return hasTensorScale(s) ? tensorScaleOf(s, amaxOfBits(*amaxBits)) : 1.0f;
}

template <typename In>
__global__ void elementKernel(QuantizeArgs a, const In* in, const uint32_t* amaxBits, float* tensorScaleOut) {
  const float scale = tensorScaleFrom(a.scheme, amaxBits);
  if (blockIdx.x == 0 && threadIdx.x == 0) *tensorScaleOut = scale;
  const int64_t n = a.rows * a.cols;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    quantizeElements(a, in, a.out, scale, i, i + 1);
}

template <typename In>
__global__ void blockKernel(QuantizeArgs a, const In* in, const uint32_t* amaxBits, float* tensorScaleOut) {
  const float scale = tensorScaleFrom(a.scheme, amaxBits);
  if (blockIdx.x == 0 && threadIdx.x == 0) *tensorScaleOut = scale;
  const int64_t blocks = a.rows * blocksPerRow(a.scheme, a.cols);
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x)
    quantizeBlock(a, in, a.out, scale, b);
}

int gridFor(int64_t items) {
  const int64_t wanted = (items + kThreads - 1) / kThreads;
  return static_cast<int>(wanted < 65535 ? (wanted > 0 ? wanted : 1) : 65535);
}

void check(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

template <typename In>
void launch(const QuantizeArgs& a, const In* in, uint32_t* amaxBits, float* tensorScale, cudaStream_t stream) {
  const int64_t n = a.rows * a.cols;
  if (cudaMemsetAsync(amaxBits, 0, sizeof(uint32_t), stream) != cudaSuccess) check("quantize: clearing the amax");
  if (hasTensorScale(a.scheme) && n > 0) {
    amaxKernel<In><<<gridFor(n), kThreads, 0, stream>>>(in, n, amaxBits);
    check("quantize amax kernel");
  }
  if (blockSizeOf(a.scheme) == 0) {
    elementKernel<In><<<gridFor(n), kThreads, 0, stream>>>(a, in, amaxBits, tensorScale);
  } else {
    blockKernel<In><<<gridFor(a.rows * blocksPerRow(a.scheme, a.cols)), kThreads, 0, stream>>>(a, in, amaxBits,
                                                                                               tensorScale);
  }
  check("quantize kernel");
}

}  // namespace

void quantizeCuda(const QuantizeArgs& a, uint32_t* deviceAmaxBits, float* deviceTensorScale, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (a.inBf16)
    launch(a, static_cast<const uint16_t*>(a.in), deviceAmaxBits, deviceTensorScale, s);
  else
    launch(a, static_cast<const float*>(a.in), deviceAmaxBits, deviceTensorScale, s);
}

}  // namespace plab::formats
