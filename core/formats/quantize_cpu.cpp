// The CPU twin of the GEMM formats' fake quantization: the per-block and
// per-element functions of quantize_kernels.h over torch's thread pool.
// Every block or element is computed the same way whichever thread runs it,
// so the result does not depend on the thread count.
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>

#include "formats/quantize_kernels.h"

namespace plab::formats {
namespace {

constexpr int64_t kChunk = 1 << 14;       // elements per task of the elementwise passes
constexpr int64_t kBlocksPerTask = 512;   // blocks per task of the block schemes

template <typename In>
float amaxOf(const In* in, int64_t n) {
  std::atomic<uint32_t> largest{0};
  at::parallel_for(0, (n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
    uint32_t mine = 0;
    for (int64_t i = first * kChunk; i < std::min(n, last * kChunk); ++i) mine = std::max(mine, magnitudeBits(loadInput(in, i)));
    uint32_t seen = largest.load();
    while (mine > seen && !largest.compare_exchange_weak(seen, mine)) {
    }
  });
  return amaxOfBits(largest.load());
}

template <typename In>
float run(const QuantizeArgs& a, const In* in) {
  const int64_t n = a.rows * a.cols;
  const float tensorScale = hasTensorScale(a.scheme) ? tensorScaleOf(a.scheme, amaxOf(in, n)) : 1.0f;
  if (blockSizeOf(a.scheme) == 0) {
    at::parallel_for(0, (n + kChunk - 1) / kChunk, 1, [&](int64_t first, int64_t last) {
      quantizeElements(a, in, tensorScale, first * kChunk, std::min(n, last * kChunk));
    });
    return tensorScale;
  }
  const int64_t blocks = a.rows * blocksPerRow(a.scheme, a.cols);
  at::parallel_for(0, blocks, kBlocksPerTask, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b) quantizeBlock(a, in, tensorScale, b);
  });
  return tensorScale;
}

}  // namespace

float quantizeCpu(const QuantizeArgs& a) {
  if (a.rows * a.cols == 0) return hasTensorScale(a.scheme) ? tensorScaleOf(a.scheme, 0.0f) : 1.0f;
  return a.inBf16 ? run(a, static_cast<const uint16_t*>(a.in)) : run(a, static_cast<const float*>(a.in));
}

}  // namespace plab::formats
