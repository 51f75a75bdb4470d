// torch.amp.GradScaler's bookkeeping (torch/amp/grad_scaler.py) around the
// ATen ops it calls, so that the arithmetic is torch's: inv_scale =
// float(1 / double(scale)); each gradient times inv_scale (left alone when
// inv_scale is 1) with found_inf set by any Inf/NaN; the update in
// _amp_update_scale_ (backoff: float(scale * backoff); growth:
// float(scale * growth), kept only when finite). The scale and tracker stay
// on the CPU; gradients on other devices get inv_scale and a found_inf of
// their own there, summed onto the CPU as GradScaler does.
#include "precision/loss_scale/dynamic_loss_scale.h"

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "precision/json_strict.h"
#include "util/errors.h"

namespace plab {
namespace {

bool isFp32Value(double v) { return std::isfinite(v) && static_cast<double>(static_cast<float>(v)) == v; }

void validateLossScale(const LossScaleConfig& c) {
  const std::string what = "loss scale";
  if (!isFp32Value(c.initScale) || !(c.initScale > 0))
    throw ConfigError(what + ": the initial scale must be a finite positive fp32 value");
  if (!(c.growthFactor > 1.0) || !std::isfinite(c.growthFactor))
    throw ConfigError(what + ": the growth factor must be > 1 (GradScaler's rule)");
  if (!(c.backoffFactor < 1.0) || !(c.backoffFactor > 0.0))
    throw ConfigError(what + ": the backoff factor must be in (0, 1)");
  if (c.growthInterval < 1 || c.growthInterval > std::numeric_limits<int32_t>::max())
    throw ConfigError(what + ": the growth interval must be a positive 32-bit count of steps");
}

}  // namespace

DynamicLossScale::DynamicLossScale(const LossScaleConfig& config) : config_(config) {
  validateLossScale(config_);
  scale_ = torch::full({}, config_.initScale, torch::kFloat32);
  growthTracker_ = torch::zeros({}, torch::kInt32);
}

torch::Tensor DynamicLossScale::scaleLoss(const torch::Tensor& loss) const {
  return loss * scale_.to(loss.device());
}

bool DynamicLossScale::unscale(const std::vector<torch::Tensor>& grads) {
  if (foundInf_.defined()) throw std::logic_error("DynamicLossScale::unscale: already called since the last update()");
  torch::NoGradGuard noGrad;
  const torch::Tensor invScale = scale_.to(torch::kFloat64).reciprocal().to(torch::kFloat32);
  // Grouped by device and dtype, as GradScaler._unscale_grads_.
  std::map<std::pair<std::string, int>, std::vector<torch::Tensor>> groups;
  for (const torch::Tensor& g : grads) {
    if (!g.defined()) continue;
    if (g.scalar_type() == torch::kFloat16)
      throw std::invalid_argument("DynamicLossScale::unscale: fp16 gradients (GradScaler refuses them too)");
    if (g.is_sparse()) throw std::invalid_argument("DynamicLossScale::unscale: sparse gradients are not supported");
    groups[{g.device().str(), static_cast<int>(g.scalar_type())}].push_back(g);
  }
  if (groups.empty()) throw std::invalid_argument("DynamicLossScale::unscale: no gradients (GradScaler: no inf checks recorded)");
  std::map<std::string, torch::Tensor> foundPerDevice;
  for (auto& [key, list] : groups) {
    const torch::Device device = list.front().device();
    auto found = foundPerDevice.find(key.first);
    if (found == foundPerDevice.end())
      found = foundPerDevice.emplace(key.first, torch::zeros({}, torch::dtype(torch::kFloat32).device(device))).first;
    at::_amp_foreach_non_finite_check_and_unscale_(list, found->second, invScale.to(device));
  }
  foundInf_ = torch::zeros({}, torch::kFloat32);
  for (auto& [device, found] : foundPerDevice) foundInf_ += found.to(torch::kCPU);
  return foundInf_.item<float>() != 0.0f;
}

bool DynamicLossScale::shouldSkipStep() const {
  if (!foundInf_.defined()) throw std::logic_error("DynamicLossScale::shouldSkipStep: no unscale() this step");
  return foundInf_.item<float>() != 0.0f;
}

void DynamicLossScale::update() {
  if (!foundInf_.defined()) throw std::logic_error("DynamicLossScale::update: no unscale() recorded since the last update");
  at::_amp_update_scale_(scale_, growthTracker_, foundInf_, config_.growthFactor, config_.backoffFactor,
                         config_.growthInterval);
  foundInf_ = torch::Tensor();
}

void DynamicLossScale::update(bool foundInf) {
  foundInf_ = torch::full({}, foundInf ? 1.0f : 0.0f, torch::kFloat32);
  update();
}

float DynamicLossScale::scale() const { return scale_.item<float>(); }

int32_t DynamicLossScale::growthTracker() const { return growthTracker_.item<int32_t>(); }

nlohmann::json DynamicLossScale::toJson() const {
  return {{"scale", static_cast<double>(scale())},
          {"growth_tracker", growthTracker()},
          {"growth_factor", config_.growthFactor},
          {"backoff_factor", config_.backoffFactor},
          {"growth_interval", config_.growthInterval}};
}

DynamicLossScale DynamicLossScale::fromJson(const nlohmann::json& j) {
  const std::string what = "loss scale state";
  json_strict::requireObject(j, what);
  json_strict::rejectUnknownKeys(j, what, {"scale", "growth_tracker", "growth_factor", "backoff_factor", "growth_interval"});
  for (const char* key : {"scale", "growth_tracker", "growth_factor", "backoff_factor", "growth_interval"})
    if (!j.contains(key)) throw ConfigError(what + ": missing '" + key + "'");
  LossScaleConfig c;
  double scale = 0;
  int64_t tracker = 0;
  json_strict::readNumber(j, "scale", what, scale);
  json_strict::readInt(j, "growth_tracker", what, tracker);
  json_strict::readNumber(j, "growth_factor", what, c.growthFactor);
  json_strict::readNumber(j, "backoff_factor", what, c.backoffFactor);
  json_strict::readInt(j, "growth_interval", what, c.growthInterval);
  // A scale that has backed off to 0 is a state GradScaler can reach.
  if (!isFp32Value(scale) || scale < 0) throw ConfigError(what + ".scale: not a finite non-negative fp32 value");
  if (tracker < 0 || tracker >= c.growthInterval)
    throw ConfigError(what + ".growth_tracker: outside [0, growth_interval)");
  c.initScale = 1.0;  // validated below, then replaced by the saved scale
  DynamicLossScale out(c);
  out.config_.initScale = scale;
  out.scale_.fill_(scale);
  out.growthTracker_.fill_(tracker);
  return out;
}

}  // namespace plab
