#include "precision/dynamic_tree_code.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace plab {
namespace {

torch::Tensor build(bool isSigned) {
  torch::NoGradGuard noGrad;
  std::vector<float> values;
  for (int i = 0; i < 7; ++i) {
    const int64_t points = isSigned ? (int64_t{1} << i) + 1 : (int64_t{1} << (i + 1)) + 1;
    const torch::Tensor bounds = torch::linspace(0.1, 1.0, points, torch::kFloat32);
    const torch::Tensor means = (bounds.slice(0, 0, points - 1) + bounds.slice(0, 1, points)) / 2.0;
    // Python's 10 ** (i - 6): a correctly rounded double, then fp32 in torch's mul.
    const double decade = std::pow(10.0, i - 6);
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
  TORCH_CHECK(values.size() == 256, "dynamic-tree code: ", values.size(), " values, not 256");
  return torch::tensor(values, torch::kFloat32);
}

}  // namespace

const torch::Tensor& dynamicTreeCode(bool isSigned) {
  static const torch::Tensor signedCode = build(true);
  static const torch::Tensor unsignedCode = build(false);
  return isSigned ? signedCode : unsignedCode;
}

}  // namespace plab
