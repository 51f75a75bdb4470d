// fp16WriteCounts: the magnitude tests of kernels/fp16_bits.h (compares
// only: the loop vectorises) summed over fixed blocks on torch's thread
// pool; the sum does not depend on the number of threads.
#include "precision/fp16_counts.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision/kernels/fp16_bits.h"
#include "util/parallel_chunks.h"

namespace plab {
namespace {

constexpr int64_t kBlock = 1 << 14;

float loadValue(const float* p, int64_t i) { return p[i]; }
float loadValue(const uint16_t* p, int64_t i) { return kernels::bf16ToFloat(p[i]); }

template <typename T>
Fp16WriteCounts blockCounts(const T* in, int64_t begin, int64_t end) {
  int64_t nonZeroFinite = 0, flushed = 0, overflowed = 0, nonFinite = 0;
  for (int64_t i = begin; i < end; ++i) {
    const uint32_t magnitude = kernels::bitsOf(loadValue(in, i)) & 0x7FFFFFFFu;
    nonZeroFinite += magnitude - 1u < 0x7F7FFFFFu;
    nonFinite += magnitude >= 0x7F800000u;
    flushed += kernels::fp16FlushesToZero(magnitude);
    overflowed += kernels::fp16Overflows(magnitude);
  }
  Fp16WriteCounts c;
  c.elements = end - begin;
  c.nonZeroFinite = nonZeroFinite;
  c.flushedToZero = flushed;
  c.overflowed = overflowed;
  c.nonFinite = nonFinite;
  return c;
}

template <typename T>
Fp16WriteCounts countCpu(const T* in, int64_t n) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<Fp16WriteCounts> partial(static_cast<size_t>(blocks));
  parallelChunks(blocks, 1, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b)
      partial[static_cast<size_t>(b)] = blockCounts(in, b * kBlock, std::min(n, (b + 1) * kBlock));
  });
  Fp16WriteCounts sum;
  for (const Fp16WriteCounts& p : partial) sum.add(p);
  return sum;
}

void requireFloatInput(const torch::Tensor& values) {
  if (values.scalar_type() != torch::kFloat32 && values.scalar_type() != torch::kBFloat16)
    throw std::invalid_argument("fp16WriteCounts: expected fp32 or bf16 values, got " +
                         std::string(c10::toString(values.scalar_type())));
}

}  // namespace

Fp16WriteCounts fp16WriteCounts(const torch::Tensor& values) {
  requireFloatInput(values);
  if (!values.device().is_cpu()) return fp16WriteCountsByTensorOps(values);
  const torch::Tensor x = values.contiguous();
  if (x.scalar_type() == torch::kFloat32) return countCpu(x.const_data_ptr<float>(), x.numel());
  return countCpu(static_cast<const uint16_t*>(x.const_data_ptr()), x.numel());
}

Fp16WriteCounts fp16WriteCountsByTensorOps(const torch::Tensor& values) {
  requireFloatInput(values);
  torch::NoGradGuard noGrad;
  const torch::Tensor x = values.to(torch::kFloat32);
  const torch::Tensor h = x.to(torch::kFloat16);
  const torch::Tensor finite = torch::isfinite(x);
  const torch::Tensor nonZeroFinite = finite & (x != 0);
  Fp16WriteCounts c;
  c.elements = x.numel();
  c.nonZeroFinite = nonZeroFinite.sum().item<int64_t>();
  c.flushedToZero = (nonZeroFinite & (h == 0)).sum().item<int64_t>();
  c.overflowed = (finite & torch::isinf(h)).sum().item<int64_t>();
  c.nonFinite = c.elements - finite.sum().item<int64_t>();
  return c;
}

}  // namespace plab
