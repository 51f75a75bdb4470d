// adamw MODE STEPS PARAMS_GRADS.safetensors HYPER.json OUT.safetensors
//
// Runs the project's optimizer as a training run does: the parameters
// ("param/<name>", fp32) are held by a module, converted by
// applyPrecisionPlan with the all-bf16 plan for MODE (fp32 keeps them fp32),
// stepped by PrecisionAdamW with the gradient of each step
// ("grads/<name>", [STEPS, ...shape], cast to the parameter's dtype as
// autograd would hand it over), statistics collected on step 1 and every
// `stats_every` steps like the trainer. MODE "libtorch" steps
// torch::optim::AdamW instead, on parameters of HYPER's "param_dtype".
// HYPER.json: lr, beta1, beta2, eps, weight_decay, and optionally seed,
// moments, kernels, stats_every, param_dtype, plan (a preset id instead of
// all-bf16: "all-fp32" keeps fp32 weights under a bf16 recipe).
// Writes the final parameters ("param/<name>", in their dtype) and every
// optimizer state tensor ("state/<name>.exp_avg", ".exp_avg_sq", ".master",
// ".kahan" where the mode keeps one; "8bit" moments as codes and
// ".exp_avg.scale", ".exp_avg_sq.scale"), and under "8bit" moments
// "dequant/<name>.exp_avg", ".exp_avg_sq": both moments as fp32 values
// (PrecisionAdamW's dequantization), and "moment_error" ([windows, 3],
// fp64: the step closing each window of HYPER's "update_window" steps
// (default 20), the moment error of m and of v over all parameters).
#include <map>

#include "commands.h"
#include "json_files.h"
#include "model/safetensors.h"
#include "precision/precision_adamw.h"

namespace plab::probe {
namespace {

struct Inputs {
  std::vector<std::string> names;
  std::map<std::string, torch::Tensor> params, grads;
};

Inputs readInputs(const std::string& path, int64_t steps) {
  const SafetensorsFile file(path);
  Inputs in;
  for (const std::string& key : file.names()) {
    if (key.rfind("param/", 0) != 0) continue;
    const std::string name = key.substr(6);
    if (!file.contains("grads/" + name)) throw std::runtime_error(path + ": no grads/" + name);
    in.names.push_back(name);
    in.params[name] = file.load(key).to(torch::kFloat32);
    in.grads[name] = file.load("grads/" + name);
    if (in.grads[name].dim() < 1 || in.grads[name].size(0) < steps)
      throw std::runtime_error(path + ": grads/" + name + " holds fewer than STEPS gradients");
  }
  if (in.names.empty()) throw std::runtime_error(path + ": no param/<name> tensors");
  return in;
}

// A module that owns the parameters under their names, so the precision
// plan converts them as it converts a model's.
struct ParamHolder : torch::nn::Module {
  ParamHolder() : torch::nn::Module("ParamHolder") {}
  void add(const std::string& name, const torch::Tensor& value) { register_parameter(name, value.clone()); }
};

int runLibtorch(const Inputs& in, int64_t steps, const nlohmann::json& hyper, const std::string& out) {
  const auto dtype = hyper.value("param_dtype", "fp32") == "bf16" ? torch::kBFloat16 : torch::kFloat32;
  std::vector<torch::Tensor> params;
  for (const std::string& name : in.names) params.push_back(in.params.at(name).to(dtype).requires_grad_(true));
  torch::optim::AdamW optimizer(params, torch::optim::AdamWOptions(hyper.at("lr").get<double>())
                                            .betas({hyper.at("beta1").get<double>(), hyper.at("beta2").get<double>()})
                                            .eps(hyper.at("eps").get<double>())
                                            .weight_decay(hyper.at("weight_decay").get<double>()));
  for (int64_t t = 0; t < steps; ++t) {
    for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = in.grads.at(in.names[i])[t].to(dtype);
    optimizer.step();
  }
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (size_t i = 0; i < params.size(); ++i) tensors.emplace_back("param/" + in.names[i], params[i].detach());
  writeSafetensors(out, tensors);
  return 0;
}

}  // namespace

int adamwCommand(const Args& args) {
  if (args.size() != 5) throw UsageError("adamw MODE STEPS PARAMS_GRADS.safetensors HYPER.json OUT.safetensors");
  const int64_t steps = std::stoll(args[1]);
  const Inputs in = readInputs(args[2], steps);
  const nlohmann::json hyper = readJson(args[3]);
  if (args[0] == "libtorch") return runLibtorch(in, steps, hyper, args[4]);

  const OptimizerMode mode = optimizerModeFromId(args[0]);
  AdamWOptions options;
  options.lr = hyper.at("lr").get<double>();
  options.beta1 = hyper.at("beta1").get<double>();
  options.beta2 = hyper.at("beta2").get<double>();
  options.eps = hyper.at("eps").get<double>();
  options.weight_decay = hyper.at("weight_decay").get<double>();
  options.moments = momentPrecisionFromId(hyper.value("moments", "default"));
  options.kernels = stepKernelsFromId(hyper.value("kernels", "fused"));
  options.torchStep = torchStepFromId(hyper.value("torch_step", torchStepId(AdamWOptions().torchStep)));
  const int64_t statsEvery = hyper.value("stats_every", int64_t{5});

  ParamHolder holder;
  for (const std::string& name : in.names) holder.add(name, in.params.at(name));
  PrecisionPlan plan;
  plan.preset = planPresetFromId(hyper.value("plan", std::string("all-bf16")));
  std::vector<TrainableParam> params = applyPrecisionPlan(holder, plan, mode);
  std::vector<std::pair<torch::Tensor, torch::Tensor>> paramAndGrads;
  for (const TrainableParam& tp : params) paramAndGrads.emplace_back(tp.param, in.grads.at(tp.name));
  UpdateStatsOptions stats;
  stats.window = hyper.value("update_window", stats.window);
  PrecisionAdamW optimizer(std::move(params), mode, options, hyper.value("seed", uint64_t{0}), stats);
  std::vector<double> momentErrors;  // per closed window: step, m, v (quantized moments only)
  for (int64_t t = 0; t < steps; ++t) {
    for (auto& [param, grads] : paramAndGrads) param.mutable_grad() = grads[t].to(param.scalar_type());
    const bool collect = t == 0 || (statsEvery > 0 && (t + 1) % statsEvery == 0);
    const OptimizerStepStats out = optimizer.step(options.lr, collect);
    optimizer.zeroGrad();
    const LayerWindowStats total = totalOf(out.window);
    if (!out.window.empty() && total.momentsMeasured)
      momentErrors.insert(momentErrors.end(), {double(t + 1), *total.momentError(0), *total.momentError(1)});
  }

  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : holder.named_parameters()) out.emplace_back("param/" + p.key(), p.value().detach());
  for (auto& [name, t] : optimizer.stateTensors()) out.emplace_back("state/" + name, t);
  for (const std::string& name : in.names) {
    if (!momentsQuantized(options.moments)) break;
    out.emplace_back("dequant/" + name + ".exp_avg", optimizer.firstMoment(name).to(torch::kFloat32).contiguous());
    out.emplace_back("dequant/" + name + ".exp_avg_sq", optimizer.secondMoment(name).to(torch::kFloat32).contiguous());
  }
  if (!momentErrors.empty())
    out.emplace_back("moment_error", torch::tensor(momentErrors, torch::kFloat64).view({-1, 3}));
  writeSafetensors(args[4], out, {{"mode", optimizerModeId(mode)}});
  return 0;
}

}  // namespace plab::probe
