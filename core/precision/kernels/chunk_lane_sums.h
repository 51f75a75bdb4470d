#pragma once
// The statistics of the fused CPU loops (fused_adamw_cpu_loop.h,
// torch_fused_adamw_cpu_loop.h) over one chunk of stepped elements: element
// j of a chunk goes to lane j % 8 and each lane adds in element order, so a
// block's sums are the same whichever variant or thread ran it; the chunk's
// sampled elements add their intended update to their window's sum.
// In an unnamed namespace, as the loops: each instruction-set file compiles
// its own copy (a shared inline definition could be taken from the AVX-512
// file by the baseline one).
#include <cstdint>

#include "precision/kernels/fused_adamw.h"

namespace plab::kernels {
namespace {

constexpr int kLanes = 8;

struct LaneSums {
  double intendedNonZero[kLanes] = {}, roundedAway[kLanes] = {}, intendedSq[kLanes] = {}, changeSq[kLanes] = {};
  void addTo(StepSums& s) const {
    for (int l = 0; l < kLanes; ++l) {
      s.intendedNonZero += intendedNonZero[l];
      s.roundedAway += roundedAway[l];
      s.intendedSq += intendedSq[l];
      s.changeSq += changeSq[l];
    }
  }
  // The chunk starts at a multiple of 8 elements. origin: where the intended
  // update starts (the weight, or the master weight / compensated sum);
  // updated: origin plus the update in fp32; before/after: the stored weight
  // read back before and after the step.
  void addChunk(const float* origin, const float* updated, const float* before, const float* after, int64_t len) {
    for (int64_t j0 = 0; j0 < len; j0 += kLanes) {
      const int width = static_cast<int>(len - j0 < kLanes ? len - j0 : kLanes);
      for (int l = 0; l < width; ++l) {
        const int64_t j = j0 + l;
        const double intended = static_cast<double>(updated[j]) - static_cast<double>(origin[j]);
        const double change = static_cast<double>(after[j]) - static_cast<double>(before[j]);
        const double nonZero = intended != 0 ? 1.0 : 0.0;
        intendedNonZero[l] += nonZero;
        roundedAway[l] += after[j] == before[j] ? nonZero : 0.0;
        intendedSq[l] += intended * intended;
        changeSq[l] += change * change;
      }
    }
  }
};

// Element i of the chunk starting at c is sampled when i % stride == 0.
void addChunkWindowSums(double* windowSum, int64_t stride, int64_t c, int64_t len, const float* origin,
                        const float* updated) {
  for (int64_t i = (c + stride - 1) / stride * stride; i < c + len; i += stride)
    windowSum[i / stride] += static_cast<double>(updated[i - c]) - static_cast<double>(origin[i - c]);
}

}  // namespace
}  // namespace plab::kernels
