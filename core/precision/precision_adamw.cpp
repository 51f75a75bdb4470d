#include "precision/precision_adamw.h"

#include <unordered_map>
#include <utility>

#include "precision/memory_estimate.h"
#include "precision/state_layout.h"
#include "precision/steps/adamw_step.h"
#include "precision/update_window.h"
#include "util/errors.h"

namespace plab {
namespace {

// Which step function of precision/steps/ a parameter takes.
// QuantizedMoments: adamw.moments "8bit" / "4bit" (torchao's AdamW8bit / 4bit step), fp32
// or bf16 params, the bf16 weight written by `write`.
enum class StepRule { Fp32, Bf16Plain, Bf16Write, Master, QuantizedMoments };

struct Slot {
  TrainableParam tp;
  StepRule rule = StepRule::Fp32;
  steps::WeightWrite write = steps::WeightWrite::Nearest;  // Bf16Write and QuantizedMoments
  MomentPrecision moments = MomentPrecision::Fp32;
  steps::ParamState state;  // param, m, v, master, comp (grad filled per step)
  int64_t steps = 0;        // per param, like torch: params without grads do not advance
  size_t layer = 0;         // index into Impl::layers
  uint32_t randomStream = 0;  // Philox streams randomStream .. +2 (weight, m, v)
  uint64_t firstGroup = 0;    // a shard's first Philox group in its parameter
  UpdateWindow window;
  // QuantizedMoments: what storing the moments lost over the open window.
  kernels::MomentErrorSums momentErrors;
};

// The fused kernel's name for a slot's rule.
kernels::WeightRule fusedRuleOf(const Slot& s) {
  if (s.rule == StepRule::Master) return kernels::WeightRule::Master;
  switch (s.write) {
    case steps::WeightWrite::Kahan: return kernels::WeightRule::Kahan;
    case steps::WeightWrite::Stochastic: return kernels::WeightRule::Stochastic;
    case steps::WeightWrite::Nearest: break;
  }
  return kernels::WeightRule::Nearest;
}

// Where a slot keeps the update that has not reached its compute weights
// yet (precision/update_window.h): Kahan's buffer, mixed's master copy.
PendingHolder pendingHolderKind(const Slot& s) {
  if (s.state.comp.defined()) return PendingHolder::Buffer;
  if (s.rule == StepRule::Master && s.state.master.defined()) return PendingHolder::Master;
  return PendingHolder::None;
}

const torch::Tensor& pendingHolder(const Slot& s) {
  return pendingHolderKind(s) == PendingHolder::Master ? s.state.master : s.state.comp;
}

int64_t bytesOf(const torch::Tensor& t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
}

// Reads the per-parameter term rows back in one transfer and adds them up
// per layer (layers without a row are left out), in model order.
template <typename Stats, typename Add>
std::vector<Stats> sumPerLayer(const std::vector<torch::Tensor>& rows, const std::vector<size_t>& layerOfRow,
                               const std::vector<std::string>& layerNames, Add add) {
  std::vector<Stats> out;
  if (rows.empty()) return out;
  const torch::Tensor all = torch::stack(rows).cpu();
  const auto a = all.accessor<double, 2>();
  std::vector<Stats> sums(layerNames.size());
  std::vector<bool> present(layerNames.size(), false);
  for (size_t i = 0; i < layerOfRow.size(); ++i) {
    add(sums[layerOfRow[i]], a[static_cast<int64_t>(i)]);
    present[layerOfRow[i]] = true;
  }
  for (size_t l = 0; l < sums.size(); ++l) {
    if (!present[l]) continue;
    sums[l].layer = layerNames[l];
    out.push_back(std::move(sums[l]));
  }
  return out;
}

}  // namespace

struct PrecisionAdamW::Impl {
  OptimizerMode mode;
  AdamWOptions options;
  UpdateStatsOptions statsOptions;
  uint64_t seed;
  int64_t stepCount = 0;
  std::vector<Slot> slots;
  std::vector<std::string> layers;

  steps::StepScalars scalarsFor(const Slot& s, double lr) const {
    steps::StepScalars k;
    k.lr = lr;
    k.beta1 = options.beta1;
    k.beta2 = options.beta2;
    k.eps = options.eps;
    k.weightDecay = options.weight_decay;
    k.step = s.steps;
    return k;
  }

  // The slot's Philox streams at its current step (a pure function of seed,
  // step and stream: nothing to save in checkpoints beyond the step counts).
  kernels::RandomStream randomFor(const Slot& s) const {
    kernels::RandomStream r;
    r.seed = seed;
    r.step = static_cast<uint32_t>(s.steps);
    r.stream = s.randomStream;
    r.firstGroup = s.firstGroup;
    return r;
  }

  bool runsFused(const Slot& s) const {
    return options.kernels == StepKernels::Fused && (s.rule == StepRule::Bf16Write || s.rule == StepRule::Master) &&
           steps::fusedStepRuns(s.state);
  }

  // "bf16"'s for-loop step in one pass per element (kernels/torch_forloop_bf16.h,
  // the same bits as torch's ops), unless adamw.kernels is "reference".
  bool plainBf16Kernel() const { return options.kernels == StepKernels::Fused; }

  // fp32 and bf16 rules whose adamw.torch_step resolves to "fused": torch's
  // fused step, one pass (fp16 weights, CUDA and odd layouts take the for-loop form).
  bool runsTorchFused(const Slot& s) const {
    return (s.rule == StepRule::Fp32 || s.rule == StepRule::Bf16Plain) &&
           torchStepFused(options.torchStep, s.rule == StepRule::Bf16Plain) && steps::torchFusedStepRuns(s.state);
  }

  // Steps a torch-op slot (fp32 or bf16 rule) and returns the intended update
  // of its window's sampled elements only, computed as the full-size path
  // computes it (fp32: the change itself; bf16: fp32 arithmetic on the
  // inputs read before the step).
  torch::Tensor stepWithSampledIntended(Slot& s, double lr) {
    const steps::StepScalars k = scalarsFor(s, lr);
    const UpdateWindow& w = s.window;
    if (s.rule == StepRule::Fp32) {
      const torch::Tensor before = w.sample(s.state.param).to(torch::kFloat64);
      steps::fp32Step(s.state, k);
      return w.sample(s.state.param).to(torch::kFloat64) - before;
    }
    return steps::bf16PlainStepWithSampledIntended(s.state, k, w.stride(), plainBf16Kernel());
  }

  // The torch-op rules with statistics, without fp64 tensors of the
  // weights' size: fp32 copies of the weights before the step and of what
  // fp32 arithmetic intended, one pass for the terms, the window from its
  // samples. fp32's intended weights are its new weights. Returns the terms.
  torch::Tensor torchStepWithTerms(Slot& s, double lr, bool windowOn) {
    const steps::StepScalars k = scalarsFor(s, lr);
    if (s.rule != StepRule::Fp32) {
      const steps::StepWithTerms r =
          steps::bf16PlainStepWithTerms(s.state, k, windowOn ? s.window.stride() : 0, plainBf16Kernel());
      if (windowOn) s.window.addSampled(r.windowSample);
      return r.terms;
    }
    const torch::Tensor& param = s.state.param;
    const torch::Tensor before = param.to(torch::kFloat32, false, /*copy=*/true);
    steps::fp32Step(s.state, k);
    const torch::Tensor& intendedAfter = param;
    if (windowOn)
      s.window.addSampled(steps::exactDifference(s.window.sample(intendedAfter), s.window.sample(before)));
    return steps::stepTermsOnePass(before, intendedAfter, param.to(torch::kFloat32));
  }

  // The torch-op rules (fp32, bf16) without statistics.
  void torchStep(Slot& s, double lr) {
    if (s.rule == StepRule::Fp32)
      steps::fp32Step(s.state, scalarsFor(s, lr));
    else
      steps::bf16PlainStep(s.state, scalarsFor(s, lr), plainBf16Kernel());
  }

  // The tensor-op reference of the other rules (mixed, the bf16 writes);
  // returns the intended update when before32 is defined.
  torch::Tensor runReferenceStep(Slot& s, double lr, const torch::Tensor& before32) {
    const steps::StepScalars k = scalarsFor(s, lr);
    if (s.rule == StepRule::Master) return steps::masterStep(s.state, k, before32);
    return steps::bf16WriteStep(s.state, k, s.write, s.moments, randomFor(s), before32);
  }
};

PrecisionAdamW::PrecisionAdamW(std::vector<TrainableParam> params, OptimizerMode mode, AdamWOptions options,
                               uint64_t seed, UpdateStatsOptions stats)
    : impl_(std::make_unique<Impl>()) {
  torch::NoGradGuard noGrad;
  impl_->mode = mode;
  impl_->options = options;
  impl_->statsOptions = stats;
  impl_->seed = seed;
  std::unordered_map<const void*, std::string> seen;
  std::unordered_map<std::string, size_t> layerIndex;
  for (TrainableParam& tp : params) {
    if (!tp.param.defined()) throw ConfigError("optimizer: parameter '" + tp.name + "' is undefined");
    const auto dtype = tp.param.scalar_type();
    // bf16 under the bf16 recipes, fp16 under the fp16 ones (applyPrecisionPlan's choice).
    const auto lowDtype = modeUsesFp16(mode) ? torch::kFloat16 : torch::kBFloat16;
    if (dtype != torch::kFloat32 && dtype != lowDtype)
      throw ConfigError("optimizer: parameter '" + tp.name + "' has dtype " + c10::toString(dtype) + "; mode " +
                        optimizerModeId(mode) + " takes float32 and " + c10::toString(lowDtype));
    // Tied weights must be listed once or they would be updated twice.
    auto [it, inserted] = seen.emplace(tp.param.unsafeGetTensorImpl(), tp.name);
    if (!inserted)
      throw ConfigError("optimizer: parameter '" + tp.name + "' is the same tensor as '" + it->second + "'");

    Slot s;
    const bool bf16 = dtype == lowDtype;  // low precision: bf16, or fp16 in the fp16 modes
    // The param's own recipe (a plan's per-subtree choice) or the run's.
    const OptimizerMode recipe = tp.recipe.value_or(mode);
    if (tp.recipe && (!modeIsLayerRecipe(*tp.recipe) || !modeIsLayerRecipe(mode)))
      throw ConfigError("optimizer: parameter '" + tp.name + "' has recipe " + optimizerModeId(*tp.recipe) +
                        " under mode " + optimizerModeId(mode) + "; per-layer recipes are bf16 recipes under a bf16 mode");
    if (tp.moments && !modeIsLayerRecipe(mode))
      throw ConfigError("optimizer: parameter '" + tp.name + "' has its own moment store " +
                        momentPrecisionId(*tp.moments) + " under mode " + optimizerModeId(mode) +
                        "; per-layer stores are for the bf16 modes");
    s.moments = state_layout::moments(recipe, state_layout::withStore(options, tp.moments), bf16);
    if (!bf16) {
      s.rule = StepRule::Fp32;
    } else {
      switch (recipe) {
        case OptimizerMode::Fp32MasterWeights:
        case OptimizerMode::Fp16Mixed: s.rule = StepRule::Master; break;
        case OptimizerMode::Bf16Nearest: s.rule = StepRule::Bf16Write; break;
        case OptimizerMode::Bf16Kahan:
          s.rule = StepRule::Bf16Write;
          s.write = steps::WeightWrite::Kahan;
          break;
        case OptimizerMode::Bf16StochasticRounding:
          s.rule = StepRule::Bf16Write;
          s.write = steps::WeightWrite::Stochastic;
          break;
        // A bf16 param handed to the fp32 recipe steps as torch would step it.
        // "fp16": the same torch ops, each rounding to fp16.
        case OptimizerMode::Fp32AdamW:
        case OptimizerMode::Bf16Plain:
        case OptimizerMode::Fp16Plain: s.rule = StepRule::Bf16Plain; break;
      }
    }
    s.state.param = tp.param.detach();
    if (momentsQuantized(s.moments)) {
      s.rule = StepRule::QuantizedMoments;  // the weight write chosen above stays
      // torchao's _new_buffer: codes and a scale per block when the tensor
      // is large enough and whole blocks, else zeros in the param's dtype.
      // 8-bit codes keep the param's shape, 4-bit ones are packed flat (OptimState4bit).
      if (steps::quantizedMomentsQuantize(tp.param.numel(), s.moments)) {
        const auto u8 = torch::TensorOptions().dtype(torch::kUInt8).device(tp.param.device());
        const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(tp.param.device());
        const int64_t n = tp.param.numel(), blocks = n / steps::quantizedMomentsBlock(s.moments);
        const std::vector<int64_t> codes =
            s.moments == MomentPrecision::Dynamic4bit ? std::vector<int64_t>{n / 2} : tp.param.sizes().vec();
        s.state.m = torch::zeros(codes, u8);
        s.state.v = torch::zeros(codes, u8);
        s.state.mScale = torch::zeros({blocks}, f32);
        s.state.vScale = torch::zeros({blocks}, f32);
      } else {
        s.state.m = torch::zeros_like(tp.param);
        s.state.v = torch::zeros_like(tp.param);
      }
    } else {
      const auto momentType = s.moments == MomentPrecision::Fp32 ? torch::kFloat32
                              : s.moments == MomentPrecision::Fp16 ? torch::kFloat16
                                                                   : torch::kBFloat16;
      s.state.m = torch::zeros_like(tp.param, torch::TensorOptions().dtype(momentType));
      s.state.v = torch::zeros_like(tp.param, torch::TensorOptions().dtype(momentType));
    }
    if (s.rule == StepRule::Master) {
      if (tp.fp32Source.defined()) {
        if (!tp.fp32Source.sizes().equals(tp.param.sizes()))
          throw ConfigError("optimizer: fp32 source of '" + tp.name + "' has a different shape");
        s.state.master = tp.fp32Source.detach().to(tp.param.device(), torch::kFloat32).contiguous();
      } else {
        s.state.master = tp.param.detach().to(torch::kFloat32).contiguous();
      }
    }
    if (state_layout::hasKahan(recipe, bf16)) s.state.comp = torch::zeros_like(tp.param);
    const int64_t position = tp.streamIndex >= 0 ? tp.streamIndex : static_cast<int64_t>(impl_->slots.size());
    s.randomStream = static_cast<uint32_t>(4 * position);
    if (tp.firstElement < 0 || tp.firstElement % 8 != 0)
      throw ConfigError("optimizer: slice of '" + tp.name + "' starts at element " + std::to_string(tp.firstElement) +
                        ", not a multiple of 8");
    s.firstGroup = static_cast<uint64_t>(tp.firstElement / 8);
    tp.fp32Source = torch::Tensor();  // adopted as master or not needed

    auto [li, newLayer] = layerIndex.emplace(tp.layer, impl_->layers.size());
    if (newLayer) impl_->layers.push_back(tp.layer);
    s.layer = li->second;
    s.tp = std::move(tp);
    impl_->slots.push_back(std::move(s));
  }
}

PrecisionAdamW::~PrecisionAdamW() = default;

OptimizerStepStats PrecisionAdamW::step(double lr, bool collectStats) {
  torch::NoGradGuard noGrad;
  Impl& im = *impl_;
  im.stepCount += 1;
  const int64_t window = im.statsOptions.window;
  const bool windowOn = window > 0;
  const bool windowCloses = windowOn && im.stepCount % window == 0;

  // Small fp64 term tensors, one per param, read back in one transfer.
  std::vector<torch::Tensor> stepTermList, windowTermList;
  std::vector<size_t> stepLayer, windowLayer;
  std::vector<std::pair<size_t, kernels::MomentErrorSums>> momentLayer;  // quantized moments' window sums
  for (Slot& s : im.slots) {
    const torch::Tensor& p = s.tp.param;
    if (p.grad().defined()) {
      if (p.grad().is_sparse()) throw TrainingError("optimizer: sparse gradient for '" + s.tp.name + "' is not supported");
      s.steps += 1;
      s.state.grad = p.grad();
      if (windowOn && !s.window.started())
        s.window.begin(p, im.statsOptions.maxTrackedPerTensor, pendingHolder(s), pendingHolderKind(s),
                       (s.rule == StepRule::Bf16Write || s.rule == StepRule::QuantizedMoments) &&
                           p.scalar_type() != torch::kFloat32 && s.write == steps::WeightWrite::Stochastic);
      const bool quantized = s.rule == StepRule::QuantizedMoments;
      const bool torchFused = !quantized && im.runsTorchFused(s);
      if (quantized || torchFused || im.runsFused(s)) {
        // One pass (per block for 8-bit moments): the kernel adds the
        // statistics and the window's sum itself.
        steps::FusedExtras extras;
        extras.random = im.randomFor(s);
        if (windowOn) {
          extras.windowSum = s.window.intendedSum();
          extras.windowStride = s.window.stride();
        }
        extras.stats = collectStats;
        if (windowOn && s.rule == StepRule::QuantizedMoments) extras.momentErrors = &s.momentErrors;
        const torch::Tensor terms =
            quantized    ? steps::quantizedMomentsStep(s.state, im.scalarsFor(s, lr), s.write, s.moments, extras)
            : torchFused ? steps::torchFusedStep(s.state, im.scalarsFor(s, lr), extras)
                         : steps::fusedStep(s.state, im.scalarsFor(s, lr), fusedRuleOf(s), s.moments, extras);
        if (collectStats) {
          stepTermList.push_back(terms);
          stepLayer.push_back(s.layer);
        }
      } else if (s.rule == StepRule::Fp32 || s.rule == StepRule::Bf16Plain) {
        if (collectStats) {
          stepTermList.push_back(im.torchStepWithTerms(s, lr, windowOn));
          stepLayer.push_back(s.layer);
        } else if (windowOn) {
          // Only the window's sampled elements are needed: no full-size copy.
          s.window.addSampled(im.stepWithSampledIntended(s, lr));
        } else {
          im.torchStep(s, lr);
        }
      } else {
        const bool track = collectStats || windowOn;
        // An fp32 copy of the compute weights before the step (a clone for fp32).
        const torch::Tensor before32 = track ? p.to(torch::kFloat32, false, /*copy=*/true) : torch::Tensor();
        const torch::Tensor intended = im.runReferenceStep(s, lr, before32);
        if (collectStats) {
          stepTermList.push_back(steps::stepTerms(intended, before32, p.to(torch::kFloat32)));
          stepLayer.push_back(s.layer);
        }
        if (windowOn) s.window.add(intended);
      }
      s.state.grad = torch::Tensor();
    }
    if (windowCloses && s.window.started()) {
      windowTermList.push_back(s.window.close(p, pendingHolder(s)));
      windowLayer.push_back(s.layer);
      if (s.rule == StepRule::QuantizedMoments) {
        momentLayer.emplace_back(s.layer, s.momentErrors);
        s.momentErrors = {};
      }
    }
  }

  OptimizerStepStats out;
  out.layers = sumPerLayer<LayerUpdateStats>(stepTermList, stepLayer, im.layers, [](LayerUpdateStats& l, const auto& t) {
    l.intendedNonZero += static_cast<int64_t>(t[0]);
    l.roundedAway += static_cast<int64_t>(t[1]);
    l.intendedNormSq += t[2];
    l.effectiveNormSq += t[3];
    l.numel += static_cast<int64_t>(t[4]);
  });
  out.window = sumPerLayer<LayerWindowStats>(windowTermList, windowLayer, im.layers,
                                             [](LayerWindowStats& l, const auto& t) { addWindowTerms(l, t.data()); });
  for (const auto& [layer, e] : momentLayer)
    for (LayerWindowStats& l : out.window) {
      if (l.layer != im.layers[layer]) continue;
      l.momentsMeasured = true;
      l.momentErrorSq[0] += e.mErrorSq;
      l.momentSq[0] += e.mSq;
      l.momentErrorSq[1] += e.vErrorSq;
      l.momentSq[1] += e.vSq;
    }
  return out;
}

void PrecisionAdamW::zeroGrad() {
  // Released, as optimizer.zero_grad(set_to_none=True) (PyTorch's default):
  // backward then hands its gradient over instead of adding it to zeros, one
  // pass over every gradient less per step. They exist again after backward,
  // where the trainer measures memory, so the figures count them.
  for (Slot& s : impl_->slots) s.tp.param.mutable_grad() = torch::Tensor();
}

int64_t PrecisionAdamW::stepCount() const { return impl_->stepCount; }
OptimizerMode PrecisionAdamW::mode() const { return impl_->mode; }

MemoryBreakdown PrecisionAdamW::measuredMemory() const {
  MemoryBreakdown mem;
  for (const Slot& s : impl_->slots) {
    mem.weights += bytesOf(s.tp.param);
    mem.gradients += bytesOf(s.tp.param.grad());
    mem.moments += bytesOf(s.state.m) + bytesOf(s.state.v);
    mem.scales += bytesOf(s.state.mScale) + bytesOf(s.state.vScale);
    mem.master += bytesOf(s.state.master);
    mem.kahan += bytesOf(s.state.comp);
  }
  return mem;
}

int64_t PrecisionAdamW::statisticsBytes() const {
  if (impl_->statsOptions.window <= 0) return 0;
  int64_t bytes = 0;
  for (const Slot& s : impl_->slots)
    bytes += UpdateWindow::bytesFor(s.tp.param.numel(), impl_->statsOptions.maxTrackedPerTensor,
                                    pendingHolderKind(s) != PendingHolder::None);
  return bytes;
}

namespace {
// A slot's saved state by checkpoint name; the mode decides which exist.
template <typename F>
void forEachStateTensor(const Slot& s, F f) {
  const std::pair<const char*, const torch::Tensor*> parts[] = {
      {".exp_avg", &s.state.m},           {".exp_avg_sq", &s.state.v},
      {".exp_avg.scale", &s.state.mScale}, {".exp_avg_sq.scale", &s.state.vScale},
      {".master", &s.state.master},       {".kahan", &s.state.comp}};
  for (const auto& [suffix, t] : parts)
    if (t->defined()) f(s.tp.name + suffix, *t);
}
}  // namespace

std::vector<std::pair<std::string, torch::Tensor>> PrecisionAdamW::stateTensors() const {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const Slot& s : impl_->slots)
    forEachStateTensor(s, [&](std::string name, const torch::Tensor& t) { out.emplace_back(std::move(name), t.detach().cpu()); });
  return out;
}

std::vector<PrecisionAdamW::StateTensorLayout> PrecisionAdamW::stateLayout() const {
  std::vector<StateTensorLayout> out;
  for (const Slot& s : impl_->slots)
    forEachStateTensor(s, [&](std::string name, const torch::Tensor& t) {
      out.push_back({std::move(name), t.scalar_type(), t.sizes().vec()});
    });
  return out;
}

nlohmann::json PrecisionAdamW::stepCounts() const {
  nlohmann::json params = nlohmann::json::object();
  for (const Slot& s : impl_->slots) params[s.tp.name] = s.steps;
  return {{"step", impl_->stepCount}, {"params", params}};
}

void PrecisionAdamW::loadState(const std::function<torch::Tensor(const std::string&)>& tensor,
                               const nlohmann::json& counts) {
  torch::NoGradGuard noGrad;
  auto restore = [&](const std::string& name, const torch::Tensor& into) {
    if (!into.defined()) return;
    const torch::Tensor saved = tensor(name);
    if (!saved.defined()) throw ConfigError("optimizer state: '" + name + "' is missing");
    if (saved.scalar_type() != into.scalar_type() || !saved.sizes().equals(into.sizes()))
      throw ConfigError("optimizer state: '" + name + "' does not match this run (dtype or shape)");
    into.copy_(saved);
  };
  try {
    const auto& params = counts.at("params");
    for (Slot& s : impl_->slots) {
      restore(s.tp.name + ".exp_avg", s.state.m);
      restore(s.tp.name + ".exp_avg_sq", s.state.v);
      restore(s.tp.name + ".exp_avg.scale", s.state.mScale);
      restore(s.tp.name + ".exp_avg_sq.scale", s.state.vScale);
      restore(s.tp.name + ".master", s.state.master);
      restore(s.tp.name + ".kahan", s.state.comp);
      if (!params.contains(s.tp.name)) throw ConfigError("optimizer state: no step count for '" + s.tp.name + "'");
      s.steps = params.at(s.tp.name).get<int64_t>();
    }
    impl_->stepCount = counts.at("step").get<int64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("optimizer state: malformed step counts (") + e.what() + ")");
  }
}

namespace {
const Slot& findSlot(const std::vector<Slot>& slots, const std::string& name) {
  for (const Slot& s : slots)
    if (s.tp.name == name) return s;
  throw ConfigError("optimizer: no parameter named '" + name + "'");
}
}  // namespace

torch::Tensor PrecisionAdamW::kahanCompensation(const std::string& paramName) const {
  return findSlot(impl_->slots, paramName).state.comp;
}

torch::Tensor PrecisionAdamW::masterWeight(const std::string& paramName) const {
  return findSlot(impl_->slots, paramName).state.master;
}

torch::Tensor PrecisionAdamW::firstMoment(const std::string& paramName) const {
  const Slot& s = findSlot(impl_->slots, paramName);
  return s.state.mScale.defined()
             ? steps::dequantizedMoment(s.state.m, s.state.mScale, true, s.moments, s.tp.param.sizes())
             : s.state.m;
}

torch::Tensor PrecisionAdamW::secondMoment(const std::string& paramName) const {
  const Slot& s = findSlot(impl_->slots, paramName);
  return s.state.vScale.defined()
             ? steps::dequantizedMoment(s.state.v, s.state.vScale, false, s.moments, s.tp.param.sizes())
             : s.state.v;
}

MemoryBreakdown predictMemory(const std::vector<TrainableParam>& params, OptimizerMode mode,
                              const AdamWOptions& options) {
  MemoryBreakdown mem;
  // The rules of the module-tree estimate, per tensor (2-byte bf16 or fp16).
  for (const TrainableParam& tp : params) {
    const bool lowPrecision = tp.param.scalar_type() == torch::kBFloat16 || tp.param.scalar_type() == torch::kFloat16;
    mem += elementBytes(tp.param.numel(), lowPrecision, tp.recipe.value_or(mode),
                        state_layout::withStore(options, tp.moments));
  }
  return mem;
}

}  // namespace plab
