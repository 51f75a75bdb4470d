#include "formats/gemm_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <vector>

#include "util/parallel_chunks.h"
#include "formats/quantize_kernels.h"

namespace plab {
namespace {

using formats::Scheme;

// Above this scaled magnitude the element would round past the type's
// largest value (the midpoint to the next power-of-two step): it was clamped.
float saturationThreshold(Scheme s) {
  switch (s) {
    case Scheme::Fp8E4m3Tensor:
    case Scheme::Mxfp8: return 464.0f;     // 448 and the next step 480
    case Scheme::Fp8E5m2Tensor: return 59392.0f;  // 57344 and 61440
    case Scheme::Mxfp4:
    case Scheme::Nvfp4: return 7.0f;       // 6 and 8
    case Scheme::Bf16: break;
  }
  return std::numeric_limits<float>::infinity();
}

struct Sums {
  int64_t finite = 0, nonZero = 0, underflow = 0, saturated = 0;
  double errorSquared = 0, normSquared = 0;
  float amax = 0, smallestNonZero = std::numeric_limits<float>::infinity();
  double scaleMin = std::numeric_limits<double>::infinity(), scaleMax = 0;  // dequantization multipliers

  void add(const Sums& o) {
    finite += o.finite;
    nonZero += o.nonZero;
    underflow += o.underflow;
    saturated += o.saturated;
    errorSquared += o.errorSquared;
    normSquared += o.normSquared;
    amax = std::max(amax, o.amax);
    smallestNonZero = std::min(smallestNonZero, o.smallestNonZero);
    scaleMin = std::min(scaleMin, o.scaleMin);
    scaleMax = std::max(scaleMax, o.scaleMax);
  }
};

// One block (or a whole row for per-tensor schemes): `factor` takes x to the
// element grid, `multiplier` takes an element back.
void addBlock(const float* x, const float* q, int64_t n, float factor, double multiplier, float threshold, Sums& s) {
  float blockAmax = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (!std::isfinite(v)) continue;
    const float a = std::fabs(v);
    ++s.finite;
    if (a > 0) {
      ++s.nonZero;
      if (q[i] == 0.0f) ++s.underflow;
      s.smallestNonZero = std::min(s.smallestNonZero, a);
    }
    if (a * factor > threshold) ++s.saturated;
    const double e = double(q[i]) - double(v);
    s.errorSquared += e * e;
    s.normSquared += double(v) * double(v);
    blockAmax = std::max(blockAmax, a);
  }
  s.amax = std::max(s.amax, blockAmax);
  if (blockAmax > 0 && std::isfinite(multiplier) && multiplier > 0) {
    s.scaleMin = std::min(s.scaleMin, multiplier);
    s.scaleMax = std::max(s.scaleMax, multiplier);
  }
}

// `t` on the CPU, contiguous, fp32 or bf16 (other types converted to fp32).
torch::Tensor readableOnCpu(const torch::Tensor& t) {
  torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
  return c.scalar_type() == torch::kFloat32 || c.scalar_type() == torch::kBFloat16 ? c : c.to(torch::kFloat32);
}

// Row r of a readableOnCpu tensor as fp32: in place, or converted into `buffer`.
const float* rowOf(const torch::Tensor& t, int64_t r, int64_t cols, std::vector<float>& buffer) {
  if (t.scalar_type() == torch::kFloat32) return t.data_ptr<float>() + r * cols;
  const auto* bits = reinterpret_cast<const uint16_t*>(t.data_ptr<at::BFloat16>()) + r * cols;
  for (int64_t i = 0; i < cols; ++i) buffer[static_cast<std::size_t>(i)] = kernels::bf16ToFloat(bits[i]);
  return buffer.data();
}

// One row's dequantized values from a GEMM operand's row (see
// measureGemmOperand), into `out`: the schemes with a tensor scale (an MX or
// bf16 operand is its dequantized values already).
void dequantizeOperandRow(const float* op, int64_t cols, Scheme scheme, const uint8_t* rowCodes, float tensorScale,
                          float* out) {
  if (scheme == Scheme::Fp8E4m3Tensor || scheme == Scheme::Fp8E5m2Tensor) {
    for (int64_t i = 0; i < cols; ++i) out[i] = op[i] / tensorScale;
  } else if (scheme == Scheme::Nvfp4) {
    for (int64_t i = 0; i < cols; ++i) {
      const uint8_t code = rowCodes[i / formats::kNvfp4Block];
      const float blockScale = formats::e4m3ToFloat(code);
      // A zero block scale leaves only (signed) zeros: the value is the operand.
      out[i] = blockScale == 0.0f ? op[i] : (op[i] / blockScale) * formats::nvfp4Multiplier(code, tensorScale);
    }
  }
}

GemmOperandStats measure(const torch::Tensor& x, const QuantizedTensor& q, GemmFormat format, GemmRole role,
                         bool operandValues) {
  // fp32 and bf16 are read as they are, a row at a time (no full-size fp32
  // copies: a bf16 layer's operands are 13-51 M elements at 16 M parameters).
  const torch::Tensor x32 = readableOnCpu(x), q32 = readableOnCpu(q.values);
  const torch::Tensor codes = q.blockScales.defined() ? q.blockScales.to(torch::kCPU).contiguous() : torch::Tensor();
  const float tensorScale = q.tensorScale.defined() ? q.tensorScale.item<float>() : 1.0f;
  const Scheme scheme = formats::schemeOf(format, role);
  const int64_t cols = x32.dim() == 0 ? 1 : x32.size(-1);
  const int64_t rows = cols == 0 ? 0 : x32.numel() / cols;
  const int64_t block = formats::blockSizeOf(scheme);
  const int64_t perRow = formats::blocksPerRow(scheme, cols);
  const float threshold = saturationThreshold(scheme);
  const bool perTensor = scheme == Scheme::Fp8E4m3Tensor || scheme == Scheme::Fp8E5m2Tensor;
  const bool dequantize = operandValues && formats::hasTensorScale(scheme);
  const uint8_t* cp = codes.defined() ? codes.data_ptr<uint8_t>() : nullptr;

  std::map<int64_t, Sums> parts;  // by first row: merged in row order, whatever the threads
  std::mutex merge;
  parallelChunks(rows, 16, [&](int64_t first, int64_t last) {
    Sums s;
    std::vector<float> xRow(static_cast<std::size_t>(cols)), qRow(static_cast<std::size_t>(cols));
    std::vector<float> dequantized(dequantize ? static_cast<std::size_t>(cols) : 0);
    for (int64_t r = first; r < last; ++r) {
      const float* xr = rowOf(x32, r, cols, xRow);
      const float* qr = rowOf(q32, r, cols, qRow);
      if (dequantize) {
        dequantizeOperandRow(qr, cols, scheme, cp ? cp + r * perRow : nullptr, tensorScale, dequantized.data());
        qr = dequantized.data();
      }
      if (block == 0) {
        const float factor = perTensor ? tensorScale : 1.0f;
        const double multiplier = perTensor ? 1.0 / double(tensorScale) : 0.0;
        addBlock(xr, qr, cols, factor, multiplier, threshold, s);
        continue;
      }
      for (int64_t b = 0; b < perRow; ++b) {
        const uint8_t code = cp[r * perRow + b];
        float factor = 1;
        double multiplier = 1;
        if (scheme == Scheme::Nvfp4) {
          factor = formats::nvfp4Reciprocal(code, tensorScale);
          multiplier = formats::nvfp4Multiplier(code, tensorScale);
        } else {
          factor = 1.0f / formats::mxDivisor(code);
          multiplier = formats::mxMultiplier(code);
        }
        const int64_t c0 = b * block, n = std::min(block, cols - c0);
        addBlock(xr + c0, qr + c0, n, factor, multiplier, threshold, s);
      }
    }
    std::lock_guard<std::mutex> lock(merge);
    parts[first] = s;
  });
  Sums total;
  for (const auto& [first, s] : parts) total.add(s);

  GemmOperandStats out;
  out.role = role;
  out.format = format;
  out.underflow = total.nonZero > 0 ? double(total.underflow) / double(total.nonZero) : 0.0;
  out.saturation = total.finite > 0 ? double(total.saturated) / double(total.finite) : 0.0;
  out.dynamicRangeLog2 = total.nonZero > 0 ? std::log2(double(total.amax)) - std::log2(double(total.smallestNonZero)) : 0.0;
  out.relError = total.normSquared > 0 ? std::sqrt(total.errorSquared / total.normSquared) : 0.0;
  if (total.scaleMax > 0) {
    out.scaleLog2Min = std::log2(total.scaleMin);
    out.scaleLog2Max = std::log2(total.scaleMax);
  }
  return out;
}

}  // namespace

GemmOperandStats measureQuantizedOperand(const torch::Tensor& x, const QuantizedTensor& q, GemmFormat format,
                                         GemmRole role) {
  return measure(x, q, format, role, false);
}

GemmOperandStats measureGemmOperand(const torch::Tensor& x, const GemmOperand& op, GemmFormat format,
                                    GemmRole role) {
  QuantizedTensor q;
  q.values = op.values;
  q.blockScales = op.blockScales;
  q.tensorScale = op.tensorScale;
  return measure(x, q, format, role, true);
}

void GemmStatsCollector::arm() {
  std::lock_guard<std::mutex> lock(mutex_);
  seen_.clear();
  stats_.clear();
  armed_.store(true);
}

std::vector<GemmOperandStats> GemmStatsCollector::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_.store(false);
  seen_.clear();
  return std::move(stats_);
}

void GemmStatsCollector::record(const std::string& layer, GemmRole role, GemmFormat format, const torch::Tensor& x,
                                const QuantizedTensor& q) {
  recordOnce(layer, role, [&] { return measureQuantizedOperand(x, q, format, role); });
}

void GemmStatsCollector::record(const std::string& layer, GemmRole role, GemmFormat format, const torch::Tensor& x,
                                const GemmOperand& op) {
  recordOnce(layer, role, [&] { return measureGemmOperand(x, op, format, role); });
}

void GemmStatsCollector::recordOnce(const std::string& layer, GemmRole role,
                                    const std::function<GemmOperandStats()>& measureIt) {
  if (!armed()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!seen_.insert({layer, role}).second) return;
  GemmOperandStats s = measureIt();
  s.layer = layer;
  stats_.push_back(std::move(s));
}

}  // namespace plab
