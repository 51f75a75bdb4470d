#pragma once
// The tables of the 8-bit code's threshold form
// (kernels::dynamicTreeCodeByThresholds), built from a sorted 256-entry
// code table and its bucket starts (dynamic_tree_code.h) by evaluating
// kernels::dynamicTreeCode itself: the thresholds by a binary search over
// the fp32 values in their order, the code starts at each bucket's lowest
// value. Host code, torch-free (tests build them for tables of their own).
#include <cstdint>
#include <limits>
#include <vector>

#include "precision/kernels/dynamic_tree_4bit.h"
#include "precision/kernels/dynamic_tree_8bit.h"

namespace plab {

// The float whose orderedKey is `key` (orderedKey's inverse).
inline float floatOfOrderedKey(uint32_t key) {
  return kernels::floatOf((key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key);
}

// threshold[k] for k = 1..255: the least non-NaN fp32 value whose code is at
// least k (the keys from -Inf's to +Inf's order the non-NaN values);
// threshold[0] unused (-Inf), [256] and [257] NaN.
inline std::vector<float> dynamicTreeThresholdsOf(const float* table, const uint8_t* start) {
  std::vector<float> out(kernels::kDynamicTreeThresholds, std::numeric_limits<float>::quiet_NaN());
  out[0] = -std::numeric_limits<float>::infinity();
  const uint32_t lowest = kernels::orderedKey(-std::numeric_limits<float>::infinity());
  const uint32_t highest = kernels::orderedKey(std::numeric_limits<float>::infinity());
  for (int k = 1; k < 256; ++k) {
    uint32_t lo = lowest, hi = highest;  // the code at hi is 255 >= k
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (kernels::dynamicTreeCode(floatOfOrderedKey(mid), table, start) >= k) hi = mid;
      else lo = mid + 1;
    }
    out[static_cast<size_t>(k)] = floatOfOrderedKey(lo);
  }
  return out;
}

// The 4-bit code's thresholds (kernels::dynamicTree4CodeBySearch): [k] for
// k = 1..15 the least non-NaN fp32 value whose dynamicTree4Code is at least k
// (+Inf's code is 15), found the same way; [0] unused (-Inf).
inline std::vector<float> dynamicTree4ThresholdsOf(const float* table) {
  std::vector<float> out(kernels::kDynamicTree4Thresholds, -std::numeric_limits<float>::infinity());
  const uint32_t lowest = kernels::orderedKey(-std::numeric_limits<float>::infinity());
  const uint32_t highest = kernels::orderedKey(std::numeric_limits<float>::infinity());
  for (int k = 1; k < kernels::kDynamicTree4Codes; ++k) {
    uint32_t lo = lowest, hi = highest;
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (kernels::dynamicTree4Code(floatOfOrderedKey(mid), table) >= k) hi = mid;
      else lo = mid + 1;
    }
    out[static_cast<size_t>(k)] = floatOfOrderedKey(lo);
  }
  return out;
}

// The code of each bucket's lowest value (NaN: 0, as dynamicTreeCode gives).
inline std::vector<uint8_t> dynamicTreeCodeStartsOf(const float* table, const uint8_t* start) {
  std::vector<uint8_t> out(static_cast<size_t>(kernels::kDynamicTreeBuckets));
  for (int64_t b = 0; b < kernels::kDynamicTreeBuckets; ++b)
    out[static_cast<size_t>(b)] = kernels::dynamicTreeCode(
        floatOfOrderedKey(static_cast<uint32_t>(b) << kernels::kDynamicTreeBucketShift), table, start);
  return out;
}

}  // namespace plab
