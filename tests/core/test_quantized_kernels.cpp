// The quantized-moment step's CPU variants (kernels/quantized_adamw_cpu_loop.h:
// baseline, AVX2, AVX-512, those this CPU runs) against a scalar statement
// of the same step, one element at a time with the pure functions of
// dynamic_tree_8bit.h / dynamic_tree_4bit.h / fp8_element.h /
// adamw_element.h (the loop before it was vectorised): every weight,
// Kahan buffer, code, scale, statistic, window sum and moment-error sum bit
// for bit, in every store and weight rule, over a few steps, with inputs
// that reach the code search's corners (values on and half-way between code
// values, NaN, infinities, -0, subnormals, all-zero blocks) and with a
// dense table that sends the vector search to its scalar fallback. Also the
// element functions the loop vectorises against the ones they replace: the
// 4-bit code by counting against torchao's search, the 8-bit code by
// thresholds against dynamicTreeCode. reference_optimizer_states holds the
// step to torchao itself.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "formats/fp8_element.h"
#include "precision/dynamic_tree_code.h"
#include "precision/dynamic_tree_thresholds.h"
#include "precision/kernels/quantized_adamw_cpu.h"
#include "precision/kernels/quantized_adamw_element.h"
#include "support/test_registry.h"

using namespace plab;
using namespace plab::kernels;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// The step as the scalar loop wrote it: per block, dequantize, step each
// element, quantize with dynamicTreeScale and the scalar code functions;
// the sums in element order within each parallel task of 2^14 elements,
// the tasks' sums added in task order.
void scalarStep(const QuantizedAdamWArgs& a, StepSums& total, MomentErrorSums& totalErrors) {
  StepSums sums;
  MomentErrorSums errors;
  const int64_t block = a.layout == MomentLayout::DynamicTree4bit ? kDynamicTree4Block : kDynamicTreeBlock;
  uint8_t* mc = static_cast<uint8_t*>(a.m);
  uint8_t* vc = static_cast<uint8_t*>(a.v);
  const auto load = [&](int64_t i, bool isM) -> float {
    const uint8_t* c = isM ? mc : vc;
    const float* table = isM ? a.signedCode : a.unsignedCode;
    switch (a.layout) {
      case MomentLayout::DynamicTree8bit:
        return dequantizeDynamicTree(c[i], table, (isM ? a.mScale : a.vScale)[i / kDynamicTreeBlock]);
      case MomentLayout::DynamicTree4bit:
        return dequantizeDynamicTree(unpack4(c, i), table, (isM ? a.mScale : a.vScale)[i / kDynamicTree4Block]);
      case MomentLayout::Fp8E4m3:
        return formats::e4m3ToFloat(c[i]) * (isM ? a.mScale : a.vScale)[i / kDynamicTreeBlock];
      case MomentLayout::PlainFp32: return static_cast<const float*>(isM ? a.m : a.v)[i];
      case MomentLayout::PlainBf16: return bf16ToFloat(static_cast<const uint16_t*>(isM ? a.m : a.v)[i]);
    }
    return 0;
  };
  const auto store = [&](int64_t first, int64_t len, const float* x, bool isM) {
    uint8_t* c = isM ? mc : vc;
    const float* table = isM ? a.signedCode : a.unsignedCode;
    float* scales = isM ? a.mScale : a.vScale;
    switch (a.layout) {
      case MomentLayout::DynamicTree8bit:
        scales[first / block] =
            quantizeDynamicTreeBlock(x, len, table, isM ? a.signedStarts : a.unsignedStarts, c + first);
        break;
      case MomentLayout::DynamicTree4bit: {
        const float scale = dynamicTreeScale(x, len);
        for (int64_t j = 0; j < len; j += 2)
          c[(first + j) / 2] = static_cast<uint8_t>((dynamicTree4Code(x[j] / scale, table) << 4) |
                                                    dynamicTree4Code(x[j + 1] / scale, table));
        scales[first / block] = scale;
        break;
      }
      case MomentLayout::Fp8E4m3: {
        const float scale = dynamicTreeScale(x, len) / 448.0f;
        for (int64_t j = 0; j < len; ++j) c[first + j] = formats::e4m3FromFloat(x[j] / scale);
        scales[first / block] = scale;
        break;
      }
      case MomentLayout::PlainFp32:
        for (int64_t j = 0; j < len; ++j) static_cast<float*>(isM ? a.m : a.v)[first + j] = x[j];
        break;
      case MomentLayout::PlainBf16:
        for (int64_t j = 0; j < len; ++j) static_cast<uint16_t*>(isM ? a.m : a.v)[first + j] = bf16Nearest(x[j]);
        break;
    }
  };
  std::vector<float> m(block), v(block);
  for (int64_t c = 0; c < a.n; c += block) {
    if (c % 16384 == 0 && c > 0) {
      total.add(sums);
      totalErrors.add(errors);
      sums = StepSums();
      errors = MomentErrorSums();
    }
    const int64_t len = std::min(a.n - c, block);
    for (int64_t j = 0; j < len; ++j) {
      m[j] = load(c + j, true);
      v[j] = load(c + j, false);
    }
    for (int64_t j = 0; j < len; ++j) {
      const int64_t i = c + j;
      const float before = a.fp32Weights ? static_cast<float*>(a.param)[i] : bf16ToFloat(static_cast<uint16_t*>(a.param)[i]);
      const float grad =
          a.fp32Weights ? static_cast<const float*>(a.grad)[i] : bf16ToFloat(static_cast<const uint16_t*>(a.grad)[i]);
      const float updated = torchaoAdamwElement(before, grad, m[j], v[j], a.s);
      float after = updated;
      if (a.fp32Weights) {
        static_cast<float*>(a.param)[i] = updated;
      } else {
        Bf16Write w{};
        if (a.rule == WeightRule::Stochastic)
          w = writeBf16<WeightRule::Stochastic>(before, 0, updated,
                                                random16Of(randomGroup(a.random, static_cast<uint64_t>(i / 8)), static_cast<uint64_t>(i)));
        else if (a.rule == WeightRule::Kahan)
          w = writeBf16<WeightRule::Kahan>(before, bf16ToFloat(a.comp[i]), updated, 0);
        else
          w = writeBf16<WeightRule::Nearest>(before, 0, updated, 0);
        static_cast<uint16_t*>(a.param)[i] = w.weight;
        if (a.rule == WeightRule::Kahan) a.comp[i] = w.comp;
        after = bf16ToFloat(w.weight);
      }
      const double intended = static_cast<double>(updated) - static_cast<double>(before);
      const double change = static_cast<double>(after) - static_cast<double>(before);
      if (intended != 0) {
        sums.intendedNonZero += 1;
        if (after == before) sums.roundedAway += 1;
      }
      sums.intendedSq += intended * intended;
      sums.changeSq += change * change;
      if (a.windowSum && i % a.windowStride == 0) a.windowSum[i / a.windowStride] += intended;
    }
    store(c, len, m.data(), true);
    store(c, len, v.data(), false);
    for (int64_t j = 0; j < len; ++j) {
      const double dm = static_cast<double>(load(c + j, true)) - m[j];
      const double dv = static_cast<double>(load(c + j, false)) - v[j];
      errors.mErrorSq += dm * dm;
      errors.mSq += static_cast<double>(m[j]) * m[j];
      errors.vErrorSq += dv * dv;
      errors.vSq += static_cast<double>(v[j]) * v[j];
    }
  }
  total.add(sums);
  totalErrors.add(errors);
}

template <typename T>
bool sameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Floating-point values bit for bit, except that a NaN (a NaN gradient's)
// equals any NaN: which of two NaN operands' sign and payload an addition or
// multiplication keeps depends on the order the compiler gives the operands,
// in the scalar loop as much as in the others. Codes and bf16 bits are
// compared as bytes (a NaN weight is written as 0x7FC0 whatever its payload).
bool sameBits(double a, double b) { return (a != a && b != b) || std::memcmp(&a, &b, sizeof a) == 0; }
template <typename T>
bool sameValues(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameBits(static_cast<double>(a[i]), static_cast<double>(b[i]))) return false;
  return true;
}

// One step's whole state, so that a variant's and the scalar step's can be compared.
struct State {
  std::vector<float> paramF, gradF;
  std::vector<uint16_t> paramB, gradB, comp;
  std::vector<uint8_t> m, v;  // codes, or the plain moments' bytes
  std::vector<float> mScale, vScale;
  std::vector<double> window;
  bool operator==(const State& o) const {
    return sameValues(paramF, o.paramF) && sameBytes(paramB, o.paramB) && sameBytes(comp, o.comp) &&
           sameBytes(m, o.m) && sameBytes(v, o.v) && sameValues(mScale, o.mScale) && sameValues(vScale, o.vScale) &&
           sameValues(window, o.window);
  }
};

struct Tables {
  const float *signedCode, *unsignedCode;
  const uint8_t *signedStarts, *unsignedStarts;
  const float *signedThresholds = nullptr, *unsignedThresholds = nullptr;
  const uint8_t *signedCodeStarts = nullptr, *unsignedCodeStarts = nullptr;
};

// The bucket starts of a sorted 256-entry table (dynamicTreeStarts' rule).
std::vector<uint8_t> startsOf(const float* table) {
  std::vector<uint8_t> out(kDynamicTreeBuckets);
  for (int64_t b = 0; b < kDynamicTreeBuckets; ++b) {
    const uint32_t key = static_cast<uint32_t>(b) << kDynamicTreeBucketShift;
    out[static_cast<size_t>(b)] =
        static_cast<uint8_t>(dynamicTreeSearch(floatOf((key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key), table));
  }
  return out;
}

// Gradients that put the first step's new m (with the lerp weight 1 and m
// starting at 0) on the code search's corners: per block one element of
// magnitude `top` (the scale) and the rest on code values, their fp32
// neighbours, half-way between two, and special values.
// With the 8-bit thresholds, some elements sit on a threshold (the least
// value of a code) and its fp32 neighbours, where the search's comparisons
// turn.
std::vector<float> cornerGrads(int64_t n, const float* table, int codes, float top,
                               const float* thresholds = nullptr) {
  std::vector<float> g(static_cast<size_t>(n));
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(), 1e-30f, -1.0f};
  // Blocks (of 128) that hold a NaN, an infinity or a value above `top`:
  // their scale becomes that value.
  const float blockSpecials[] = {kNaN, kInf, -kInf, 2.0f, floatOf(0xFFC00042u)};
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = i % 97;
    const int c = static_cast<int>((i / 97) % codes);
    float q;
    if (k < 30) q = table[c];
    else if (k < 50) q = floatOf(bitsOf(table[c]) + ((k % 2) ? 1u : 0xFFFFFFFFu));  // a neighbour
    else if (k < 80 && c + 1 < codes) q = (table[c] + table[c + 1]) * 0.5f;
    else if (k < 86) q = specials[k - 80];
    else if (k < 89 && thresholds && c > 0) q = floatOf(bitsOf(thresholds[c]) + static_cast<uint32_t>(k - 87));
    else q = unit(gen);
    const int64_t block = i / 128;
    if (block % 8 == 1 && i % 128 == 77) q = blockSpecials[(block / 8) % 5];
    g[static_cast<size_t>(i)] = q * top;
  }
  for (int64_t b = 0; b < n; b += 64) g[static_cast<size_t>(b)] = top;  // the scale
  // An all-zero block or two (scale 1e-12).
  for (int64_t i = 0; i < std::min<int64_t>(n, 512); ++i) g[static_cast<size_t>(i)] = 0;
  return g;
}

}  // namespace

class QuantizedKernelsTest : public QObject {
  Q_OBJECT

  // Runs `steps` steps of one configuration with each variant and with the
  // scalar statement; compares everything after every step.
  void compareVariants(MomentLayout layout, bool fp32Weights, WeightRule rule, const Tables& t, int64_t n,
                       const std::vector<float>& grad, const TorchaoScalars& s, int steps) {
    const bool quantized = layout == MomentLayout::DynamicTree8bit || layout == MomentLayout::DynamicTree4bit ||
                           layout == MomentLayout::Fp8E4m3;
    const int64_t block = layout == MomentLayout::DynamicTree4bit ? kDynamicTree4Block : kDynamicTreeBlock;
    const size_t momentBytes = layout == MomentLayout::DynamicTree4bit ? size_t(n / 2)
                               : layout == MomentLayout::PlainFp32   ? size_t(n) * 4
                               : layout == MomentLayout::PlainBf16   ? size_t(n) * 2
                                                                     : size_t(n);
    State init;
    std::mt19937 gen(17);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    // Weights over seven decades: the updates' squares then span more than
    // fp64's mantissa, so that their sums depend on the order of addition.
    init.paramF.resize(size_t(n));
    for (size_t i = 0; i < init.paramF.size(); ++i)
      init.paramF[i] = normal(gen) * std::pow(10.0f, float(int(i % 7) - 3));
    init.gradF = grad;
    for (float w : init.paramF) init.paramB.push_back(bf16Nearest(w));
    for (float g : init.gradF) init.gradB.push_back(bf16Nearest(g));
    for (int64_t i = 0; i < n; ++i) init.comp.push_back(bf16Nearest(1e-3f * normal(gen)));
    // Moments at 0: codes of 0 where the table has one (8-bit and 4-bit signed: the entry 0).
    init.m.assign(momentBytes, 0);
    init.v.assign(momentBytes, 0);
    if (layout == MomentLayout::DynamicTree8bit) {
      int zero = 0;
      while (t.signedCode[zero] < 0) ++zero;
      init.m.assign(momentBytes, static_cast<uint8_t>(zero));
    } else if (layout == MomentLayout::DynamicTree4bit) {
      init.m.assign(momentBytes, static_cast<uint8_t>(7 << 4 | 7));
    }
    init.mScale.assign(quantized ? size_t(n / block) : 0, 1.0f);
    init.vScale.assign(quantized ? size_t(n / block) : 0, 1e-30f);
    init.window.assign(size_t(n / 7 + 1), 0.0);

    const auto argsOf = [&](State& st, int step) {
      QuantizedAdamWArgs a;
      a.n = n;
      a.fp32Weights = fp32Weights;
      a.rule = rule;
      a.param = fp32Weights ? static_cast<void*>(st.paramF.data()) : static_cast<void*>(st.paramB.data());
      a.grad = fp32Weights ? static_cast<const void*>(st.gradF.data()) : static_cast<const void*>(st.gradB.data());
      a.layout = layout;
      a.m = st.m.data();
      a.v = st.v.data();
      a.mScale = quantized ? st.mScale.data() : nullptr;
      a.vScale = quantized ? st.vScale.data() : nullptr;
      a.signedCode = t.signedCode;
      a.unsignedCode = t.unsignedCode;
      a.signedStarts = t.signedStarts;
      a.unsignedStarts = t.unsignedStarts;
      a.signedThresholds = t.signedThresholds;
      a.unsignedThresholds = t.unsignedThresholds;
      a.signedCodeStarts = t.signedCodeStarts;
      a.unsignedCodeStarts = t.unsignedCodeStarts;
      a.comp = st.comp.data();
      a.s = s;
      a.random = {0x1234567890ABCDEFull, static_cast<uint32_t>(step), 9, 3};
      a.windowSum = st.window.data();
      a.windowStride = 7;
      return a;
    };
    State expected = init;
    std::vector<State> ours(availableCpuKernels().size(), init);
    for (int step = 1; step <= steps; ++step) {
      StepSums expectedSums;
      MomentErrorSums expectedErrors;
      scalarStep(argsOf(expected, step), expectedSums, expectedErrors);
      for (size_t k = 0; k < ours.size(); ++k) {
        const CpuKernel variant = availableCpuKernels()[k];
        StepSums sums;
        MomentErrorSums errors;
        quantizedAdamWCpu(argsOf(ours[k], step), &sums, &errors, variant);
        const QString what = QString("%1, layout %2, fp32 weights %3, rule %4, step %5")
                                 .arg(cpuKernelName(variant))
                                 .arg(int(layout))
                                 .arg(fp32Weights)
                                 .arg(int(rule))
                                 .arg(step);
        QVERIFY2(ours[k] == expected, qPrintable("state differs: " + what));
        const bool sumsSame = sameBits(sums.intendedNonZero, expectedSums.intendedNonZero) &&
                              sameBits(sums.roundedAway, expectedSums.roundedAway) &&
                              sameBits(sums.intendedSq, expectedSums.intendedSq) &&
                              sameBits(sums.changeSq, expectedSums.changeSq) &&
                              sameBits(errors.mErrorSq, expectedErrors.mErrorSq) &&
                              sameBits(errors.mSq, expectedErrors.mSq) &&
                              sameBits(errors.vErrorSq, expectedErrors.vErrorSq) &&
                              sameBits(errors.vSq, expectedErrors.vSq);
        QVERIFY2(sumsSame, qPrintable("sums differ: " + what));
      }
    }
  }

 private slots:
  // The counting form (baseline and AVX2 loops) and the threshold search
  // (AVX-512) equal torchao's 4-step search (and its rounding) on every
  // 4099th bit pattern, the table values, the thresholds, their neighbours,
  // the midpoints and the special values, for both 4-bit tables.
  void fourBitCountEqualsSearch() {
    for (const bool isSigned : {true, false}) {
      const float* table = dynamicTree4Code(isSigned).data_ptr<float>();
      float up[kDynamicTree4Codes];
      for (int k = 0; k < kDynamicTree4Codes; ++k) up[k] = table[k + 1 < 16 ? k + 1 : k];
      std::vector<float> qs = {kNaN, -kNaN, kInf, -kInf, 0.0f, -0.0f, std::numeric_limits<float>::denorm_min()};
      for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099) qs.push_back(floatOf(static_cast<uint32_t>(b)));
      for (int i = 0; i < 16; ++i) {
        for (const uint32_t d : {0u, 1u, 2u}) {
          qs.push_back(floatOf(bitsOf(table[i]) + d));
          qs.push_back(floatOf(bitsOf(table[i]) - d));
        }
        if (i < 15) qs.push_back((table[i] + table[i + 1]) * 0.5f);
      }
      const std::vector<float> thresholds = dynamicTree4ThresholdsOf(table);
      float order[kDynamicTree4Thresholds];
      thresholdSearchOrderOf<4>(thresholds.data(), order);
      for (int k = 1; k < 16; ++k)
        for (const uint32_t d : {0u, 1u, 2u}) {
          qs.push_back(floatOf(bitsOf(thresholds[size_t(k)]) + d));
          qs.push_back(floatOf(bitsOf(thresholds[size_t(k)]) - d));
        }
      int64_t differ = 0, searchDiffers = 0;
      for (const float q : qs) {
        if (dynamicTree4CodeByCount(q, table, up) != dynamicTree4Code(q, table)) ++differ;
        if (dynamicTree4CodeBySearch(q, order) != dynamicTree4Code(q, table)) ++searchDiffers;
      }
      QVERIFY2(differ == 0 && searchDiffers == 0, qPrintable(QString("%1 (count) and %2 (search) of %3 differ (signed %4)")
                                                                 .arg(differ)
                                                                 .arg(searchDiffers)
                                                                 .arg(qs.size())
                                                                 .arg(isSigned)));
    }
  }

  // The 8-bit code as a count of thresholds (what the baseline and AVX2
  // loops compute) and by the binary search over the thresholds (the
  // AVX-512 loop's) equal dynamicTreeCode on every 4099th bit pattern, the
  // code values, the midpoints between them and the thresholds with their
  // fp32 neighbours, and the special values, for torchao's two tables, a
  // dense one (several codes in a bucket) and one with repeated values
  // (equal thresholds, codes never reached).
  void thresholdCodeEqualsCode() {
    QCOMPARE(dynamicTreeThresholds(true).numel(), int64_t(kDynamicTreeThresholds));
    std::vector<float> dense(256), repeated(256);
    for (int k = 0; k < 256; ++k) {
      dense[size_t(k)] = k < 128 ? -1.0f + float(k) / 128.0f : 1.0f - float(255 - k) * 1e-5f;
      repeated[size_t(k)] = k < 40 ? -1.0f : k < 100 ? -0.25f + float(k / 4) * 1e-3f : k < 200 ? 0.0f : 1.0f;
    }
    const std::vector<const float*> tables = {dynamicTreeCode(true).data_ptr<float>(),
                                              dynamicTreeCode(false).data_ptr<float>(), dense.data(),
                                              repeated.data()};
    for (size_t which = 0; which < tables.size(); ++which) {
      const float* table = tables[which];
      const std::vector<uint8_t> starts = startsOf(table);
      const std::vector<float> thresholds = dynamicTreeThresholdsOf(table, starts.data());
      const std::vector<uint8_t> codeStarts = dynamicTreeCodeStartsOf(table, starts.data());
      float order[kDynamicTreeSearchOrder];
      dynamicTreeSearchOrderOf(thresholds.data(), order);
      std::vector<float> qs = {kNaN, -kNaN, kInf, -kInf, 0.0f, -0.0f, std::numeric_limits<float>::denorm_min(),
                               -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                               -std::numeric_limits<float>::max(), floatOf(0xFFC00042u)};
      for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099) qs.push_back(floatOf(static_cast<uint32_t>(b)));
      for (int i = 0; i < 256; ++i) {
        std::vector<float> around = {table[i], thresholds[size_t(i + 1)]};
        if (i < 255) around.push_back((table[i] + table[i + 1]) * 0.5f);
        for (const float c : around)
          for (const uint32_t d : {0u, 1u, 2u}) {
            qs.push_back(floatOf(bitsOf(c) + d));
            qs.push_back(floatOf(bitsOf(c) - d));
          }
      }
      int64_t differ = 0, searchDiffers = 0;
      for (const float q : qs) {
        const uint8_t code = dynamicTreeCode(q, table, starts.data());
        if (dynamicTreeCodeByThresholds(q, thresholds.data(), codeStarts.data()) != code) ++differ;
        if (dynamicTreeCodeBySearch(q, order) != code) ++searchDiffers;
      }
      QVERIFY2(differ == 0 && searchDiffers == 0, qPrintable(QString("table %1: %2 (count) and %3 (search) of %4 differ")
                                                                 .arg(which)
                                                                 .arg(differ)
                                                                 .arg(searchDiffers)
                                                                 .arg(qs.size())));
    }
  }

  // Every store and weight rule, three steps each, ragged sizes where the
  // store allows them (plain moments), every variant against the scalar step.
  void everyVariantEqualsTheScalarStep() {
    qInfo("CPU variants here: %zu (best: %s)", availableCpuKernels().size(), cpuKernelName(availableCpuKernels().back()));
    const Tables t8{dynamicTreeCode(true).data_ptr<float>(),       dynamicTreeCode(false).data_ptr<float>(),
                    dynamicTreeStarts(true).data_ptr<uint8_t>(),     dynamicTreeStarts(false).data_ptr<uint8_t>(),
                    dynamicTreeThresholds(true).data_ptr<float>(),   dynamicTreeThresholds(false).data_ptr<float>(),
                    dynamicTreeCodeStarts(true).data_ptr<uint8_t>(), dynamicTreeCodeStarts(false).data_ptr<uint8_t>()};
    const Tables t4{dynamicTree4Code(true).data_ptr<float>(),       dynamicTree4Code(false).data_ptr<float>(),
                    nullptr,
                    nullptr,
                    dynamicTree4Thresholds(true).data_ptr<float>(), dynamicTree4Thresholds(false).data_ptr<float>()};
    // Without thresholds the 4-bit store counts table entries in every variant.
    const Tables t4Count{dynamicTree4Code(true).data_ptr<float>(), dynamicTree4Code(false).data_ptr<float>(), nullptr,
                         nullptr};
    TorchaoScalars torchao;  // AdamW's defaults at step 3
    torchao.lr = 1e-3f;
    torchao.lrTimesDecay = 1e-3f * 0.01f;
    torchao.biasCorrection1 = 1.0f - std::pow(0.9f, 3.0f);
    torchao.sqrtBiasCorrection2 = std::sqrt(1.0f - std::pow(0.999f, 3.0f));
    TorchaoScalars corners = torchao;  // m_new = g exactly on the first step (m = 0)
    corners.m = {1.0f, false};
    TorchaoScalars fromEnd = torchao;  // the lerp's other form (|weight| >= 0.5)
    fromEnd.m = {-0.3f, true};
    fromEnd.v = {-0.5f, true};
    struct Rule {
      bool fp32;
      WeightRule rule;
    };
    const Rule rules[] = {{true, WeightRule::Nearest},
                          {false, WeightRule::Nearest},
                          {false, WeightRule::Kahan},
                          {false, WeightRule::Stochastic}};
    const int64_t quantizedN = 2 * 16384 + 5 * 256;  // two tasks and a part of one
    for (const MomentLayout layout : {MomentLayout::DynamicTree8bit, MomentLayout::DynamicTree4bit,
                                      MomentLayout::Fp8E4m3, MomentLayout::PlainFp32, MomentLayout::PlainBf16}) {
      const bool plain = layout == MomentLayout::PlainFp32 || layout == MomentLayout::PlainBf16;
      const int64_t n = plain ? 16384 + 1000 + 7 : quantizedN;
      const Tables& t = layout == MomentLayout::DynamicTree4bit ? t4 : t8;
      const int codes = layout == MomentLayout::DynamicTree4bit ? 16 : 256;
      const std::vector<float> corner = cornerGrads(n, t.signedCode, codes, 0.0625f, t.signedThresholds);
      std::vector<float> random(static_cast<size_t>(n));
      std::mt19937 gen(23);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (size_t i = 0; i < random.size(); ++i) random[i] = normal(gen) * std::pow(10.0f, -float(1 + (i / 256) % 6));
      for (const Rule& r : rules) {
        compareVariants(layout, r.fp32, r.rule, t, n, corner, corners, 3);
        compareVariants(layout, r.fp32, r.rule, t, n, random, torchao, 3);
        compareVariants(layout, r.fp32, r.rule, t, n, random, fromEnd, 2);
        if (layout == MomentLayout::DynamicTree4bit) compareVariants(layout, r.fp32, r.rule, t4Count, n, corner, corners, 2);
      }
    }
  }

  // A sorted table dense enough that a bucket holds several code values:
  // the AVX2 count's one step is not enough and it must hand those lanes
  // to the scalar search (torchao's tables never need that); the AVX-512
  // binary search needs no fallback and must give the same codes.
  void denseTableTakesTheScalarPath() {
    std::vector<float> table(256);
    for (int k = 0; k < 256; ++k) table[size_t(k)] = k < 128 ? -1.0f + float(k) / 128.0f : 1.0f - float(255 - k) * 1e-5f;
    const std::vector<uint8_t> starts = startsOf(table.data());
    int most = 0;
    for (int64_t b = 0; b + 1 < kDynamicTreeBuckets; ++b) most = std::max(most, starts[size_t(b + 1)] - starts[size_t(b)]);
    QVERIFY2(most > 2, "the table puts several code values in one bucket");
    const std::vector<float> thresholds = dynamicTreeThresholdsOf(table.data(), starts.data());
    const std::vector<uint8_t> codeStarts = dynamicTreeCodeStartsOf(table.data(), starts.data());
    const Tables t{table.data(),      table.data(),      starts.data(),     starts.data(),
                   thresholds.data(), thresholds.data(), codeStarts.data(), codeStarts.data()};
    TorchaoScalars corners;
    corners.m = {1.0f, false};
    corners.v = {1.0f, false};
    corners.lr = 1e-3f;
    const int64_t n = 16384 + 256;
    const std::vector<float> grad = cornerGrads(n, table.data(), 256, 1.0f, thresholds.data());
    compareVariants(MomentLayout::DynamicTree8bit, true, WeightRule::Nearest, t, n, grad, corners, 2);
    compareVariants(MomentLayout::DynamicTree8bit, false, WeightRule::Stochastic, t, n, grad, corners, 2);
  }
};

PLAB_TEST_APPLESS_MAIN(QuantizedKernelsTest)
#include "test_quantized_kernels.moc"
