#include "precision/update_window.h"

#include <algorithm>

#include "precision/bf16_rounding.h"
#include "precision/update_stats.h"

namespace plab {
namespace {

// Sums of a vector over the interleaved groups (element i in group i mod G).
torch::Tensor groupSums(const torch::Tensor& v) {
  const int64_t n = v.numel();
  const int64_t padded = (n + kLostGroups - 1) / kLostGroups * kLostGroups;
  return torch::constant_pad_nd(v, {0, padded - n}, 0).view({-1, kLostGroups}).sum(0);
}

}  // namespace

torch::Tensor UpdateWindow::tracked(const torch::Tensor& t) const {
  const torch::Tensor flat = t.reshape({-1});
  return stride_ == 1 ? flat : flat.slice(0, 0, flat.numel(), stride_);
}

int64_t UpdateWindow::strideFor(int64_t numel, int64_t maxTracked) {
  maxTracked = std::max<int64_t>(1, maxTracked);
  return std::max<int64_t>(1, (numel + maxTracked - 1) / maxTracked);
}

int64_t UpdateWindow::bytesFor(int64_t numel, int64_t maxTracked, bool pending) {
  const int64_t stride = strideFor(numel, maxTracked);
  return (pending ? 3 : 2) * 8 * ((numel + stride - 1) / stride);  // start, intended sum (and buffer start), fp64
}

torch::Tensor UpdateWindow::pendingNow(const torch::Tensor& weights, const torch::Tensor& holder) const {
  if (holds_ == PendingHolder::None || !holder.defined()) return {};
  const torch::Tensor h = tracked(holder).to(torch::kFloat64);
  return holds_ == PendingHolder::Buffer ? h : h.sub_(tracked(weights).to(torch::kFloat64));
}

void UpdateWindow::begin(const torch::Tensor& weights, int64_t maxTracked, const torch::Tensor& holder,
                         PendingHolder holds, bool stochastic) {
  stride_ = strideFor(weights.numel(), maxTracked);
  stochastic_ = stochastic;
  holds_ = holds;
  start_ = tracked(weights).to(torch::kFloat64);
  intendedSum_ = torch::zeros_like(start_);
  pendingStart_ = pendingNow(weights, holder);
}

void UpdateWindow::add(const torch::Tensor& intended) { intendedSum_.add_(tracked(intended).to(torch::kFloat64)); }

void UpdateWindow::addSampled(const torch::Tensor& intendedSample) {
  intendedSum_.add_(intendedSample.to(torch::kFloat64));
}

torch::Tensor UpdateWindow::close(const torch::Tensor& weights, const torch::Tensor& holder) {
  const torch::Tensor arrived = tracked(weights).to(torch::kFloat64).sub_(start_);
  const torch::Tensor arrivalResidual = arrived - intendedSum_;
  // What the buffer (or master copy) gained for later writes counts as on its way, not lost.
  const torch::Tensor now = pendingNow(weights, holder);
  const torch::Tensor pendingDelta =
      pendingStart_.defined() && now.defined() ? now.sub_(pendingStart_) : torch::zeros_like(arrived);
  const torch::Tensor residual = arrivalResidual + pendingDelta;
  const torch::Tensor residualDot = residual * intendedSum_;
  const torch::Tensor intendedSq = intendedSum_.square();
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(start_.device());
  // Stochastic rounding's variance over the window, at least |S| x ulp per
  // element (a sum of Bernoulli ulp steps); weighted as <., S> weighs it.
  torch::Tensor stochasticTerm = torch::zeros({}, f64);
  if (stochastic_) {
    const torch::Tensor end = tracked(weights).to(torch::kFloat64);
    const torch::Tensor magnitude = torch::maximum(end.abs(), start_.abs());
    const torch::Tensor ulp = bf16Ulp(magnitude);  // 0 for an element at 0 throughout: nothing to add
    stochasticTerm = (intendedSq * intendedSum_.abs() * ulp).sum();
  }
  const torch::Tensor out = torch::cat(
      {torch::stack({residualDot.sum(), intendedSq.sum(), arrivalResidual.square().sum(),
                     torch::scalar_tensor(static_cast<double>(start_.numel()), f64), (pendingDelta * intendedSum_).sum()}),
       groupSums(residualDot), groupSums(intendedSq), stochasticTerm.reshape({1}), residual.square().sum().reshape({1})});
  start_ = torch::Tensor();
  intendedSum_ = torch::Tensor();
  pendingStart_ = torch::Tensor();
  return out;
}

}  // namespace plab
