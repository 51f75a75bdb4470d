#include "precision/update_window.h"

#include <algorithm>

namespace plab {

torch::Tensor UpdateWindow::tracked(const torch::Tensor& t) const {
  const torch::Tensor flat = t.reshape({-1});
  return stride_ == 1 ? flat : flat.slice(0, 0, flat.numel(), stride_);
}

int64_t UpdateWindow::strideFor(int64_t numel, int64_t maxTracked) {
  maxTracked = std::max<int64_t>(1, maxTracked);
  return std::max<int64_t>(1, (numel + maxTracked - 1) / maxTracked);
}

int64_t UpdateWindow::bytesFor(int64_t numel, int64_t maxTracked) {
  const int64_t stride = strideFor(numel, maxTracked);
  return 2 * 8 * ((numel + stride - 1) / stride);  // start and intended sum, fp64
}

void UpdateWindow::begin(const torch::Tensor& weights, int64_t maxTracked) {
  stride_ = strideFor(weights.numel(), maxTracked);
  start_ = tracked(weights).to(torch::kFloat64);
  intendedSum_ = torch::zeros_like(start_);
}

void UpdateWindow::add(const torch::Tensor& intended) { intendedSum_.add_(tracked(intended).to(torch::kFloat64)); }

void UpdateWindow::addSampled(const torch::Tensor& intendedSample) {
  intendedSum_.add_(intendedSample.to(torch::kFloat64));
}

torch::Tensor UpdateWindow::close(const torch::Tensor& weights) {
  const torch::Tensor arrived = tracked(weights).to(torch::kFloat64).sub_(start_);
  const torch::Tensor residual = arrived - intendedSum_;
  const torch::Tensor out =
      torch::stack({(residual * intendedSum_).sum(), intendedSum_.square().sum(), residual.square().sum(),
                    torch::scalar_tensor(static_cast<double>(start_.numel()),
                                         torch::TensorOptions().dtype(torch::kFloat64).device(start_.device()))});
  start_ = torch::Tensor();
  intendedSum_ = torch::Tensor();
  return out;
}

}  // namespace plab
