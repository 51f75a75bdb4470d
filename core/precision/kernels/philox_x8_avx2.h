#pragma once
// Philox4x32-10 rounds of 8 counters side by side in AVX2 registers (one
// 32-bit lane per counter). The compiler cannot vectorise philoxRound's
// 32x32 -> 64-bit products itself, and scalar rounds cost twice the whole
// element step of a stochastically rounded recipe. Integer arithmetic only:
// every lane computes exactly philoxRound's bits (test_fused_kernels checks
// the rounding bits against philox.h through the fused-vs-reference rows).
// Only for translation units compiled with -mavx2.
#include <immintrin.h>

#include <cstdint>

#include "precision/kernels/philox_simd_rounds.h"

namespace plab::kernels {
namespace {

// philoxRoundsSimd's operations on 8 lanes.
struct Avx2Ops {
  static __m256i set1(uint32_t k) { return _mm256_set1_epi32(static_cast<int>(k)); }
  static __m256i xor2(__m256i a, __m256i b) { return _mm256_xor_si256(a, b); }
  static void mulHiLo(__m256i x, __m256i m, __m256i& hi, __m256i& lo) {
    const __m256i even = _mm256_mul_epu32(x, m);                        // lanes 0, 2, 4, 6 as 64-bit products
    const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), m);  // lanes 1, 3, 5, 7
    hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
    lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  }
};

// The 10 rounds of philox4x32_10 on the counters c0..c3[8] of 8 groups,
// written as their 64 16-bit numbers in random16Of's order: group g's
// element e at out[8 g + e] (word e / 2, low half first).
inline void random16OfGroups8(const uint32_t* c0, const uint32_t* c1, const uint32_t* c2, const uint32_t* c3,
                              uint32_t k0, uint32_t k1, uint32_t* out) {
  __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c0));
  __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c1));
  __m256i x2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c2));
  __m256i x3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c3));
  philoxRoundsSimd<Avx2Ops>(x0, x1, x2, x3, k0, k1);
  // Transpose to one 128-bit row (w0, w1, w2, w3) per group: rows g and g + 4
  // share a register. Zero-extending its 16-bit halves gives the group's 8
  // numbers in order (little endian: each word's low half first).
  const __m256i t0 = _mm256_unpacklo_epi32(x0, x1), t1 = _mm256_unpackhi_epi32(x0, x1);
  const __m256i t2 = _mm256_unpacklo_epi32(x2, x3), t3 = _mm256_unpackhi_epi32(x2, x3);
  const __m256i rows[4] = {_mm256_unpacklo_epi64(t0, t2), _mm256_unpackhi_epi64(t0, t2),
                           _mm256_unpacklo_epi64(t1, t3), _mm256_unpackhi_epi64(t1, t3)};
  for (int g = 0; g < 4; ++g) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * g),
                        _mm256_cvtepu16_epi32(_mm256_castsi256_si128(rows[g])));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * (g + 4)),
                        _mm256_cvtepu16_epi32(_mm256_extracti128_si256(rows[g], 1)));
  }
}

}  // namespace
}  // namespace plab::kernels
