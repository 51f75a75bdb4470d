#include "precision/dynamic_tree_code.h"

#include "precision/dynamic_tree_thresholds.h"
#include "precision/kernels/dynamic_tree_8bit.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace plab {
namespace {

// torchao's create_dynamic_map(signed, max_exponent_bits, total_bits) with
// total_bits - 1 == max_exponent_bits (both its uses: 8 bits with 7, 4 bits
// with 3), where no linear region is added: 2^total_bits values.
torch::Tensor build(bool isSigned, int exponentBits = 7) {
  torch::NoGradGuard noGrad;
  std::vector<float> values;
  for (int i = 0; i < exponentBits; ++i) {
    const int64_t points = isSigned ? (int64_t{1} << i) + 1 : (int64_t{1} << (i + 1)) + 1;
    const torch::Tensor bounds = torch::linspace(0.1, 1.0, points, torch::kFloat32);
    const torch::Tensor means = (bounds.slice(0, 0, points - 1) + bounds.slice(0, 1, points)) / 2.0;
    // Python's 10 ** (i - (exponentBits - 1)): a correctly rounded double
    // (1 exactly for the last decade), then fp32 in torch's mul.
    const double decade = std::pow(10.0, i - (exponentBits - 1));
    for (const double sign : {1.0, -1.0}) {
      if (sign < 0 && !isSigned) break;
      const torch::Tensor scaled = (means * (sign * decade)).contiguous();
      const float* p = scaled.data_ptr<float>();
      values.insert(values.end(), p, p + scaled.numel());
    }
  }
  values.push_back(0.0f);
  values.push_back(1.0f);
  std::sort(values.begin(), values.end());
  const size_t expected = size_t{1} << (exponentBits + 1);
  TORCH_CHECK(values.size() == expected, "dynamic-tree code: ", values.size(), " values, not ", expected);
  return torch::tensor(values, torch::kFloat32);
}

// torchao's 4-bit unsigned map: torch.linspace(0, 1, 17)[1:], no zero.
torch::Tensor buildLinear4() {
  torch::NoGradGuard noGrad;
  return torch::linspace(0.0, 1.0, 17, torch::kFloat32).slice(0, 1).contiguous();
}

torch::Tensor buildStarts(const torch::Tensor& code) {
  const float* table = code.data_ptr<float>();
  torch::Tensor starts = torch::empty({kernels::kDynamicTreeBuckets}, torch::kUInt8);
  uint8_t* out = starts.data_ptr<uint8_t>();
  for (int64_t b = 0; b < kernels::kDynamicTreeBuckets; ++b) {
    // The bucket's lowest key, back to the float it orders (orderedKey's inverse).
    const uint32_t key = static_cast<uint32_t>(b) << kernels::kDynamicTreeBucketShift;
    const float lowest = kernels::floatOf((key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key);
    out[b] = static_cast<uint8_t>(kernels::dynamicTreeSearch(lowest, table));
  }
  return starts;
}

}  // namespace

const torch::Tensor& dynamicTreeStarts(bool isSigned) {
  static const torch::Tensor signedStarts = buildStarts(dynamicTreeCode(true));
  static const torch::Tensor unsignedStarts = buildStarts(dynamicTreeCode(false));
  return isSigned ? signedStarts : unsignedStarts;
}

const torch::Tensor& dynamicTreeThresholds(bool isSigned) {
  const auto build = [](bool s) {
    const std::vector<float> t =
        dynamicTreeThresholdsOf(dynamicTreeCode(s).data_ptr<float>(), dynamicTreeStarts(s).data_ptr<uint8_t>());
    return torch::tensor(t, torch::kFloat32);
  };
  static const torch::Tensor signedThresholds = build(true);
  static const torch::Tensor unsignedThresholds = build(false);
  return isSigned ? signedThresholds : unsignedThresholds;
}

const torch::Tensor& dynamicTreeCodeStarts(bool isSigned) {
  const auto build = [](bool s) {
    const std::vector<uint8_t> c =
        dynamicTreeCodeStartsOf(dynamicTreeCode(s).data_ptr<float>(), dynamicTreeStarts(s).data_ptr<uint8_t>());
    torch::Tensor out = torch::empty({static_cast<int64_t>(c.size())}, torch::kUInt8);
    std::copy(c.begin(), c.end(), out.data_ptr<uint8_t>());
    return out;
  };
  static const torch::Tensor signedStarts = build(true);
  static const torch::Tensor unsignedStarts = build(false);
  return isSigned ? signedStarts : unsignedStarts;
}

const torch::Tensor& dynamicTree4Thresholds(bool isSigned) {
  const auto build = [](bool s) {
    return torch::tensor(dynamicTree4ThresholdsOf(dynamicTree4Code(s).data_ptr<float>()), torch::kFloat32);
  };
  static const torch::Tensor signedThresholds = build(true);
  static const torch::Tensor unsignedThresholds = build(false);
  return isSigned ? signedThresholds : unsignedThresholds;
}

const torch::Tensor& dynamicTree4Code(bool isSigned) {
  static const torch::Tensor signedCode = build(true, 3);
  static const torch::Tensor unsignedCode = buildLinear4();
  return isSigned ? signedCode : unsignedCode;
}

const torch::Tensor& dynamicTreeCode(bool isSigned) {
  static const torch::Tensor signedCode = build(true);
  static const torch::Tensor unsignedCode = build(false);
  return isSigned ? signedCode : unsignedCode;
}

}  // namespace plab
