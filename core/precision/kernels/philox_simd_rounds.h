#pragma once
// The ten rounds of philox4x32_10 on counters held in SIMD registers, one
// lane per counter: philox.h's round written once for every register width.
// Ops supplies, for its register type V: set1(uint32_t), xor2(V, V), and
// mulHiLo(x, m, hi, lo), the high and low 32 bits of each lane's x * m.
#include <cstdint>

#include "precision/kernels/philox.h"

namespace plab::kernels {
namespace {

template <typename Ops, typename V>
inline void philoxRoundsSimd(V& x0, V& x1, V& x2, V& x3, uint32_t k0, uint32_t k1) {
  const V m0 = Ops::set1(kPhiloxMul0), m1 = Ops::set1(kPhiloxMul1);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kPhiloxBump0;
      k1 += kPhiloxBump1;
    }
    V hi0, lo0, hi1, lo1;
    Ops::mulHiLo(x0, m0, hi0, lo0);
    Ops::mulHiLo(x2, m1, hi1, lo1);
    const V n0 = Ops::xor2(Ops::xor2(hi1, x1), Ops::set1(k0));
    const V n2 = Ops::xor2(Ops::xor2(hi0, x3), Ops::set1(k1));
    x1 = lo1;
    x3 = lo0;
    x0 = n0;
    x2 = n2;
  }
}

}  // namespace
}  // namespace plab::kernels
