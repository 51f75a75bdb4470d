// CPU loop of the AdamW step with block-wise quantized moments
// (quantized_adamw.h): the element functions of quantized_adamw_element.h
// and the code tables of dynamic_tree_8bit.h / dynamic_tree_4bit.h in passes
// over one quantization block that the compiler vectorises, with AVX2 or
// AVX-512 gathers and permutes for the table look-ups. Included by one .cpp
// per instruction set (PLAB_QUANTIZED_KERNEL names its entry point), each
// compiled with -ffp-contract=off and -fno-math-errno: every variant rounds
// every operation once, as torch's tensor ops, and writes the same bits as
// the scalar functions (test_quantized_kernels holds them to each other).
//
// A block (256 elements; 128 for 4 bits) goes: dequantize m and v; the
// stochastic-rounding bits of its 8-element groups; the element step; the
// scale and codes of the new m and v; then, when asked for, the statistics,
// window and moment-error sums, their terms in vector lanes and their fp64
// sums in element order (the sums the scalar loop added, bit for bit).
#pragma once
// Nothing here includes torch or the standard library's templates: every
// function this file brings into a variant's translation unit has internal
// linkage (see fused_adamw_cpu_loop.h).
#include "formats/fp8_element.h"
#include "precision/kernels/quantized_adamw_cpu.h"
#include "precision/kernels/quantized_adamw_element.h"
#if defined(__AVX2__)
#include <immintrin.h>

#include "precision/kernels/philox_x8_avx2.h"
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define PLAB_QUANTIZED_X16 1
#include "precision/kernels/philox_x16_avx512.h"
#endif

#ifndef PLAB_QUANTIZED_KERNEL
#error "define PLAB_QUANTIZED_KERNEL to the entry point's name before including this file"
#endif

namespace plab::kernels {
namespace {

constexpr int64_t kMaxBlock = kDynamicTreeBlock;
#if defined(PLAB_QUANTIZED_X16)
// Every lane: the masked forms of the intrinsics, whose unmasked ones trip
// GCC 12's -Wmaybe-uninitialized (as in philox_x16_avx512.h).
constexpr __mmask16 kAll = 0xFFFF;
#endif  // the step's buffers hold one block
static_assert(kDynamicTree4Block <= kMaxBlock && kMaxBlock % 128 == 0, "blocks fill whole 16-group Philox batches");

// ---- Table look-ups, one block at a time ----------------------------------

// out[j] = table[codes[j]] * scale (dequantizeDynamicTree). AVX-512: the
// 256 entries in 16 registers, read by 8 two-register permutes (the code's
// low 5 bits) and a tree of blends on its bits 5, 6 and 7, cheaper here than
// a gather.
void dequantize8(const uint8_t* codes, int64_t len, const float* table, float scale, float* out) {
  int64_t j = 0;
#if defined(PLAB_QUANTIZED_X16)
  const __m512 s = _mm512_set1_ps(scale);
  __m512 t[16];
  for (int k = 0; k < 16; ++k) t[k] = _mm512_loadu_ps(table + 16 * k);
  const __m512i bit5 = _mm512_set1_epi32(32), bit6 = _mm512_set1_epi32(64), bit7 = _mm512_set1_epi32(128);
  for (; j + 16 <= len; j += 16) {
    const __m512i idx = _mm512_maskz_cvtepu8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + j)));
    const __mmask16 b5 = _mm512_test_epi32_mask(idx, bit5), b6 = _mm512_test_epi32_mask(idx, bit6),
                    b7 = _mm512_test_epi32_mask(idx, bit7);
    __m512 quarter[4];
    for (int h = 0; h < 4; ++h)
      quarter[h] = _mm512_mask_blend_ps(b5, _mm512_maskz_permutex2var_ps(kAll, t[4 * h], idx, t[4 * h + 1]),
                                        _mm512_maskz_permutex2var_ps(kAll, t[4 * h + 2], idx, t[4 * h + 3]));
    const __m512 value = _mm512_mask_blend_ps(b7, _mm512_mask_blend_ps(b6, quarter[0], quarter[1]),
                                              _mm512_mask_blend_ps(b6, quarter[2], quarter[3]));
    _mm512_storeu_ps(out + j, _mm512_mul_ps(value, s));
  }
#elif defined(__AVX2__)
  const __m256 s = _mm256_set1_ps(scale);
  for (; j + 8 <= len; j += 8) {
    const __m256i idx = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes + j)));
    _mm256_storeu_ps(out + j, _mm256_mul_ps(_mm256_i32gather_ps(table, idx, 4), s));
  }
#endif
  for (; j < len; ++j) out[j] = dequantizeDynamicTree(codes[j], table, scale);
}

// The same for packed 4-bit codes of elements first .. first + len (first
// even): the 16-entry table held in registers.
void dequantize4(const uint8_t* packed, int64_t first, int64_t len, const float* table, float scale, float* out) {
  int64_t j = 0;
#if defined(PLAB_QUANTIZED_X16)
  const __m512 t = _mm512_loadu_ps(table), s = _mm512_set1_ps(scale);
  for (; j + 16 <= len; j += 16) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(packed + (first + j) / 2));
    const __m128i low = _mm_set1_epi8(0x0F);
    // High halves first (even elements), interleaved with the low halves.
    const __m128i codes = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), low), _mm_and_si128(bytes, low));
    _mm512_storeu_ps(out + j, _mm512_mul_ps(_mm512_maskz_permutexvar_ps(kAll, _mm512_maskz_cvtepu8_epi32(kAll, codes), t), s));
  }
#elif defined(__AVX2__)
  const __m256 lowHalf = _mm256_loadu_ps(table), highHalf = _mm256_loadu_ps(table + 8), s = _mm256_set1_ps(scale);
  for (; j + 8 <= len; j += 8) {
    uint32_t word;
    __builtin_memcpy(&word, packed + (first + j) / 2, sizeof word);
    const __m128i bytes = _mm_cvtsi32_si128(static_cast<int>(word));
    const __m128i low = _mm_set1_epi8(0x0F);
    const __m128i codes = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), low), _mm_and_si128(bytes, low));
    const __m256i idx = _mm256_cvtepu8_epi32(codes);
    const __m256 high = _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(7)));
    const __m256 value =
        _mm256_blendv_ps(_mm256_permutevar8x32_ps(lowHalf, idx), _mm256_permutevar8x32_ps(highHalf, idx), high);
    _mm256_storeu_ps(out + j, _mm256_mul_ps(value, s));
  }
#endif
  for (; j < len; ++j) out[j] = dequantizeDynamicTree(unpack4(packed, first + j), table, scale);
}

#if defined(PLAB_QUANTIZED_X16)
// The 8-bit code's search order (dynamicTreeSearchOrderOf) in 16
// registers: order[0..15] (levels 0-3), [16..31] (level 4), then levels 5,
// 6 and 7 in 2, 4 and 8 registers.
struct SearchRegisters {
  __m512 r[16];
};
SearchRegisters searchRegistersOf(const float* order) {
  SearchRegisters s;
  for (int k = 0; k < 16; ++k) s.r[k] = _mm512_loadu_ps(order + 16 * k);
  return s;
}

// dynamicTreeCodeBySearch in 16 lanes, for kSearchVectors vectors at once
// (their paths are independent chains of permutes and comparisons, which
// the core overlaps when they stand side by side): the node p of each
// lane's path (1, then 2p or 2p + 1) picks its threshold by permutes from
// the level's registers (a permute reads the low 4 or 5 bits of p; the
// bits above pick the register pair); after 8 levels p - 256, its low
// byte, is the code.
constexpr int kSearchVectors = 4;
void searchCodes(const __m512* q, const SearchRegisters& s, __m512i* p) {
  const __m512i one = _mm512_set1_epi32(1), bit5 = _mm512_set1_epi32(32), bit6 = _mm512_set1_epi32(64);
  const auto descend = [&](int u, __m512 threshold) {
    const __mmask16 ge = _mm512_cmp_ps_mask(q[u], threshold, _CMP_GE_OQ);
    const __m512i twice = _mm512_add_epi32(p[u], p[u]);
    p[u] = _mm512_mask_add_epi32(twice, ge, twice, one);
  };
  for (int u = 0; u < kSearchVectors; ++u) p[u] = one;
  for (int level = 0; level < 4; ++level)
    for (int u = 0; u < kSearchVectors; ++u) descend(u, _mm512_maskz_permutexvar_ps(kAll, p[u], s.r[0]));
  for (int u = 0; u < kSearchVectors; ++u) descend(u, _mm512_maskz_permutexvar_ps(kAll, p[u], s.r[1]));
  for (int u = 0; u < kSearchVectors; ++u) descend(u, _mm512_maskz_permutex2var_ps(kAll, s.r[2], p[u], s.r[3]));
  for (int u = 0; u < kSearchVectors; ++u) {
    const __mmask16 b5 = _mm512_test_epi32_mask(p[u], bit5);
    descend(u, _mm512_mask_blend_ps(b5, _mm512_maskz_permutex2var_ps(kAll, s.r[4], p[u], s.r[5]),
                                    _mm512_maskz_permutex2var_ps(kAll, s.r[6], p[u], s.r[7])));
  }
  for (int u = 0; u < kSearchVectors; ++u) {
    const __mmask16 b5 = _mm512_test_epi32_mask(p[u], bit5), b6 = _mm512_test_epi32_mask(p[u], bit6);
    const __m512 low = _mm512_mask_blend_ps(b5, _mm512_maskz_permutex2var_ps(kAll, s.r[8], p[u], s.r[9]),
                                            _mm512_maskz_permutex2var_ps(kAll, s.r[10], p[u], s.r[11]));
    const __m512 high = _mm512_mask_blend_ps(b5, _mm512_maskz_permutex2var_ps(kAll, s.r[12], p[u], s.r[13]),
                                             _mm512_maskz_permutex2var_ps(kAll, s.r[14], p[u], s.r[15]));
    descend(u, _mm512_mask_blend_ps(b6, low, high));
  }
}
#endif

// codes[j] = dynamicTreeCodeByThresholds(q[j], threshold, codeStart), which
// is dynamicTreeCode (test_quantized_kernels). The vector form reads the
// bucket's code and the next two thresholds and takes at most one step up
// (what every bucket of torchao's tables needs); a group of lanes where one
// needs more goes to the scalar function, so the result holds for any
// sorted table. (The AVX-512 variant searches instead, quantize8, since
// quantizedAdamWCpu always gives it the search order; without one it takes
// this AVX2 form, which its instruction set includes.)
void codes8(const float* q, int64_t len, const float* threshold, const uint8_t* codeStart, uint8_t* codes) {
  int64_t j = 0;
#if defined(__AVX2__)
  const __m256i one = _mm256_set1_epi32(1);
  const int* start32 = reinterpret_cast<const int*>(codeStart);
  for (; j + 8 <= len; j += 8) {
    const __m256 x = _mm256_loadu_ps(q + j);
    const __m256i u = _mm256_castps_si256(x);
    const __m256i key = _mm256_xor_si256(u, _mm256_or_si256(_mm256_srai_epi32(u, 31), _mm256_set1_epi32(INT32_MIN)));
    const __m256i bucket = _mm256_srli_epi32(key, kDynamicTreeBucketShift);
    const __m256i word = _mm256_i32gather_epi32(start32, _mm256_srli_epi32(bucket, 2), 4);
    const __m256i shift = _mm256_slli_epi32(_mm256_and_si256(bucket, _mm256_set1_epi32(3)), 3);
    const __m256i c0 = _mm256_and_si256(_mm256_srlv_epi32(word, shift), _mm256_set1_epi32(255));
    const __m256 next = _mm256_i32gather_ps(threshold + 1, c0, 4), after = _mm256_i32gather_ps(threshold + 2, c0, 4);
    const __m256 step = _mm256_cmp_ps(x, next, _CMP_GE_OQ);
    if (!_mm256_testz_ps(step, _mm256_cmp_ps(x, after, _CMP_GE_OQ))) {
      for (int l = 0; l < 8; ++l) codes[j + l] = dynamicTreeCodeByThresholds(q[j + l], threshold, codeStart);
      continue;
    }
    const __m256i stepped = _mm256_sub_epi32(c0, _mm256_castps_si256(step));  // step lanes are -1
    const __m256i out = _mm256_andnot_si256(_mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)), stepped);
    const __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(out), _mm256_extracti128_si256(out, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(codes + j), _mm_packus_epi16(words, words));
  }
  (void)one;
#endif
  for (; j < len; ++j) codes[j] = dynamicTreeCodeByThresholds(q[j], threshold, codeStart);
}

// ---- Quantization of one block's new moment -------------------------------

// dynamicTreeScale of one block: the largest magnitude in vector lanes
// (maxps(a, top) is the scalar loop's `a > top ? a : top`, and the largest
// magnitude does not depend on the order it is found in), NaN lanes
// skipped and noted; a block with a NaN takes the scalar function, which
// returns its last NaN. -0 counts as +0 here, as it does for the maximum.
float blockScale(const float* x, int64_t len) {
#if defined(PLAB_QUANTIZED_X16)
  if (len % 16 == 0) {
    __m512 top = _mm512_setzero_ps();
    __mmask16 nan = 0;
    for (int64_t j = 0; j < len; j += 16) {
      const __m512 v = _mm512_loadu_ps(x + j);
      nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
      top = _mm512_maskz_max_ps(kAll,
                                _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7FFFFFFF))),
                                top);
    }
    if (nan) return dynamicTreeScale(x, len);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, top);
    float best = 0;
    for (const float l : lanes) best = l > best ? l : best;
    return best < 1e-12f ? 1e-12f : best;
  }
#elif defined(__AVX2__)
  if (len % 8 == 0) {
    __m256 top = _mm256_setzero_ps(), nan = _mm256_setzero_ps();
    for (int64_t j = 0; j < len; j += 8) {
      const __m256 v = _mm256_loadu_ps(x + j);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
      top = _mm256_max_ps(_mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7FFFFFFF))),
                          top);
    }
    if (_mm256_movemask_ps(nan)) return dynamicTreeScale(x, len);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, top);
    float best = 0;
    for (const float l : lanes) best = l > best ? l : best;
    return best < 1e-12f ? 1e-12f : best;
  }
#endif
  return dynamicTreeScale(x, len);
}

// quantizeDynamicTreeBlock: the scale, then the codes of x / scale. The
// AVX-512 variant divides and searches (order: dynamicTreeSearchOrderOf of
// the thresholds) in one pass; the others count thresholds from the
// bucket's code (codes8).
float quantize8(const float* x, int64_t len, const float* threshold, const uint8_t* codeStart, const float* order,
                uint8_t* codes) {
  const float scale = blockScale(x, len);
#if defined(PLAB_QUANTIZED_X16)
  if (order && len % (16 * kSearchVectors) == 0) {
    const SearchRegisters search = searchRegistersOf(order);
    const __m512 s = _mm512_set1_ps(scale);
    for (int64_t j = 0; j < len; j += 16 * kSearchVectors) {
      __m512 q[kSearchVectors];
      __m512i code[kSearchVectors];
      for (int u = 0; u < kSearchVectors; ++u) q[u] = _mm512_div_ps(_mm512_loadu_ps(x + j + 16 * u), s);
      searchCodes(q, search, code);
      for (int u = 0; u < kSearchVectors; ++u)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + j + 16 * u), _mm512_maskz_cvtepi32_epi8(kAll, code[u]));
    }
    return scale;
  }
#else
  (void)order;
#endif
  alignas(64) float q[kMaxBlock];
  for (int64_t j = 0; j < len; ++j) q[j] = x[j] / scale;
  codes8(q, len, threshold, codeStart, codes);
  return scale;
}

// torchao's 4-bit store (quantize_4bit_with_qmap on x / scale), two codes a
// byte, the even element's in the high half. With the thresholds' search
// order (order not null) the AVX-512 variant divides and searches them in
// one pass (dynamicTree4CodeBySearch: 4 permutes from one register); the
// others count table entries.
float quantize4(const float* x, int64_t len, const float* table, const float* order, uint8_t* packed) {
  const float scale = blockScale(x, len);
#if defined(PLAB_QUANTIZED_X16)
  if (order && len % 16 == 0) {
    const __m512 search = _mm512_loadu_ps(order), s = _mm512_set1_ps(scale);
    const __m512i one = _mm512_set1_epi32(1);
    const __m128i lowByte = _mm_set1_epi16(0x00FF);
    for (int64_t j = 0; j < len; j += 16) {
      const __m512 q = _mm512_div_ps(_mm512_loadu_ps(x + j), s);
      __m512i p = one;
      for (int level = 0; level < 4; ++level) {
        const __mmask16 ge = _mm512_cmp_ps_mask(q, _mm512_maskz_permutexvar_ps(kAll, p, search), _CMP_GE_OQ);
        const __m512i twice = _mm512_add_epi32(p, p);
        p = _mm512_mask_add_epi32(twice, ge, twice, one);
      }
      // p - 16 is the code: its low 4 bits. As 16-bit pairs (even element
      // low byte, odd high byte): (even << 4) | odd, then one byte each.
      const __m128i bytes = _mm512_maskz_cvtepi32_epi8(kAll, _mm512_and_si512(p, _mm512_set1_epi32(15)));
      const __m128i pairs = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(bytes, lowByte), 4), _mm_srli_epi16(bytes, 8));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(packed + j / 2), _mm_packus_epi16(pairs, pairs));
    }
    return scale;
  }
#else
  (void)order;
#endif
  float t[kDynamicTree4Codes], up[kDynamicTree4Codes];
  for (int k = 0; k < kDynamicTree4Codes; ++k) {
    t[k] = table[k];
    up[k] = table[k + 1 < kDynamicTree4Codes ? k + 1 : k];
  }
  alignas(64) uint8_t codes[kMaxBlock];
  for (int64_t j = 0; j < len; ++j) codes[j] = dynamicTree4CodeByCount(x[j] / scale, t, up);
  for (int64_t p = 0; p < len / 2; ++p)
    packed[p] = static_cast<uint8_t>((codes[2 * p] << 4) | codes[2 * p + 1]);
  return scale;
}

// torchao's quantize_fp8: scale = max |x| (at least 1e-12) / 448, codes =
// e4m3(x / scale) as torch casts.
float quantizeFp8(const float* x, int64_t len, uint8_t* codes) {
  const float scale = blockScale(x, len) / 448.0f;
  for (int64_t j = 0; j < len; ++j) codes[j] = formats::e4m3FromFloat(x[j] / scale);
  return scale;
}

// ---- The moments of one block in and out ----------------------------------

template <MomentLayout Layout>
void loadMoments(const QuantizedAdamWArgs& a, int64_t first, int64_t len, float* m, float* v) {
  const uint8_t* mc = static_cast<const uint8_t*>(a.m);
  const uint8_t* vc = static_cast<const uint8_t*>(a.v);
  if (Layout == MomentLayout::DynamicTree8bit) {
    dequantize8(mc + first, len, a.signedCode, a.mScale[first / kDynamicTreeBlock], m);
    dequantize8(vc + first, len, a.unsignedCode, a.vScale[first / kDynamicTreeBlock], v);
  } else if (Layout == MomentLayout::DynamicTree4bit) {
    dequantize4(mc, first, len, a.signedCode, a.mScale[first / kDynamicTree4Block], m);
    dequantize4(vc, first, len, a.unsignedCode, a.vScale[first / kDynamicTree4Block], v);
  } else if (Layout == MomentLayout::Fp8E4m3) {  // torchao: codes.float() * scale
    const float ms = a.mScale[first / kDynamicTreeBlock], vs = a.vScale[first / kDynamicTreeBlock];
    for (int64_t j = 0; j < len; ++j) m[j] = formats::e4m3ToFloat(mc[first + j]) * ms;
    for (int64_t j = 0; j < len; ++j) v[j] = formats::e4m3ToFloat(vc[first + j]) * vs;
  } else if (Layout == MomentLayout::PlainFp32) {
    const float* mp = static_cast<const float*>(a.m) + first;
    const float* vp = static_cast<const float*>(a.v) + first;
    for (int64_t j = 0; j < len; ++j) m[j] = mp[j];
    for (int64_t j = 0; j < len; ++j) v[j] = vp[j];
  } else {
    const uint16_t* mp = static_cast<const uint16_t*>(a.m) + first;
    const uint16_t* vp = static_cast<const uint16_t*>(a.v) + first;
    for (int64_t j = 0; j < len; ++j) m[j] = bf16ToFloat(mp[j]);
    for (int64_t j = 0; j < len; ++j) v[j] = bf16ToFloat(vp[j]);
  }
}

template <MomentLayout Layout>
void storeMoments(const QuantizedAdamWArgs& a, int64_t first, int64_t len, const float* m, const float* v) {
  uint8_t* mc = static_cast<uint8_t*>(a.m);
  uint8_t* vc = static_cast<uint8_t*>(a.v);
  if (Layout == MomentLayout::DynamicTree8bit) {
    a.mScale[first / kDynamicTreeBlock] =
        quantize8(m, len, a.signedThresholds, a.signedCodeStarts, a.signedSearch, mc + first);
    a.vScale[first / kDynamicTreeBlock] =
        quantize8(v, len, a.unsignedThresholds, a.unsignedCodeStarts, a.unsignedSearch, vc + first);
  } else if (Layout == MomentLayout::DynamicTree4bit) {
    a.mScale[first / kDynamicTree4Block] = quantize4(m, len, a.signedCode, a.signedSearch, mc + first / 2);
    a.vScale[first / kDynamicTree4Block] = quantize4(v, len, a.unsignedCode, a.unsignedSearch, vc + first / 2);
  } else if (Layout == MomentLayout::Fp8E4m3) {
    a.mScale[first / kDynamicTreeBlock] = quantizeFp8(m, len, mc + first);
    a.vScale[first / kDynamicTreeBlock] = quantizeFp8(v, len, vc + first);
  } else if (Layout == MomentLayout::PlainFp32) {
    float* mp = static_cast<float*>(a.m) + first;
    float* vp = static_cast<float*>(a.v) + first;
    for (int64_t j = 0; j < len; ++j) mp[j] = m[j];
    for (int64_t j = 0; j < len; ++j) vp[j] = v[j];
  } else {
    uint16_t* mp = static_cast<uint16_t*>(a.m) + first;
    uint16_t* vp = static_cast<uint16_t*>(a.v) + first;
    for (int64_t j = 0; j < len; ++j) mp[j] = bf16Nearest(m[j]);
    for (int64_t j = 0; j < len; ++j) vp[j] = bf16Nearest(v[j]);
  }
}

// ---- Stochastic-rounding bits ---------------------------------------------

// out[j] = random16Of(randomGroup(r, (first + j) / 8), first + j) for the
// block's whole 8-element groups (first is a multiple of 8; out holds
// kMaxBlock): Philox of 8 or 16 groups side by side.
void blockRandoms(const RandomStream& r, int64_t first, int64_t len, uint32_t* out) {
  const int64_t groups = (len + 7) / 8;
  const uint32_t k0 = static_cast<uint32_t>(r.seed), k1 = static_cast<uint32_t>(r.seed >> 32);
#if defined(PLAB_QUANTIZED_X16) || defined(__AVX2__)
#if defined(PLAB_QUANTIZED_X16)
  constexpr int kBatch = 16;
#else
  constexpr int kBatch = 8;
#endif
  for (int64_t g0 = 0; g0 < groups; g0 += kBatch) {
    uint32_t c0[kBatch], c1[kBatch], c2[kBatch], c3[kBatch];
    for (int g = 0; g < kBatch; ++g) {
      const uint64_t group = r.firstGroup + static_cast<uint64_t>(first / 8 + g0 + g);
      c0[g] = static_cast<uint32_t>(group);
      c1[g] = static_cast<uint32_t>(group >> 32);
      c2[g] = r.step;
      c3[g] = r.stream;
    }
#if defined(PLAB_QUANTIZED_X16)
    random16OfGroups8x2(c0, c1, c2, c3, k0, k1, out + 8 * g0, out + 8 * (g0 + 8));
#else
    random16OfGroups8(c0, c1, c2, c3, k0, k1, out + 8 * g0);
#endif
  }
#else
  (void)k0;
  (void)k1;
  for (int64_t g = 0; g < groups; ++g) {
    const Philox4 p = randomGroup(r, static_cast<uint64_t>(first / 8 + g));
    for (int e = 0; e < 8; ++e) out[8 * g + e] = random16Of(p, static_cast<uint64_t>(e));
  }
#endif
}

// ---- The step ---------------------------------------------------------------

PLAB_HD float weightValue(float w) { return w; }
PLAB_HD float weightValue(uint16_t w) { return bf16ToFloat(w); }

template <bool Fp32Weights>
struct WeightType {
  using type = uint16_t;
};
template <>
struct WeightType<true> {
  using type = float;
};

// The element step over one block, on fp32 arrays only (weights, gradients
// and Kahan buffers widened before, the written bits narrowed after): with
// 16-bit loads and stores in the loop GCC 12 tries 16-bit lanes first and
// gives some rules up unvectorised. Every pointer is a restrict-qualified
// parameter, so no run-time overlap check is needed.
// The lerps' forms (LerpWeight::fromEnd) are constants here, so that the
// select between them folds (GCC does not vectorise a select on a
// loop-invariant bool).
template <bool Fp32Weights, WeightRule Rule, bool MFromEnd, bool VFromEnd>
void stepElements(int64_t len, const float* __restrict w, const float* __restrict g, const float* __restrict k,
                  const uint32_t* __restrict random, float* __restrict m, float* __restrict v,
                  float* __restrict updated, float* __restrict after, uint32_t* __restrict weightBits,
                  uint32_t* __restrict compBits, TorchaoScalars s) {
  s.m.fromEnd = MFromEnd;
  s.v.fromEnd = VFromEnd;
  for (int64_t j = 0; j < len; ++j) {
    float mj = m[j], vj = v[j];
    const float kj = Rule == WeightRule::Kahan ? k[j] : 0.0f;
    const uint32_t r = Rule == WeightRule::Stochastic ? random[j] : 0u;
    const QuantizedElementOut out = quantizedElementStep<Fp32Weights, Rule>(w[j], g[j], mj, vj, kj, r, s);
    m[j] = mj;
    v[j] = vj;
    updated[j] = out.updated;
    after[j] = out.after;
    if (!Fp32Weights) weightBits[j] = out.weight;
    if (Rule == WeightRule::Kahan) compBits[j] = out.comp;
  }
}

// What storing the block's new moments lost (MomentErrorSums): the stored
// values read back as the next step reads them, against m and v, in fp64
// (the difference of two fp32 values is exact), in element order.
template <MomentLayout Layout>
void addMomentErrors(const QuantizedAdamWArgs& a, int64_t first, int64_t len, const float* m, const float* v,
                     MomentErrorSums& e) {
  alignas(64) float mq[kMaxBlock], vq[kMaxBlock];
  loadMoments<Layout>(a, first, len, mq, vq);
  // The terms in vector lanes, their sums one after the other (fp64
  // addition is not associative: element order keeps the scalar loop's sums).
  alignas(64) double dm2[kMaxBlock], m2[kMaxBlock], dv2[kMaxBlock], v2[kMaxBlock];
  for (int64_t j = 0; j < len; ++j) {
    const double dm = static_cast<double>(mq[j]) - m[j], dv = static_cast<double>(vq[j]) - v[j];
    dm2[j] = dm * dm;
    m2[j] = static_cast<double>(m[j]) * m[j];
    dv2[j] = dv * dv;
    v2[j] = static_cast<double>(v[j]) * v[j];
  }
  double mErrorSq = e.mErrorSq, mSq = e.mSq, vErrorSq = e.vErrorSq, vSq = e.vSq;
  for (int64_t j = 0; j < len; ++j) {
    mErrorSq += dm2[j];
    mSq += m2[j];
    vErrorSq += dv2[j];
    vSq += v2[j];
  }
  e.mErrorSq = mErrorSq;
  e.mSq = mSq;
  e.vErrorSq = vErrorSq;
  e.vSq = vSq;
}

// The step statistics of one block (StepSums): the squares in vector lanes
// and summed in element order as the scalar loop summed them; the counts as
// integers (a sum of ones in fp64 is exact in any order).
void addStepSums(const float* before, const float* updated, const float* after, int64_t len, StepSums& sums) {
  alignas(64) double intendedSq[kMaxBlock], changeSq[kMaxBlock];
  int64_t nonZero = 0, roundedAway = 0;
  for (int64_t j = 0; j < len; ++j) {
    const double intended = static_cast<double>(updated[j]) - static_cast<double>(before[j]);
    const double change = static_cast<double>(after[j]) - static_cast<double>(before[j]);
    const int moved = intended != 0 ? 1 : 0;
    nonZero += moved;
    roundedAway += after[j] == before[j] ? moved : 0;
    intendedSq[j] = intended * intended;
    changeSq[j] = change * change;
  }
  double iSq = sums.intendedSq, cSq = sums.changeSq;
  for (int64_t j = 0; j < len; ++j) {
    iSq += intendedSq[j];
    cSq += changeSq[j];
  }
  sums.intendedSq = iSq;
  sums.changeSq = cSq;
  sums.intendedNonZero += static_cast<double>(nonZero);
  sums.roundedAway += static_cast<double>(roundedAway);
}

// Steps [begin, end) a block at a time. Statistics in one fp64 sum per term,
// in element order (a fixed order per task).
template <bool Fp32Weights, WeightRule Rule, MomentLayout Layout>
void stepRange(const QuantizedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums, MomentErrorSums* errors) {
  alignas(64) float m[kMaxBlock], v[kMaxBlock], before[kMaxBlock], updated[kMaxBlock], after[kMaxBlock];
  alignas(64) float g[kMaxBlock], k[kMaxBlock];
  alignas(64) uint32_t random[kMaxBlock] = {}, weightBits[kMaxBlock], compBits[kMaxBlock];
  using W = typename WeightType<Fp32Weights>::type;
  const int64_t block = Layout == MomentLayout::DynamicTree4bit ? kDynamicTree4Block : kDynamicTreeBlock;
  for (int64_t c = begin; c < end; c += block) {
    const int64_t len = end - c < block ? end - c : block;
    loadMoments<Layout>(a, c, len, m, v);
    if (Rule == WeightRule::Stochastic) blockRandoms(a.random, c, len, random);
    W* param = static_cast<W*>(a.param) + c;
    const W* grad = static_cast<const W*>(a.grad) + c;
    for (int64_t j = 0; j < len; ++j) before[j] = weightValue(param[j]);
    for (int64_t j = 0; j < len; ++j) g[j] = weightValue(grad[j]);
    if (Rule == WeightRule::Kahan)
      for (int64_t j = 0; j < len; ++j) k[j] = bf16ToFloat(a.comp[c + j]);
    const auto step = a.s.m.fromEnd ? (a.s.v.fromEnd ? stepElements<Fp32Weights, Rule, true, true>
                                                     : stepElements<Fp32Weights, Rule, true, false>)
                                     : (a.s.v.fromEnd ? stepElements<Fp32Weights, Rule, false, true>
                                                      : stepElements<Fp32Weights, Rule, false, false>);
    step(len, before, g, k, random, m, v, updated, after, weightBits, compBits, a.s);
    if constexpr (Fp32Weights) {
      for (int64_t j = 0; j < len; ++j) param[j] = updated[j];
    } else {
      for (int64_t j = 0; j < len; ++j) param[j] = static_cast<uint16_t>(weightBits[j]);
    }
    if (Rule == WeightRule::Kahan)
      for (int64_t j = 0; j < len; ++j) a.comp[c + j] = static_cast<uint16_t>(compBits[j]);
    storeMoments<Layout>(a, c, len, m, v);
    if (sums) addStepSums(before, updated, after, len, *sums);
    if (a.windowSum) {
      const int64_t stride = a.windowStride;
      for (int64_t i = (c + stride - 1) / stride * stride; i < c + len; i += stride)
        a.windowSum[i / stride] += static_cast<double>(updated[i - c]) - static_cast<double>(before[i - c]);
    }
    if (errors) addMomentErrors<Layout>(a, c, len, m, v, *errors);
  }
}

template <bool Fp32Weights, WeightRule Rule>
void runLayout(const QuantizedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums, MomentErrorSums* errors) {
  switch (a.layout) {
    case MomentLayout::DynamicTree8bit:
      stepRange<Fp32Weights, Rule, MomentLayout::DynamicTree8bit>(a, begin, end, sums, errors);
      break;
    case MomentLayout::DynamicTree4bit:
      stepRange<Fp32Weights, Rule, MomentLayout::DynamicTree4bit>(a, begin, end, sums, errors);
      break;
    case MomentLayout::Fp8E4m3: stepRange<Fp32Weights, Rule, MomentLayout::Fp8E4m3>(a, begin, end, sums, errors); break;
    case MomentLayout::PlainFp32:
      stepRange<Fp32Weights, Rule, MomentLayout::PlainFp32>(a, begin, end, sums, errors);
      break;
    case MomentLayout::PlainBf16:
      stepRange<Fp32Weights, Rule, MomentLayout::PlainBf16>(a, begin, end, sums, errors);
      break;
  }
}

}  // namespace

// fp32 weights are written as computed (their rule is moot); bf16 ones by
// Nearest, Kahan or Stochastic (Master has no meaning here: Nearest).
void PLAB_QUANTIZED_KERNEL(const QuantizedAdamWArgs& a, int64_t begin, int64_t end, StepSums* sums,
                           MomentErrorSums* errors) {
  if (a.fp32Weights) {
    runLayout<true, WeightRule::Nearest>(a, begin, end, sums, errors);
    return;
  }
  switch (a.rule) {
    case WeightRule::Kahan: runLayout<false, WeightRule::Kahan>(a, begin, end, sums, errors); break;
    case WeightRule::Stochastic: runLayout<false, WeightRule::Stochastic>(a, begin, end, sums, errors); break;
    case WeightRule::Nearest:
    case WeightRule::Master: runLayout<false, WeightRule::Nearest>(a, begin, end, sums, errors); break;
  }
}

}  // namespace plab::kernels
