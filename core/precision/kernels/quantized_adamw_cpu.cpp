// CPU loop of the AdamW step with block-wise quantized moments
// (quantized_adamw.h). Compiled with -ffp-contract=off and -fno-math-errno
// like the fused twins: every operation rounds once, as torch's tensor ops
// (the fused multiply-add of torch's lerp is explicit, fmaf).
#include <algorithm>
#include <vector>

#include "formats/fp8_element.h"
#include "precision/kernels/dynamic_tree_4bit.h"
#include "precision/kernels/dynamic_tree_8bit.h"
#include "precision/kernels/quantized_adamw.h"
#include "util/parallel_chunks.h"

namespace plab::kernels {
namespace {

constexpr int64_t kTask = 1 << 14;  // elements per parallel task: whole blocks, whole Philox groups
static_assert(kTask % kDynamicTreeBlock == 0 && kTask % kDynamicTree4Block == 0 && kTask % 8 == 0,
              "tasks hold whole blocks");
static_assert(kDynamicTree4Block <= kDynamicTreeBlock, "a block fits the step's buffers");

// The elements stepped together: one quantization block (the plain layouts
// take the 8-bit store's).
int64_t blockOf(MomentLayout layout) {
  return layout == MomentLayout::DynamicTree4bit ? kDynamicTree4Block : kDynamicTreeBlock;
}

void loadMoments(const QuantizedAdamWArgs& a, int64_t first, int64_t len, float* m, float* v) {
  switch (a.layout) {
    case MomentLayout::DynamicTree8bit: {
      const uint8_t* mc = static_cast<const uint8_t*>(a.m) + first;
      const uint8_t* vc = static_cast<const uint8_t*>(a.v) + first;
      const float ms = a.mScale[first / kDynamicTreeBlock], vs = a.vScale[first / kDynamicTreeBlock];
      for (int64_t j = 0; j < len; ++j) {
        m[j] = dequantizeDynamicTree(mc[j], a.signedCode, ms);
        v[j] = dequantizeDynamicTree(vc[j], a.unsignedCode, vs);
      }
      break;
    }
    case MomentLayout::DynamicTree4bit: {
      const uint8_t* mc = static_cast<const uint8_t*>(a.m);
      const uint8_t* vc = static_cast<const uint8_t*>(a.v);
      const float ms = a.mScale[first / kDynamicTree4Block], vs = a.vScale[first / kDynamicTree4Block];
      for (int64_t j = 0; j < len; ++j) {
        m[j] = dequantizeDynamicTree(unpack4(mc, first + j), a.signedCode, ms);
        v[j] = dequantizeDynamicTree(unpack4(vc, first + j), a.unsignedCode, vs);
      }
      break;
    }
    case MomentLayout::Fp8E4m3: {  // torchao: codes.float() * scale
      const uint8_t* mc = static_cast<const uint8_t*>(a.m) + first;
      const uint8_t* vc = static_cast<const uint8_t*>(a.v) + first;
      const float ms = a.mScale[first / kDynamicTreeBlock], vs = a.vScale[first / kDynamicTreeBlock];
      for (int64_t j = 0; j < len; ++j) {
        m[j] = formats::e4m3ToFloat(mc[j]) * ms;
        v[j] = formats::e4m3ToFloat(vc[j]) * vs;
      }
      break;
    }
    case MomentLayout::PlainFp32:
      for (int64_t j = 0; j < len; ++j) {
        m[j] = static_cast<const float*>(a.m)[first + j];
        v[j] = static_cast<const float*>(a.v)[first + j];
      }
      break;
    case MomentLayout::PlainBf16:
      for (int64_t j = 0; j < len; ++j) {
        m[j] = bf16ToFloat(static_cast<const uint16_t*>(a.m)[first + j]);
        v[j] = bf16ToFloat(static_cast<const uint16_t*>(a.v)[first + j]);
      }
      break;
  }
}

// One 4-bit block (len even, as blocks are): torchao's scale_tensor, then
// quantize_4bit_with_qmap on x / scale, packed two codes per byte.
float quantize4Block(const float* x, int64_t len, const float* table, uint8_t* packed) {
  const float scale = dynamicTreeScale(x, len);
  for (int64_t j = 0; j < len; j += 2)
    packed[j / 2] = static_cast<uint8_t>((dynamicTree4Code(x[j] / scale, table) << 4) |
                                         dynamicTree4Code(x[j + 1] / scale, table));
  return scale;
}

// One fp8 block: torchao's quantize_fp8, scale = max |x| (at least 1e-12)
// / 448 (e4m3's largest), codes = e4m3(x / scale) as torch casts.
float quantizeFp8Block(const float* x, int64_t len, uint8_t* codes) {
  const float scale = dynamicTreeScale(x, len) / 448.0f;
  for (int64_t j = 0; j < len; ++j) codes[j] = formats::e4m3FromFloat(x[j] / scale);
  return scale;
}

void storeMoments(const QuantizedAdamWArgs& a, int64_t first, int64_t len, const float* m, const float* v) {
  switch (a.layout) {
    case MomentLayout::DynamicTree8bit:
      a.mScale[first / kDynamicTreeBlock] =
          quantizeDynamicTreeBlock(m, len, a.signedCode, a.signedStarts, static_cast<uint8_t*>(a.m) + first);
      a.vScale[first / kDynamicTreeBlock] =
          quantizeDynamicTreeBlock(v, len, a.unsignedCode, a.unsignedStarts, static_cast<uint8_t*>(a.v) + first);
      break;
    case MomentLayout::Fp8E4m3:
      a.mScale[first / kDynamicTreeBlock] = quantizeFp8Block(m, len, static_cast<uint8_t*>(a.m) + first);
      a.vScale[first / kDynamicTreeBlock] = quantizeFp8Block(v, len, static_cast<uint8_t*>(a.v) + first);
      break;
    case MomentLayout::DynamicTree4bit:
      a.mScale[first / kDynamicTree4Block] = quantize4Block(m, len, a.signedCode, static_cast<uint8_t*>(a.m) + first / 2);
      a.vScale[first / kDynamicTree4Block] = quantize4Block(v, len, a.unsignedCode, static_cast<uint8_t*>(a.v) + first / 2);
      break;
    case MomentLayout::PlainFp32:
      for (int64_t j = 0; j < len; ++j) {
        static_cast<float*>(a.m)[first + j] = m[j];
        static_cast<float*>(a.v)[first + j] = v[j];
      }
      break;
    case MomentLayout::PlainBf16:
      for (int64_t j = 0; j < len; ++j) {
        static_cast<uint16_t*>(a.m)[first + j] = bf16Nearest(m[j]);
        static_cast<uint16_t*>(a.v)[first + j] = bf16Nearest(v[j]);
      }
      break;
  }
}

// What storing the block's new moments m and v (fp32, as the step computed
// them) lost: the stored values read back as the next step will read them,
// against m and v, in fp64 (the difference of two fp32 values is exact).
void addMomentErrors(const QuantizedAdamWArgs& a, int64_t first, int64_t len, const float* m, const float* v,
                     MomentErrorSums& e) {
  float mq[kDynamicTreeBlock], vq[kDynamicTreeBlock];
  loadMoments(a, first, len, mq, vq);
  for (int64_t j = 0; j < len; ++j) {
    const double dm = static_cast<double>(mq[j]) - m[j], dv = static_cast<double>(vq[j]) - v[j];
    e.mErrorSq += dm * dm;
    e.mSq += static_cast<double>(m[j]) * m[j];
    e.vErrorSq += dv * dv;
    e.vSq += static_cast<double>(v[j]) * v[j];
  }
}

// Steps [begin, end): a block of moments at a time. Statistics in one fp64
// sum per term, in element order (a fixed order per task).
template <bool Fp32Weights, WeightRule Rule>
void stepRange(const QuantizedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums, MomentErrorSums* errors) {
  float m[kDynamicTreeBlock], v[kDynamicTreeBlock];
  Philox4 group{};
  const int64_t block = blockOf(a.layout);
  for (int64_t c = begin; c < end; c += block) {
    const int64_t len = std::min(end - c, block);
    loadMoments(a, c, len, m, v);
    for (int64_t j = 0; j < len; ++j) {
      const int64_t i = c + j;
      float before, grad;
      if (Fp32Weights) {
        before = static_cast<const float*>(a.param)[i];
        grad = static_cast<const float*>(a.grad)[i];
      } else {
        before = bf16ToFloat(static_cast<const uint16_t*>(a.param)[i]);
        grad = bf16ToFloat(static_cast<const uint16_t*>(a.grad)[i]);
      }
      const float updated = torchaoAdamwElement(before, grad, m[j], v[j], a.s);
      float after = updated;
      if (Fp32Weights) {
        static_cast<float*>(a.param)[i] = updated;
      } else {
        if (Rule == WeightRule::Stochastic && i % 8 == 0) group = randomGroup(a.random, static_cast<uint64_t>(i / 8));
        const uint32_t r = Rule == WeightRule::Stochastic ? random16Of(group, static_cast<uint64_t>(i)) : 0u;
        const float comp = Rule == WeightRule::Kahan ? bf16ToFloat(a.comp[i]) : 0.0f;
        const Bf16Write w = writeBf16<Rule>(before, comp, updated, r);
        static_cast<uint16_t*>(a.param)[i] = w.weight;
        if (Rule == WeightRule::Kahan) a.comp[i] = w.comp;
        after = bf16ToFloat(w.weight);
      }
      const double intended = static_cast<double>(updated) - static_cast<double>(before);
      if (sums) {
        const double change = static_cast<double>(after) - static_cast<double>(before);
        if (intended != 0) {
          sums->intendedNonZero += 1;
          if (after == before) sums->roundedAway += 1;
        }
        sums->intendedSq += intended * intended;
        sums->changeSq += change * change;
      }
      if (a.windowSum && i % a.windowStride == 0) a.windowSum[i / a.windowStride] += intended;
    }
    storeMoments(a, c, len, m, v);
    if (errors) addMomentErrors(a, c, len, m, v, *errors);
  }
}

using Range = void (*)(const QuantizedAdamWArgs&, int64_t, int64_t, StepSums*, MomentErrorSums*);

Range rangeFor(const QuantizedAdamWArgs& a) {
  if (a.fp32Weights) return stepRange<true, WeightRule::Nearest>;
  switch (a.rule) {
    case WeightRule::Kahan: return stepRange<false, WeightRule::Kahan>;
    case WeightRule::Stochastic: return stepRange<false, WeightRule::Stochastic>;
    case WeightRule::Nearest:
    case WeightRule::Master: break;
  }
  return stepRange<false, WeightRule::Nearest>;
}

}  // namespace

void quantizedAdamWCpu(const QuantizedAdamWArgs& a, StepSums* sums, MomentErrorSums* momentErrors) {
  const Range range = rangeFor(a);
  const int64_t tasks = (a.n + kTask - 1) / kTask;
  std::vector<StepSums> partial(sums ? static_cast<size_t>(tasks) : 0);
  std::vector<MomentErrorSums> errors(momentErrors ? static_cast<size_t>(tasks) : 0);
  parallelChunks(tasks, 1, [&](int64_t first, int64_t last) {
    for (int64_t t = first; t < last; ++t) {
      const size_t k = static_cast<size_t>(t);
      range(a, t * kTask, std::min(a.n, (t + 1) * kTask), sums ? &partial[k] : nullptr,
            momentErrors ? &errors[k] : nullptr);
    }
  });
  if (sums)
    for (const StepSums& p : partial) sums->add(p);
  if (momentErrors)
    for (const MomentErrorSums& e : errors) momentErrors->add(e);
}

}  // namespace plab::kernels
