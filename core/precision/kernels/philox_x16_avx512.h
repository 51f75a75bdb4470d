#pragma once
// Two Philox streams of 8 groups each side by side in AVX-512 registers
// (lanes 0-7: stream A, lanes 8-15: stream B): the moments' two streams of a
// chunk in one pass of the rounds. Integer arithmetic only, lane for lane
// philoxRound's bits (philox_x8_avx2.h has the 8-lane form and the output
// order). Only for translation units compiled with AVX-512F/BW/VL.
#include <immintrin.h>

#include <cstdint>

#include "precision/kernels/philox_simd_rounds.h"

namespace plab::kernels {
namespace {

// philoxRoundsSimd's operations on 16 lanes. (The zero-masked forms with
// every lane selected: gcc 12 warns that the unmasked ones read an
// uninitialised pass-through register.)
struct Avx512Ops {
  static __m512i set1(uint32_t k) { return _mm512_set1_epi32(static_cast<int>(k)); }
  static __m512i xor2(__m512i a, __m512i b) { return _mm512_xor_si512(a, b); }
  static __m512i srli64(__m512i x, unsigned n) { return _mm512_maskz_srli_epi64(0xFF, x, n); }
  static void mulHiLo(__m512i x, __m512i m, __m512i& hi, __m512i& lo) {
    const __m512i even = _mm512_maskz_mul_epu32(0xFF, x, m);             // lanes 0, 2, ... as 64-bit products
    const __m512i odd = _mm512_maskz_mul_epu32(0xFF, srli64(x, 32), m);  // lanes 1, 3, ...
    hi = _mm512_mask_blend_epi32(0xAAAA, srli64(even, 32), odd);
    lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_maskz_slli_epi64(0xFF, odd, 32));
  }
};

// c0..c3[16]: the counters of 8 groups of stream A, then 8 of stream B.
// Writes each stream's 64 16-bit numbers in random16Of's order to outA, outB.
inline void random16OfGroups8x2(const uint32_t* c0, const uint32_t* c1, const uint32_t* c2, const uint32_t* c3,
                                uint32_t k0, uint32_t k1, uint32_t* outA, uint32_t* outB) {
  __m512i x0 = _mm512_loadu_si512(c0), x1 = _mm512_loadu_si512(c1);
  __m512i x2 = _mm512_loadu_si512(c2), x3 = _mm512_loadu_si512(c3);
  philoxRoundsSimd<Avx512Ops>(x0, x1, x2, x3, k0, k1);
  // As in the 8-lane form, per 128-bit lane L: rows[g] holds group 4 L + g's
  // four words; lanes 0-1 are stream A's groups 0-7, lanes 2-3 stream B's.
  const __m512i t0 = _mm512_maskz_unpacklo_epi32(0xFFFF, x0, x1), t1 = _mm512_maskz_unpackhi_epi32(0xFFFF, x0, x1);
  const __m512i t2 = _mm512_maskz_unpacklo_epi32(0xFFFF, x2, x3), t3 = _mm512_maskz_unpackhi_epi32(0xFFFF, x2, x3);
  const __m512i rows[4] = {_mm512_maskz_unpacklo_epi64(0xFF, t0, t2), _mm512_maskz_unpackhi_epi64(0xFF, t0, t2),
                           _mm512_maskz_unpacklo_epi64(0xFF, t1, t3), _mm512_maskz_unpackhi_epi64(0xFF, t1, t3)};
  for (int g = 0; g < 4; ++g) {
    const __m128i lanes[4] = {_mm512_maskz_extracti32x4_epi32(0xF, rows[g], 0),
                              _mm512_maskz_extracti32x4_epi32(0xF, rows[g], 1),
                              _mm512_maskz_extracti32x4_epi32(0xF, rows[g], 2),
                              _mm512_maskz_extracti32x4_epi32(0xF, rows[g], 3)};
    for (int lane = 0; lane < 4; ++lane) {
      uint32_t* out = (lane < 2 ? outA : outB) + 8 * (4 * (lane % 2) + g);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_cvtepu16_epi32(lanes[lane]));
    }
  }
}

}  // namespace
}  // namespace plab::kernels
