#pragma once
// Dynamic loss scaling with the semantics of torch.amp.GradScaler: the loss
// is multiplied by the scale before the backward pass; the gradients are
// multiplied by 1/scale (fp32, rounded from the fp64 reciprocal) and checked
// for Inf/NaN; a step whose gradients hold one is skipped and the scale
// backs off; after `growthInterval` clean steps in a row it grows. The
// arithmetic is torch's own: the unscale and the update call the ATen ops
// GradScaler calls (_amp_foreach_non_finite_check_and_unscale_,
// _amp_update_scale_), on whichever device the gradients are.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace plab {

// GradScaler's defaults.
struct LossScaleConfig {
  double initScale = 65536.0;  // 2^16
  double growthFactor = 2.0;   // > 1
  double backoffFactor = 0.5;  // in (0, 1)
  int64_t growthInterval = 2000;  // clean steps in a row before the scale grows; >= 1
};

class DynamicLossScale {
 public:
  // Throws ConfigError for factors GradScaler refuses (growth <= 1,
  // backoff >= 1), a backoff <= 0, an interval < 1, or an initial scale that
  // is not a finite positive fp32 value.
  explicit DynamicLossScale(const LossScaleConfig& config = {});

  // loss * scale, as GradScaler.scale(loss): the fp32 scale on the loss's
  // device, torch's type promotion.
  torch::Tensor scaleLoss(const torch::Tensor& loss) const;

  // GradScaler.unscale_: multiplies every defined gradient in place by
  // 1/scale and records whether any element was Inf or NaN (returned). The
  // gradients must be fp32 or bf16: GradScaler refuses fp16 gradients, and
  // so does this. Once per step: a second call before update() throws.
  bool unscale(const std::vector<torch::Tensor>& grads);

  // Whether the optimizer step is to be skipped: the last unscale() found
  // Inf or NaN (GradScaler.step's test). Throws before any unscale().
  bool shouldSkipStep() const;

  // GradScaler.update(): backs off (scale * backoffFactor, tracker 0) when
  // the last unscale() found Inf/NaN, else counts a clean step and grows
  // (scale * growthFactor unless that overflows fp32) every growthInterval
  // of them. Throws when no unscale() was recorded since the last update.
  void update();
  // The same with the flag given (e.g. combined over the ranks of a
  // distributed run); clears what unscale() recorded.
  void update(bool foundInf);

  float scale() const;
  int32_t growthTracker() const;  // clean steps in a row since the last growth or backoff
  const LossScaleConfig& config() const { return config_; }

  // {"scale", "growth_tracker", "growth_factor", "backoff_factor",
  // "growth_interval"} as GradScaler.state_dict(); the scale is an fp32
  // value written as a JSON number, which restores its exact bits. Call
  // after update(), as for state_dict().
  nlohmann::json toJson() const;
  // Throws ConfigError for a malformed state (unknown or missing keys, a
  // scale that is not a finite non-negative fp32 value, a negative tracker).
  static DynamicLossScale fromJson(const nlohmann::json& j);

 private:
  LossScaleConfig config_;
  torch::Tensor scale_;          // fp32, 0-dim
  torch::Tensor growthTracker_;  // int32, 0-dim, on scale_'s device
  torch::Tensor foundInf_;       // fp32, 0-dim; undefined until unscale() and after update()
};

}  // namespace plab
