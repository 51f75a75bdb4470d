#pragma once
// Exponential moving average as TensorBoard smooths curves: debiased, so
// the first points are not pulled towards zero. weight 0 returns the raw
// values; a non-finite value passes through and leaves the average alone.
#include <cmath>

namespace plab::ui {

class Ema {
 public:
  Ema() = default;
  explicit Ema(double weight) : weight_(weight) {}
  double next(double value) {
    if (weight_ <= 0 || !std::isfinite(value)) return value;
    biased_ = weight_ * biased_ + (1 - weight_) * value;
    correction_ *= weight_;
    return biased_ / (1 - correction_);
  }

 private:
  double weight_ = 0;
  double biased_ = 0;
  double correction_ = 1;  // weight^n
};

}  // namespace plab::ui
