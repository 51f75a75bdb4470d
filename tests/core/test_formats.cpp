// The GEMM formats' element functions on values worked out by hand (e4m3
// max 448, e5m2 max 57344, the e2m1 grid and its ties, E8M0 and NVFP4
// scales), the fp8 casts against LibTorch's own .to(float8) on every
// sign/exponent/leading-mantissa pattern with the rounding-relevant low
// bits, and quantizeDequantize's contract: zero padding of short blocks,
// bf16 input, thread count, ids. Bit-exactness with torchao itself is
// tests/reference/formats_vs_torchao.py.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "formats/gemm_format.h"
#include "formats/minifloat_grid.h"
#include "formats/quantize_cpu_variants.h"
#include "formats/quantize_kernels.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_formats {

using namespace plab;
using namespace plab::formats;

namespace {

uint32_t u32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// fp32 patterns that exercise every rounding decision of an 8-bit or 4-bit
// target: each sign, exponent and leading 8 mantissa bits, with low bits
// 0, 1, just under / at / over the half of bit 15, and all ones.
torch::Tensor roundingPatterns() {
  const uint32_t lows[] = {0x0000, 0x0001, 0x3FFF, 0x4000, 0x4001, 0x7FFF};
  std::vector<int32_t> bits;
  bits.reserve(512 * 256 * 6);
  for (uint32_t top = 0; top < 512 * 256; ++top)
    for (uint32_t low : lows) bits.push_back(static_cast<int32_t>((top << 15) | low));
  return torch::tensor(bits, torch::kInt32).view(torch::kFloat32);
}

// Bit for bit, except that any NaN equals any NaN (payloads are not part of
// the contract: torch's own vectorised bf16 cast writes NaN as 0xFFFF, its
// scalar one as 0x7FC0).
bool sameBitsOrBothNaN(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor nan = torch::isnan(a);
  return torch::equal(nan, torch::isnan(b)) &&
         torch::equal(a.masked_fill(nan, 0).view(torch::kInt32), b.masked_fill(nan, 0).view(torch::kInt32));
}

// The kernel arguments for quantizing the 2-D `in` with `scheme` into fresh
// outputs: values (dequantized fp32, or GEMM operands in bf16) and room for
// codeCount scale codes (at least one).
struct KernelCall {
  QuantizeArgs args;
  torch::Tensor values, codes;
};
KernelCall kernelCall(const torch::Tensor& in, Scheme scheme, bool operand, int64_t codeCount) {
  KernelCall c;
  QuantizeArgs& a = c.args;
  a.scheme = scheme;
  a.in = in.data_ptr();
  a.inBf16 = in.scalar_type() == torch::kBFloat16;
  a.rows = in.size(0);
  a.cols = in.size(1);
  a.gemmOperand = operand;
  c.values = torch::empty({a.rows, a.cols}, operand ? torch::kBFloat16 : torch::kFloat32);
  c.codes = torch::zeros({std::max<int64_t>(codeCount, 1)}, torch::kUInt8);
  if (operand) a.outBf16 = reinterpret_cast<uint16_t*>(c.values.data_ptr<at::BFloat16>());
  else a.out = c.values.data_ptr<float>();
  a.blockScales = c.codes.data_ptr<uint8_t>();
  return c;
}

}  // namespace

class FormatsTest : public QObject {
  Q_OBJECT
 private slots:
  void e4m3HandValues() {
    QCOMPARE(int(e4m3FromFloat(448.0f)), 0x7E);
    QCOMPARE(e4m3ToFloat(0x7E), 448.0f);
    QCOMPARE(int(e4m3FromFloat(464.0f)), 0x7E);   // the tie between 448 and 480 goes to the even 448
    QCOMPARE(int(e4m3FromFloat(479.9f)), 0x7E);   // saturates (480 would be the NaN code)
    QCOMPARE(int(e4m3FromFloat(1e6f)), 0x7E);
    QCOMPARE(int(e4m3FromFloat(kInf)), 0x7E);
    QCOMPARE(int(e4m3FromFloat(-kInf)), 0xFE);
    QCOMPARE(int(e4m3FromFloat(kNaN)), 0x7F);
    QCOMPARE(int(e4m3FromFloat(-0.0f)), 0x80);
    QCOMPARE(int(e4m3FromFloat(0x1p-6f)), 0x08);  // smallest normal
    QCOMPARE(int(e4m3FromFloat(0x1p-9f)), 0x01);  // smallest subnormal
    QCOMPARE(int(e4m3FromFloat(0x1p-10f)), 0x00);  // half of it: tie to even 0
    QCOMPARE(int(e4m3FromFloat(0x1.8p-10f)), 0x01);
    QCOMPARE(int(e4m3FromFloat(0x1.8p-9f)), 0x02);  // 1.5 units: tie to even 2
    QCOMPARE(int(e4m3FromFloat(1.0625f)), 0x38);  // 1 + 1/16: tie to even 1.0
    QCOMPARE(int(e4m3FromFloat(1.1875f)), 0x3A);  // 1 + 3/16: tie to even 1.25
    QCOMPARE(e4m3ToFloat(0x01), 0x1p-9f);
    QCOMPARE(u32(e4m3ToFloat(0x80)), 0x80000000u);
    QVERIFY(std::isnan(e4m3ToFloat(0x7F)));
  }

  void e5m2HandValues() {
    QCOMPARE(int(e5m2FromFloat(57344.0f)), 0x7B);
    QCOMPARE(e5m2ToFloat(0x7B), 57344.0f);
    QCOMPARE(int(e5m2FromFloat(61439.0f)), 0x7B);
    QCOMPARE(int(e5m2FromFloat(61440.0f)), 0x7C);  // the tie above the max rounds to Inf
    QCOMPARE(int(e5m2FromFloat(kInf)), 0x7C);
    QCOMPARE(e5m2ToFloat(0x7C), kInf);
    QCOMPARE(int(e5m2FromFloat(-kNaN)), 0xFF);
    QCOMPARE(int(e5m2FromFloat(0x1p-16f)), 0x01);
    QCOMPARE(int(e5m2FromFloat(0x1p-17f)), 0x00);
    QCOMPARE(int(e5m2FromFloat(0x1p-14f)), 0x04);  // smallest normal
  }

  void e2m1HandValues() {
    const float grid[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (int c = 0; c < 8; ++c) {
      QCOMPARE(e2m1ToFloat(static_cast<uint8_t>(c)), grid[c]);
      QCOMPARE(e2m1ToFloat(static_cast<uint8_t>(c | 8)), -grid[c]);
      QCOMPARE(int(e2m1FromFloat(grid[c])), c);
      QCOMPARE(int(e2m1FromFloat(-grid[c])), c | 8);
    }
    QCOMPARE(u32(e2m1ToFloat(8)), 0x80000000u);  // -0
    // Ties go to the even code; everything else to the nearest.
    const float in[] = {0.25f, 0.2501f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 5.01f, 7.0f, 1e30f, kInf, 1e-40f};
    const float want[] = {0, 0.5f, 1, 1, 2, 2, 4, 4, 6, 6, 6, 6, 0};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; ++i) QCOMPARE(e2m1ToFloat(e2m1FromFloat(in[i])), want[i]);
    QCOMPARE(int(e2m1FromFloat(-kInf)), 0xF);
  }

  // The casts against LibTorch 2.13's own .to(float8_*) (what torchao calls).
  // The element functions round onto the value grid directly
  // (minifloat_grid.h): the same value as the cast to the minifloat and back,
  // on every rounding pattern (each sign, exponent and leading mantissa bits
  // with the low bits at and around every tie; subnormals, Inf, NaN), each
  // saturating as clampSymmetric at the format's largest value: bit for bit, NaN included for e4m3 and e5m2; e2m1
  // (whose cast leaves a finite code for NaN) NaN for NaN.
  void gridRoundingIsTheCastAndBack() {
    const torch::Tensor patterns = roundingPatterns();
    const float* p = patterns.data_ptr<float>();
    int64_t mismatches = 0;
    for (int64_t i = 0; i < patterns.numel(); ++i) {
      const float e4 = clampSymmetric(p[i], kE4m3Max), e5 = clampSymmetric(p[i], kE5m2Max);
      const float e2 = clampSymmetric(p[i], kE2m1Max);
      if (u32(e4m3Grid(p[i])) != u32(e4m3ToFloat(e4m3FromFloat(e4)))) ++mismatches;
      if (u32(e5m2Grid(p[i])) != u32(e5m2ToFloat(e5m2FromFloat(e5)))) ++mismatches;
      const float g = e2m1Grid(p[i]), cast = e2m1ToFloat(e2m1FromFloat(e2));
      if (std::isnan(e2) ? !std::isnan(g) : u32(g) != u32(cast)) ++mismatches;
    }
    QCOMPARE(mismatches, int64_t(0));
    // Hand values: ties to even at each grid, subnormal steps, the largest values.
    QCOMPARE(e4m3Grid(0x1p-10f), 0.0f);         // half of the smallest subnormal 2^-9: tie to 0
    QCOMPARE(e4m3Grid(3 * 0x1p-10f), 0x1p-8f);  // 1.5 steps: tie to 2 steps
    QCOMPARE(e4m3Grid(1.0625f), 1.0f);          // tie between 1 and 1.125: even
    QCOMPARE(e4m3Grid(448.0f), 448.0f);
    QCOMPARE(e4m3Grid(-1e30f), -448.0f);
    QCOMPARE(e2m1Grid(0.25f), 0.0f);
    QCOMPARE(e2m1Grid(0.75f), 1.0f);
    QCOMPARE(e2m1Grid(5.0f), 4.0f);
    QCOMPARE(e2m1Grid(-5.5f), -6.0f);
    QCOMPARE(e5m2Grid(0x1p-17f), 0.0f);
    QCOMPARE(e5m2Grid(57344.0f), 57344.0f);
    QCOMPARE(e5m2Grid(std::numeric_limits<float>::infinity()), 57344.0f);
  }

  void fp8CastsMatchTorch() {
    const torch::Tensor x = roundingPatterns();
    const float* xp = x.data_ptr<float>();
    for (const bool e4m3 : {true, false}) {
      const torch::Tensor theirs =
          x.to(e4m3 ? torch::kFloat8_e4m3fn : torch::kFloat8_e5m2).view(torch::kUInt8).contiguous();
      const uint8_t* tp = theirs.data_ptr<uint8_t>();
      int64_t differ = 0;
      for (int64_t i = 0; i < x.numel(); ++i) {
        const uint8_t mine = e4m3 ? e4m3FromFloat(xp[i]) : e5m2FromFloat(xp[i]);
        if (mine != tp[i] && ++differ <= 5)
          qWarning("%s: x bits %08x -> ours %02x, torch %02x", e4m3 ? "e4m3" : "e5m2", u32(xp[i]), mine, tp[i]);
      }
      QCOMPARE(differ, int64_t(0));
      // All 256 codes back to fp32, bit for bit (NaN codes included).
      const torch::Tensor codes = torch::arange(256, torch::kInt32).to(torch::kUInt8);
      const torch::Tensor wide =
          codes.view(e4m3 ? torch::kFloat8_e4m3fn : torch::kFloat8_e5m2).to(torch::kFloat32).contiguous();
      for (int c = 0; c < 256; ++c) {
        const float mine = e4m3 ? e4m3ToFloat(static_cast<uint8_t>(c)) : e5m2ToFloat(static_cast<uint8_t>(c));
        QCOMPARE(u32(mine), u32(wide.data_ptr<float>()[c]));
      }
    }
  }

  void mxScalesByHand() {
    QCOMPARE(int(mxScaleFloor(1.0f, kE4m3MaxPow2)), 127 - 8);   // 2^0 / 2^8
    QCOMPARE(int(mxScaleFloor(1.99f, kE4m3MaxPow2)), 127 - 8);  // floor: the exponent of amax
    QCOMPARE(int(mxScaleFloor(448.0f, kE4m3MaxPow2)), 127);
    QCOMPARE(int(mxScaleFloor(6.0f, kE2m1MaxPow2)), 127);
    QCOMPARE(int(mxScaleFloor(0.0f, kE4m3MaxPow2)), 0);
    QCOMPARE(int(mxScaleFloor(kInf, kE4m3MaxPow2)), 128 - 8 + 127);
    QCOMPARE(int(mxScaleFloor(kNaN, kE4m3MaxPow2)), 255);
    QCOMPARE(mxDivisor(0), 0x1p-126f);
    QCOMPARE(mxMultiplier(0), 0x1p-127f);
    QCOMPARE(mxDivisor(119), 0x1p-8f);
    QVERIFY(std::isnan(mxMultiplier(255)));
    // FLOOR lets a block's largest element exceed the element range: 1.99 * 2^8 = 509 saturates to 448.
    QCOMPARE(mxfp8Element(1.99f, mxDivisor(119), mxMultiplier(119)), 448.0f / 256.0f);
    // A block below 2^-118: code 0, divided by 2^-126 but multiplied by 2^-127
    // (torchao's two readings of code 0): 1e-37 / 2^-126 = 8.5 -> 9, back as 9 * 2^-127.
    QCOMPARE(int(mxScaleFloor(1e-37f, kE4m3MaxPow2)), 0);
    QCOMPARE(mxfp8Element(1e-37f, mxDivisor(0), mxMultiplier(0)), 9.0f * 0x1p-127f);
    // MXFP4 of 5: scale 2^(2-2) = 1, 5 is the tie between 4 and 6, goes to 4.
    QCOMPARE(mxfp4Element(5.0f, mxDivisor(127), mxMultiplier(127)), 4.0f);
  }

  void nvfp4ScalesByHand() {
    QCOMPARE(nvfp4TensorScale(2688.0f), 1.0f);  // amax / (448 * 6)
    QCOMPARE(nvfp4TensorScale(0.0f), 1.0f);     // the one deviation from torchao's reference (0 -> NaN there)
    QCOMPARE(int(nvfp4BlockScale(6.0f, 1.0f)), 0x38);   // block scale 1.0
    QCOMPARE(int(nvfp4BlockScale(0.0f, 1.0f)), 0x08);   // floored at 2^-6
    QCOMPARE(int(nvfp4BlockScale(1e9f, 1.0f)), 0x7E);   // capped at 448
    QCOMPARE(nvfp4Element(3.2f, nvfp4Reciprocal(0x38, 1.0f), nvfp4Multiplier(0x38, 1.0f)), 3.0f);
  }

  void idsRoundTrip() {
    QStringList ids;
    for (GemmFormat f : allGemmFormats()) {
      QCOMPARE(gemmFormatFromId(gemmFormatId(f)), f);
      ids << QString::fromStdString(gemmFormatId(f));
    }
    QCOMPARE(ids.join(' '), QString("bf16 fp8-e4m3 fp8-e5m2 mxfp8 mxfp4 nvfp4"));
    QVERIFY_THROWS_EXCEPTION(ConfigError, gemmFormatFromId("fp4"));
  }

  // A short last block is the same as padding the row with zeros.
  void shortBlocksAreZeroPadded() {
    torch::manual_seed(3);
    const torch::Tensor x = torch::randn({5, 45}) * 3;
    const torch::Tensor padded = torch::constant_pad_nd(x, {0, 64 - 45});
    for (GemmFormat f : allGemmFormats()) {
      const QuantizedTensor a = quantizeDequantize(x, f, GemmRole::Input);
      const QuantizedTensor b = quantizeDequantize(padded, f, GemmRole::Input);
      QVERIFY2(torch::equal(a.values, b.values.slice(1, 0, 45)), gemmFormatId(f).c_str());
      if (a.blockScales.defined())
        QVERIFY(torch::equal(a.blockScales, b.blockScales.slice(1, 0, a.blockScales.size(1))));
      QCOMPARE(a.tensorScale.item<float>(), b.tensorScale.item<float>());
    }
  }

  void bf16InputIsItsFp32Value() {
    torch::manual_seed(4);
    const torch::Tensor x = (torch::randn({64, 96}) * 10).to(torch::kBFloat16);
    for (GemmFormat f : allGemmFormats())
      QVERIFY2(torch::equal(quantizeDequantize(x, f, GemmRole::Weight).values,
                            quantizeDequantize(x.to(torch::kFloat32), f, GemmRole::Weight).values),
               gemmFormatId(f).c_str());
  }

  void bf16FormatIsTorchsRounding() {
    torch::manual_seed(5);
    torch::Tensor x = torch::randn({1000}) * 1e3;
    x[0] = kNaN;
    x[1] = -kInf;
    x[2] = -0.0f;
    const torch::Tensor mine = quantizeDequantize(x, GemmFormat::Bf16, GemmRole::Input).values;
    QVERIFY(sameBitsOrBothNaN(mine, x.to(torch::kBFloat16).to(torch::kFloat32)));
  }

  void roleChoosesFp8Element() {
    const torch::Tensor x = torch::full({4}, 3.0f) * torch::tensor({1.0f, 0.9f, 0.1f, 0.01f});
    // Per-tensor scale 448 / 3 (e4m3) or 57344 / 3 (e5m2): the role decides.
    QCOMPARE(quantizeDequantize(x, GemmFormat::Fp8E4m3, GemmRole::Input).tensorScale.item<float>(),
             static_cast<float>(448.0 / 3.0));
    QCOMPARE(quantizeDequantize(x, GemmFormat::Fp8E4m3, GemmRole::GradOutput).tensorScale.item<float>(),
             static_cast<float>(57344.0 / 3.0));
    QCOMPARE(quantizeDequantize(x, GemmFormat::Fp8E5m2, GemmRole::Weight).tensorScale.item<float>(),
             static_cast<float>(57344.0 / 3.0));
  }

  // Every CPU variant (baseline, AVX2, AVX-512), with and without the fast
  // paths, computes the baseline's bits, on the rounding patterns (Inf, NaN,
  // subnormals included) in rows of 80 (short last blocks), fp32 and bf16 input.
  void cpuVariantsAgree() {
    const torch::Tensor patterns = roundingPatterns();
    const torch::Tensor x = patterns.slice(0, 0, patterns.numel() / 80 * 80).view({-1, 80});
    for (const torch::Tensor& in : {x, x.to(torch::kBFloat16)}) {
      for (Scheme scheme : {Scheme::Bf16, Scheme::Fp8E4m3Tensor, Scheme::Fp8E5m2Tensor, Scheme::Mxfp8, Scheme::Mxfp4,
                            Scheme::Nvfp4})
      for (const bool operand : {false, true}) {  // dequantized fp32, or GEMM operands in bf16
        std::vector<torch::Tensor> outs, scales;
        std::vector<float> tensorScales;
        for (QuantizeCpuVariant v : availableQuantizeCpuVariants())
        for (const bool fastPaths : {false, true}) {
          const KernelCall c = kernelCall(in, scheme, operand, in.size(0) * blocksPerRow(scheme, in.size(1)));
          tensorScales.push_back(quantizeCpu(c.args, v, fastPaths));
          outs.push_back(c.values);
          scales.push_back(c.codes);
        }
        for (size_t v = 1; v < outs.size(); ++v) {
          QVERIFY(sameBitsOrBothNaN(outs[v].to(torch::kFloat32), outs[0].to(torch::kFloat32)));
          QVERIFY(torch::equal(scales[v], scales[0]));
          QCOMPARE(u32(tensorScales[v]), u32(tensorScales[0]));
        }
      }
    }
    qInfo("variants: %d", static_cast<int>(availableQuantizeCpuVariants().size()));
  }

  // The same for the blocks down the columns (quantizeColumnsCpu, the
  // backward products' operands): every variant, the same bits, on the
  // rounding patterns (NaN, Inf, subnormals, ties) with a short last block.
  void cpuColumnVariantsAgree() {
    const torch::Tensor patterns = roundingPatterns();
    const torch::Tensor x = patterns.slice(0, 0, patterns.numel() / 300 * 300).view({-1, 300});
    for (const torch::Tensor& in : {x, x.to(torch::kBFloat16)}) {
      for (Scheme scheme : {Scheme::Mxfp8, Scheme::Mxfp4, Scheme::Nvfp4}) {
        std::vector<torch::Tensor> outs, scales;
        std::vector<float> tensorScales;
        for (QuantizeCpuVariant v : availableQuantizeCpuVariants()) {
          const KernelCall c = kernelCall(in, scheme, false, in.size(1) * blocksPerRow(scheme, in.size(0)));
          tensorScales.push_back(quantizeColumnsCpu(c.args, v));
          outs.push_back(c.values);
          scales.push_back(c.codes);
        }
        for (size_t v = 1; v < outs.size(); ++v) {
          QVERIFY(sameBitsOrBothNaN(outs[v], outs[0]));
          QVERIFY(torch::equal(scales[v], scales[0]));
          QCOMPARE(u32(tensorScales[v]), u32(tensorScales[0]));
        }
      }
    }
  }

  // The fast paths (quantizeCpu(args): tables of a large bf16 input's values
  // for the elementwise schemes, row blocks in groups for the block schemes)
  // give bit for bit what the element function gives on each element, and
  // the same scale codes; blocks down the columns (quantizeColumnsCpu) what
  // the element function gives on the transposed copy's blocks. NaN where it
  // gives NaN, its sign and payload aside, as in reference_formats: which NaN
  // a product of two NaNs returns depends on the operand order each loop's
  // compiled code picks. Inputs: every bf16 pattern, shuffled (finite ones only,
  // then with Inf and NaN: NaN tensor scales and NaN blocks), rows of normal
  // values 2^-10 to 2^10 apart (many scale codes) and uniform values (few),
  // past the sizes where tables are used, each in bf16 and fp32 and with rows
  // that end in a short block (the last 5 columns dropped).
  void fastPathsAreTheElementFunction() {
    torch::manual_seed(7);
    const torch::Tensor all = torch::arange(65536, torch::kInt32).to(torch::kInt16).view(torch::kBFloat16);
    const torch::Tensor finite = all.masked_select(torch::isfinite(all));
    auto shuffled = [](const torch::Tensor& p, int64_t copies) {
      return p.repeat({copies}).index_select(0, torch::randperm(copies * p.numel())).view({-1, 256}).contiguous();
    };
    const torch::Tensor scaled =
        (torch::randn({2048, 2048}) * torch::exp2(torch::randint(-10, 11, {2048, 1}).to(torch::kFloat32)))
            .to(torch::kBFloat16);
    const torch::Tensor uniform = (torch::rand({2048, 2048}) * 2 - 1).to(torch::kBFloat16);  // few NVFP4 codes
    std::vector<torch::Tensor> inputs;
    for (const torch::Tensor& x : {shuffled(finite, 16), shuffled(all, 16), scaled, uniform})
      for (const torch::Tensor& y : {x, x.slice(1, 0, x.size(1) - 5).contiguous()}) {
        inputs.push_back(y);
        inputs.push_back(y.to(torch::kFloat32));
      }
    const QuantizeCpuVariant v = availableQuantizeCpuVariants().back();
    for (const torch::Tensor& in : inputs) {
      const torch::Tensor inT = in.t().contiguous();
      for (Scheme scheme : {Scheme::Bf16, Scheme::Fp8E4m3Tensor, Scheme::Fp8E5m2Tensor, Scheme::Mxfp8, Scheme::Mxfp4,
                            Scheme::Nvfp4}) {
        for (const bool columns : {false, true}) {
          if (columns && blockSizeOf(scheme) == 0) continue;
          // Dequantized fp32 values, then GEMM operands in bf16.
          for (const bool operand : {false, true}) {
            torch::Tensor values[2], codes[2];
            float tensorScales[2];
            for (int k = 0; k < 2; ++k) {
              // k 0: the fast path (columns: in place); k 1: the element function (columns: on the copy).
              // (One variant for both: variants may differ in NaN payloads, cpuVariantsAgree.)
              const torch::Tensor& blocksAlongRows = columns ? inT : in;
              const int64_t codeCount = blocksAlongRows.size(0) * blocksPerRow(scheme, blocksAlongRows.size(1));
              const KernelCall c = kernelCall(columns && k == 1 ? inT : in, scheme, operand, codeCount);
              if (columns && k == 0) {
                tensorScales[k] = quantizeColumnsCpu(c.args, v);
                values[k] = c.values.t().contiguous();
              } else {
                tensorScales[k] = quantizeCpu(c.args, v, k == 0);
                values[k] = c.values;
              }
              codes[k] = c.codes;
            }
            const std::string what = std::to_string(static_cast<int>(scheme)) + (columns ? " columns" : " rows") +
                                     (operand ? " operand " : " ") + std::string(c10::toString(in.scalar_type())) +
                                     " " + std::to_string(in.size(1));
            QCOMPARE(u32(tensorScales[0]), u32(tensorScales[1]));
            QVERIFY2(sameBitsOrBothNaN(values[0].to(torch::kFloat32), values[1].to(torch::kFloat32)), what.c_str());
            QVERIFY2(torch::equal(codes[0], codes[1]), what.c_str());
          }
        }
      }
    }
  }

  // The GEMM operands (quantizeForGemm): the same codes and scales as the
  // dequantized values, without the tensor scale, exact in bf16. fp8: the
  // dequantized value is the operand divided by the tensor scale (bit for
  // bit, as torchao's dequantization) and the operand's scale is 1 / tensor
  // scale; MX: the operand is the dequantized value; NVFP4: the operand over
  // its block's e4m3 scale is an e2m1 value e, the dequantized value is
  // e * (tensor scale * block scale) and the operand's scale the tensor
  // scale. Rows and columns, fp32 and bf16 inputs, every format and role, a
  // short last block; wide values (no MX block of scale code under 3).
  void gemmOperandsAreTheValuesWithoutTheTensorScale() {
    torch::manual_seed(9);
    const torch::Tensor base = torch::randn({96, 200}) * torch::exp(2 * torch::randn({96, 200}));
    for (const torch::Tensor& x : {base, base.to(torch::kBFloat16)})
      for (GemmFormat f : allGemmFormats())
        for (GemmRole r : {GemmRole::Input, GemmRole::Weight, GemmRole::GradOutput})
          for (const bool columns : {false, true}) {
            const std::string what = gemmFormatId(f) + " " + gemmRoleId(r) + (columns ? " columns" : " rows") +
                                     (x.scalar_type() == torch::kBFloat16 ? " bf16 in" : " fp32 in");
            const QuantizedTensor q = columns ? quantizeDequantizeColumns(x, f, r) : quantizeDequantize(x, f, r);
            const GemmOperand op32 = columns ? quantizeForGemmColumns(x, f, r, torch::kFloat32)
                                             : quantizeForGemm(x, f, r, torch::kFloat32);
            const GemmOperand op16 = columns ? quantizeForGemmColumns(x, f, r, torch::kBFloat16)
                                             : quantizeForGemm(x, f, r, torch::kBFloat16);
            QVERIFY2(op16.values.scalar_type() == torch::kBFloat16 && op16.values.sizes() == x.sizes(), what.c_str());
            // bf16 holds the operand exactly.
            QVERIFY2(torch::equal(op16.values.to(torch::kFloat32).contiguous().view(torch::kInt32),
                                  op32.values.contiguous().view(torch::kInt32)),
                     what.c_str());
            QVERIFY2(torch::equal(op16.scale, op32.scale), what.c_str());
            if (columns) {  // the rows' tensor scale handed over: the same operand
              const GemmOperand rows = quantizeForGemm(x, f, r, torch::kBFloat16);
              const GemmOperand known = quantizeForGemmColumns(x, f, r, torch::kBFloat16, rows.tensorScale);
              QVERIFY2(torch::equal(known.values.contiguous().view(torch::kInt16),
                                    op16.values.contiguous().view(torch::kInt16)) &&
                           torch::equal(known.tensorScale, op16.tensorScale),
                       what.c_str());
            }
            const torch::Tensor v = op32.values.contiguous(), deq = q.values.contiguous();
            const Scheme scheme = schemeOf(f, r);
            if (scheme == Scheme::Fp8E4m3Tensor || scheme == Scheme::Fp8E5m2Tensor) {
              QVERIFY2(torch::equal((v / q.tensorScale).view(torch::kInt32), deq.view(torch::kInt32)), what.c_str());
              QVERIFY2(torch::equal(op32.scale, q.tensorScale.reciprocal()), what.c_str());
            } else if (scheme == Scheme::Nvfp4) {
              // Block scale of each element: codes [rows, blocks] (columns: [cols, blocks] as for x^T).
              const torch::Tensor vr = columns ? v.t().contiguous() : v, dr = columns ? deq.t().contiguous() : deq;
              const float ts = q.tensorScale.item<float>();
              const auto* codes = q.blockScales.contiguous().data_ptr<uint8_t>();
              const int64_t rows = vr.size(0), cols = vr.size(1), perRow = q.blockScales.size(1);
              const float* pv = vr.data_ptr<float>();
              const float* pd = dr.data_ptr<float>();
              bool ok = true;
              for (int64_t i = 0; i < rows && ok; ++i)
                for (int64_t j = 0; j < cols && ok; ++j) {
                  const float blockScale = e4m3ToFloat(codes[i * perRow + j / 16]);
                  const float e = pv[i * cols + j] / blockScale;
                  const float magnitude = std::fabs(e);
                  const bool e2m1 = magnitude == 0 || magnitude == 0.5f || magnitude == 1 || magnitude == 1.5f ||
                                    magnitude == 2 || magnitude == 3 || magnitude == 4 || magnitude == 6;
                  ok = e2m1 && e * blockScale == pv[i * cols + j] && u32(e * (ts * blockScale)) == u32(pd[i * cols + j]);
                }
              QVERIFY2(ok, what.c_str());
              QVERIFY2(torch::equal(op32.scale, q.tensorScale), what.c_str());
            } else {
              QVERIFY2(torch::equal(v.view(torch::kInt32), deq.view(torch::kInt32)), what.c_str());
              QCOMPARE(op32.scale.item<float>(), 1.0f);
            }
          }
  }

  void threadsDoNotChangeTheBits() {
    torch::manual_seed(6);
    const torch::Tensor x = torch::randn({300, 1000}) * torch::rand({300, 1}) * 100;
    const int before = at::get_num_threads();
    for (GemmFormat f : allGemmFormats()) {
      at::set_num_threads(1);
      const QuantizedTensor one = quantizeDequantize(x, f, GemmRole::Input);
      at::set_num_threads(2);
      const QuantizedTensor two = quantizeDequantize(x, f, GemmRole::Input);
      QVERIFY2(torch::equal(one.values.view(torch::kInt32), two.values.view(torch::kInt32)), gemmFormatId(f).c_str());
    }
    at::set_num_threads(before);
  }
};

PLAB_TEST_APPLESS_MAIN(FormatsTest)
}  // namespace test_formats
#include "test_formats.moc"
