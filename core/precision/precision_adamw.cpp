#include "precision/precision_adamw.h"

#include <cmath>
#include <unordered_map>
#include <utility>

#include "precision/state_layout.h"
#include "util/errors.h"

namespace plab {
namespace {

// How the new weight of a parameter reaches its storage.
enum class WriteRule {
  Fp32InPlace,  // fp32 param: torch::optim::AdamW's in-place arithmetic on the param
  Master,       // bf16 param with fp32 master: exact fp32 AdamW on the master, param = nearest(master)
  Nearest,      // bf16 param: round-to-nearest-even write
  Kahan,        // bf16 param: compensated write with a bf16 error buffer
  Stochastic,   // bf16 param: stochastically rounded write
};

struct Slot {
  TrainableParam tp;
  WriteRule rule = WriteRule::Fp32InPlace;
  torch::Tensor m, v;    // fp32, or bf16 for bf16 params in the pure-bf16 modes
  torch::Tensor master;  // Master only (fp32)
  torch::Tensor comp;    // Kahan only (bf16)
  int64_t steps = 0;     // per param, like torch: params without grads do not advance
  size_t layer = 0;      // index into Impl::layers
};

int64_t bytesOf(const torch::Tensor& t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
}

// Accumulates one param's stats: intended = the fp32 AdamW update of the
// weight, before/after = the stored weight (fp32 view) around the write.
struct StatTerms {
  torch::Tensor intendedNonZero, roundedAway, intendedNormSq, effectiveNormSq;
};

StatTerms statTerms(const torch::Tensor& intended, const torch::Tensor& before, const torch::Tensor& after) {
  const torch::Tensor nonZero = intended.ne(0);
  const torch::Tensor unchanged = after.eq(before);
  const torch::Tensor effective = after - before;
  return {nonZero.sum(), nonZero.logical_and(unchanged).sum(), intended.square().sum(torch::kDouble),
          effective.square().sum(torch::kDouble)};
}

}  // namespace

struct PrecisionAdamW::Impl {
  OptimizerMode mode;
  AdamWOptions options;
  uint64_t seed;
  int64_t stepCount = 0;
  std::vector<Slot> slots;
  std::vector<std::string> layers;
  std::vector<std::pair<torch::Device, torch::Generator>> generators;

  torch::Generator& generatorFor(const torch::Device& device) {
    for (auto& [d, g] : generators)
      if (d == device) return g;
    generators.emplace_back(device, makeSeededGenerator(device, seed + generators.size()));
    return generators.back().second;
  }

  // Updates one param that has a grad; fills *stats when given.
  void stepOne(Slot& s, double lr, StatTerms* stats);
};

PrecisionAdamW::PrecisionAdamW(std::vector<TrainableParam> params, OptimizerMode mode, AdamWOptions options,
                               uint64_t seed)
    : impl_(std::make_unique<Impl>()) {
  torch::NoGradGuard noGrad;
  impl_->mode = mode;
  impl_->options = options;
  impl_->seed = seed;
  std::unordered_map<const void*, std::string> seen;
  std::unordered_map<std::string, size_t> layerIndex;
  for (TrainableParam& tp : params) {
    if (!tp.param.defined()) throw ConfigError("optimizer: parameter '" + tp.name + "' is undefined");
    const auto dtype = tp.param.scalar_type();
    if (dtype != torch::kFloat32 && dtype != torch::kBFloat16)
      throw ConfigError("optimizer: parameter '" + tp.name + "' has dtype " + c10::toString(dtype) +
                        "; only float32 and bfloat16 are supported");
    // Tied weights must be listed once or they would be updated twice.
    auto [it, inserted] = seen.emplace(tp.param.unsafeGetTensorImpl(), tp.name);
    if (!inserted)
      throw ConfigError("optimizer: parameter '" + tp.name + "' is the same tensor as '" + it->second + "'");

    Slot s;
    const bool bf16 = dtype == torch::kBFloat16;
    if (!bf16) s.rule = WriteRule::Fp32InPlace;
    else if (state_layout::hasMaster(mode, true)) s.rule = WriteRule::Master;
    else if (state_layout::hasKahan(mode, true)) s.rule = WriteRule::Kahan;
    else if (mode == OptimizerMode::Bf16StochasticRounding) s.rule = WriteRule::Stochastic;
    else s.rule = WriteRule::Nearest;  // Bf16Plain, or a stray bf16 param in Fp32AdamW mode

    const auto momentType = state_layout::bf16Moments(mode, options, bf16) ? torch::kBFloat16 : torch::kFloat32;
    s.m = torch::zeros_like(tp.param, torch::TensorOptions().dtype(momentType));
    s.v = torch::zeros_like(tp.param, torch::TensorOptions().dtype(momentType));
    if (s.rule == WriteRule::Master) {
      if (tp.fp32Source.defined()) {
        if (!tp.fp32Source.sizes().equals(tp.param.sizes()))
          throw ConfigError("optimizer: fp32 source of '" + tp.name + "' has a different shape");
        s.master = tp.fp32Source.detach().to(tp.param.device(), torch::kFloat32).contiguous();
      } else {
        s.master = tp.param.detach().to(torch::kFloat32).contiguous();
      }
    }
    if (s.rule == WriteRule::Kahan) s.comp = torch::zeros_like(tp.param);
    if (s.rule == WriteRule::Stochastic) impl_->generatorFor(tp.param.device());
    tp.fp32Source = torch::Tensor();  // adopted as master or not needed

    auto [li, newLayer] = layerIndex.emplace(tp.layer, impl_->layers.size());
    if (newLayer) impl_->layers.push_back(tp.layer);
    s.layer = li->second;
    s.tp = std::move(tp);
    impl_->slots.push_back(std::move(s));
  }
}

PrecisionAdamW::~PrecisionAdamW() = default;

void PrecisionAdamW::Impl::stepOne(Slot& s, double lr, StatTerms* stats) {
  const bool collectStats = stats != nullptr;
  const torch::Tensor& p = s.tp.param;
  const torch::Tensor& grad = p.grad();
  if (grad.is_sparse()) throw TrainingError("optimizer: sparse gradient for '" + s.tp.name + "' is not supported");

  s.steps += 1;
  const double beta1 = options.beta1, beta2 = options.beta2, wd = options.weight_decay;
  const double biasCorrection1 = 1 - std::pow(beta1, static_cast<double>(s.steps));
  const double biasCorrection2 = 1 - std::pow(beta2, static_cast<double>(s.steps));
  const double stepSize = lr / biasCorrection1;

  // The fp32 AdamW update of `w` in torch::optim::AdamW's exact order of
  // operations (LibTorch 1.13 adamw.cpp); m32/v32 are updated in place.
  auto adamw = [&](const torch::Tensor& w, const torch::Tensor& g32, const torch::Tensor& m32,
                   const torch::Tensor& v32, const torch::Tensor& wBefore) -> torch::Tensor {
    if (wd != 0) w.mul_(1 - lr * wd);
    m32.mul_(beta1).add_(g32, 1 - beta1);
    v32.mul_(beta2).addcmul_(g32, g32, 1 - beta2);
    torch::Tensor denom = (v32.sqrt() / std::sqrt(biasCorrection2)).add_(options.eps);
    w.addcdiv_(m32, denom, -stepSize);
    if (!collectStats) return {};
    // The exact update term, unrounded by the addition to w.
    torch::Tensor decay = wd != 0 ? wBefore * (-(lr * wd)) : torch::zeros_like(wBefore);
    return decay.addcdiv_(m32, denom, -stepSize);
  };

  switch (s.rule) {
    case WriteRule::Fp32InPlace: {
      torch::Tensor before = collectStats ? p.detach().clone() : torch::Tensor();
      torch::Tensor intended = adamw(p, grad.to(torch::kFloat32), s.m, s.v, before);  // fp32 moments
      if (collectStats) *stats = statTerms(intended, before, p);
      return;
    }
    case WriteRule::Master: {
      torch::Tensor before = collectStats ? s.master.clone() : torch::Tensor();
      torch::Tensor intended = adamw(s.master, grad.to(torch::kFloat32), s.m, s.v, before);
      p.copy_(s.master);  // round-to-nearest compute copy
      if (collectStats) *stats = statTerms(intended, before, s.master);
      return;
    }
    case WriteRule::Nearest:
    case WriteRule::Kahan:
    case WriteRule::Stochastic: {
      const bool fp32Moments = s.m.scalar_type() == torch::kFloat32;
      torch::Tensor m32 = fp32Moments ? s.m : s.m.to(torch::kFloat32);
      torch::Tensor v32 = fp32Moments ? s.v : s.v.to(torch::kFloat32);
      const torch::Tensor before = p.to(torch::kFloat32);  // exact upcast of the stored weight
      torch::Tensor wNew = before.clone();
      torch::Tensor intended = adamw(wNew, grad.to(torch::kFloat32), m32, v32, before);
      if (!fp32Moments) {
        s.m.copy_(m32);
        s.v.copy_(v32);
      }
      if (s.rule == WriteRule::Nearest) {
        p.copy_(wNew);
      } else if (s.rule == WriteRule::Kahan) {
        // optimi's kahan_sum: the buffer carries what the bf16 write lost and
        // is added to the next update.
        const torch::Tensor c = s.comp.to(torch::kFloat32).add_(wNew - before);
        const torch::Tensor written = (before + c).to(torch::kBFloat16);
        s.comp.copy_(c - (written.to(torch::kFloat32) - before));
        p.copy_(written);
      } else {
        p.copy_(roundToBf16Stochastic(wNew, generatorFor(p.device())));
      }
      if (collectStats) *stats = statTerms(intended, before, p.to(torch::kFloat32));
      return;
    }
  }
}

std::vector<LayerUpdateStats> PrecisionAdamW::step(double lr, bool collectStats) {
  torch::NoGradGuard noGrad;
  impl_->stepCount += 1;
  const size_t layerCount = impl_->layers.size();
  std::vector<int64_t> numel(layerCount, 0);
  std::vector<bool> stepped(layerCount, false);
  // Per layer, one small CPU tensor per param: [nonZero, roundedAway, intendedSq, effectiveSq].
  std::vector<std::vector<torch::Tensor>> terms(layerCount);
  for (Slot& s : impl_->slots) {
    if (!s.tp.param.grad().defined()) continue;  // unused this step: state untouched
    StatTerms t;
    impl_->stepOne(s, lr, collectStats ? &t : nullptr);
    stepped[s.layer] = true;
    numel[s.layer] += s.tp.param.numel();
    if (collectStats)
      terms[s.layer].push_back(torch::stack({t.intendedNonZero.to(torch::kDouble), t.roundedAway.to(torch::kDouble),
                                             t.intendedNormSq, t.effectiveNormSq}));
  }

  std::vector<LayerUpdateStats> out;
  if (!collectStats) return out;
  for (size_t i = 0; i < layerCount; ++i) {
    if (!stepped[i]) continue;
    LayerUpdateStats st;
    st.layer = impl_->layers[i];
    st.numel = numel[i];
    // One device-to-host transfer per layer.
    const torch::Tensor sums = torch::stack(terms[i]).sum(0).cpu();
    auto a = sums.accessor<double, 1>();
    st.intendedNonZero = static_cast<int64_t>(a[0]);
    st.roundedAway = static_cast<int64_t>(a[1]);
    st.intendedNormSq = a[2];
    st.effectiveNormSq = a[3];
    out.push_back(std::move(st));
  }
  return out;
}

void PrecisionAdamW::zeroGrad() {
  torch::NoGradGuard noGrad;
  // Zeroed in place rather than released: the gradient memory stays what
  // predictMemory reports.
  for (Slot& s : impl_->slots) {
    const torch::Tensor& g = s.tp.param.grad();
    if (g.defined()) g.zero_();
  }
}

int64_t PrecisionAdamW::stepCount() const { return impl_->stepCount; }
OptimizerMode PrecisionAdamW::mode() const { return impl_->mode; }

MemoryBreakdown PrecisionAdamW::measuredMemory() const {
  MemoryBreakdown mem;
  for (const Slot& s : impl_->slots) {
    mem.weights += bytesOf(s.tp.param);
    mem.gradients += bytesOf(s.tp.param.grad());
    mem.moments += bytesOf(s.m) + bytesOf(s.v);
    mem.master += bytesOf(s.master);
    mem.kahan += bytesOf(s.comp);
  }
  return mem;
}

namespace {
const Slot& findSlot(const std::vector<Slot>& slots, const std::string& name) {
  for (const Slot& s : slots)
    if (s.tp.name == name) return s;
  throw ConfigError("optimizer: no parameter named '" + name + "'");
}
}  // namespace

torch::Tensor PrecisionAdamW::kahanCompensation(const std::string& paramName) const {
  return findSlot(impl_->slots, paramName).comp;
}

torch::Tensor PrecisionAdamW::masterWeight(const std::string& paramName) const {
  return findSlot(impl_->slots, paramName).master;
}

MemoryBreakdown predictMemory(const std::vector<TrainableParam>& params, OptimizerMode mode,
                              const AdamWOptions& options) {
  MemoryBreakdown mem;
  for (const TrainableParam& tp : params) {
    const int64_t n = tp.param.numel();
    const bool bf16 = tp.param.scalar_type() == torch::kBFloat16;
    const int64_t paramBytes = bf16 ? 2 : 4;
    mem.weights += n * paramBytes;
    mem.gradients += n * paramBytes;
    mem.moments += 2 * n * (state_layout::bf16Moments(mode, options, bf16) ? 2 : 4);
    if (state_layout::hasMaster(mode, bf16)) mem.master += 4 * n;
    if (state_layout::hasKahan(mode, bf16)) mem.kahan += 2 * n;
  }
  return mem;
}

}  // namespace plab
