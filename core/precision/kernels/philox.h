#pragma once
// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2,
// 3", SC'11): a counter-based generator, a pure function of (counter, key).
// Stochastic rounding draws its bits from it, addressed by seed, step, stream
// and element index, so a CPU loop and a CUDA kernel that split the elements
// differently still round every element with the same bits.
#include <cstdint>

#include "precision/kernels/host_device.h"

namespace plab::kernels {

struct Philox4 {
  uint32_t w[4];
};

// The round's multipliers.
constexpr uint32_t kPhiloxMul0 = 0xD2511F53u, kPhiloxMul1 = 0xCD9E8D57u;

// One Philox round on the counter (c0..c3) with key (k0, k1).
PLAB_HD void philoxRound(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0, uint32_t k1) {
  const uint64_t p0 = static_cast<uint64_t>(kPhiloxMul0) * c0;
  const uint64_t p1 = static_cast<uint64_t>(kPhiloxMul1) * c2;
  const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
  const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
  c1 = static_cast<uint32_t>(p1);
  c3 = static_cast<uint32_t>(p0);
  c0 = n0;
  c2 = n2;
}

// The key schedule between rounds (a Weyl sequence).
constexpr uint32_t kPhiloxBump0 = 0x9E3779B9u, kPhiloxBump1 = 0xBB67AE85u;

PLAB_HD Philox4 philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kPhiloxBump0;
      k1 += kPhiloxBump1;
    }
    philoxRound(c0, c1, c2, c3, k0, k1);
  }
  return {{c0, c1, c2, c3}};
}

// One random stream: the run's seed, the parameter's step and a stream id
// (parameter and which tensor is written). firstGroup: the group of the
// tensor's first element within its parameter, non-zero when the tensor is
// a slice of it (a ZeRO shard starting at element 8 * firstGroup), so a
// slice draws exactly the bits of those elements of the whole parameter.
struct RandomStream {
  uint64_t seed = 0;
  uint32_t step = 0;
  uint32_t stream = 0;
  uint64_t firstGroup = 0;
};

// One Philox call serves the 8 elements of a group (index / 8): 128 bits,
// 16 per element.
PLAB_HD Philox4 randomGroup(const RandomStream& r, uint64_t localGroup) {
  const uint64_t group = r.firstGroup + localGroup;
  return philox4x32_10(static_cast<uint32_t>(group), static_cast<uint32_t>(group >> 32), r.step, r.stream,
                       static_cast<uint32_t>(r.seed), static_cast<uint32_t>(r.seed >> 32));
}

PLAB_HD uint32_t random16Of(const Philox4& group, uint64_t index) {
  const uint32_t word = group.w[(index >> 1) & 3u];
  return (index & 1u) ? word >> 16 : word & 0xFFFFu;
}

}  // namespace plab::kernels
