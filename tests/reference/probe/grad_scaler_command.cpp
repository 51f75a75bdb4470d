// grad-scaler CASE.json GRADS.safetensors OUT.safetensors: the project's
// DynamicLossScale over a sequence of steps, called as a training step
// calls GradScaler: scale the loss, unscale the gradients, skip the step or
// not, update.
// CASE.json: init_scale, growth_factor, backoff_factor, growth_interval,
// steps, grads_per_step, and reload_every_step (the state written to JSON
// and read back after every update, as a checkpoint and resume would).
// GRADS: "loss" [steps] (fp32) and the scaled gradients "s<i>.g<k>".
// Writes per step "scaled_loss", "scale_used" (the scale of that step),
// "found_inf" and "skipped" (uint8), "scale_after" (fp32),
// "tracker_after" (int32), and the unscaled gradients "s<i>.g<k>".
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "json_files.h"
#include "model/safetensors.h"
#include "precision/loss_scale/dynamic_loss_scale.h"

namespace plab::probe {

int gradScalerCommand(const Args& args) {
  if (args.size() != 3) throw UsageError("grad-scaler CASE.json GRADS.safetensors OUT.safetensors");
  const nlohmann::json c = readJson(args[0]);
  LossScaleConfig config;
  config.initScale = c.at("init_scale").get<double>();
  config.growthFactor = c.at("growth_factor").get<double>();
  config.backoffFactor = c.at("backoff_factor").get<double>();
  config.growthInterval = c.at("growth_interval").get<int64_t>();
  const int64_t steps = c.at("steps").get<int64_t>();
  const int64_t perStep = c.at("grads_per_step").get<int64_t>();
  const bool reload = c.at("reload_every_step").get<bool>();
  const SafetensorsFile in(args[1]);
  const torch::Tensor loss = in.load("loss");

  DynamicLossScale scaler(config);
  torch::Tensor scaledLoss = torch::empty({steps}), scaleUsed = torch::empty({steps}),
                scaleAfter = torch::empty({steps});
  torch::Tensor foundInf = torch::zeros({steps}, torch::kUInt8), skipped = torch::zeros({steps}, torch::kUInt8);
  torch::Tensor trackerAfter = torch::zeros({steps}, torch::kInt32);
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (int64_t i = 0; i < steps; ++i) {
    scaledLoss[i] = scaler.scaleLoss(loss[i]);
    scaleUsed[i] = scaler.scale();
    std::vector<torch::Tensor> grads;
    for (int64_t k = 0; k < perStep; ++k) {
      const std::string name = "s" + std::to_string(i) + ".g" + std::to_string(k);
      grads.push_back(in.load(name).clone());
      out.emplace_back(name, grads.back());
    }
    foundInf[i] = static_cast<uint8_t>(scaler.unscale(grads));
    skipped[i] = static_cast<uint8_t>(scaler.shouldSkipStep());
    scaler.update();
    if (reload) scaler = DynamicLossScale::fromJson(nlohmann::json::parse(scaler.toJson().dump()));
    scaleAfter[i] = scaler.scale();
    trackerAfter[i] = scaler.growthTracker();
  }
  out.insert(out.end(), {{"scaled_loss", scaledLoss},
                         {"scale_used", scaleUsed},
                         {"found_inf", foundInf},
                         {"skipped", skipped},
                         {"scale_after", scaleAfter},
                         {"tracker_after", trackerAfter}});
  writeSafetensors(args[2], out);
  return 0;
}

}  // namespace plab::probe
