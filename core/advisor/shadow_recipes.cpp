#include "advisor/shadow_recipes.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "precision/bf16_rounding.h"
#include "precision/update_stats.h"

namespace plab {
namespace {

// The shadow's stochastic rounding draws from a stream the optimizer never
// uses (its streams are 4 * parameter + 0..2), so the real run is untouched.
constexpr uint32_t kShadowStream = 0xFFFFFFFEu;

torch::Tensor bf16Values(const torch::Tensor& fp32) { return fp32.to(torch::kBFloat16).to(torch::kFloat32); }

}  // namespace

ShadowRecipes::ShadowRecipes(const std::vector<TrainableParam>& params, int64_t window, uint64_t seed,
                             int64_t maxTrackedPerTensor)
    : window_(std::max<int64_t>(1, window)), seed_(seed) {
  torch::NoGradGuard noGrad;
  std::unordered_map<std::string, int64_t> layerOf;
  std::vector<int64_t> termIndex, layerIndex;
  const int64_t maxTracked = std::max<int64_t>(1, maxTrackedPerTensor);
  for (const TrainableParam& tp : params) {
    if (tp.param.scalar_type() != torch::kFloat32 || tp.param.numel() == 0) continue;
    // UpdateWindow's stride: every element up to maxTracked, else an even sample.
    const int64_t numel = tp.param.numel();
    const int64_t stride = std::max<int64_t>(1, (numel + maxTracked - 1) / maxTracked);
    const torch::Tensor flat = tp.param.detach().reshape({-1});
    views_.push_back(stride == 1 ? flat : flat.slice(0, 0, numel, stride));
    auto [it, added] = layerOf.emplace(tp.layer, static_cast<int64_t>(layers_.size()));
    if (added) layers_.push_back(tp.layer);
    const int64_t n = views_.back().numel();
    for (int64_t i = 0; i < n; ++i) {
      termIndex.push_back(it->second * kLostGroups + i % kLostGroups);  // UpdateWindow's groups, per parameter
      layerIndex.push_back(it->second);
    }
  }
  if (views_.empty()) return;
  const torch::Device device = views_.front().device();
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(device);
  termIndex_ = torch::tensor(termIndex, torch::kInt64).to(device);
  layerIndex_ = torch::tensor(layerIndex, torch::kInt64).to(device);
  const auto layerCount = static_cast<int64_t>(layers_.size());
  elementsPerLayer_ = torch::zeros({layerCount}, f64).index_add_(0, layerIndex_, torch::ones({layerIndex_.numel()}, f64));
}

torch::Tensor ShadowRecipes::gather() const { return torch::cat(views_).to(torch::kFloat32); }

void ShadowRecipes::beforeStep() {
  if (views_.empty()) return;
  torch::NoGradGuard noGrad;
  before_ = gather();
  if (nearest_.defined()) return;
  // The shadows start where a bf16 run would: the weights rounded once.
  nearest_ = bf16Values(before_);
  stochastic_ = nearest_.clone();
  kahan_ = nearest_.clone();
  buffer_ = torch::zeros_like(nearest_);
}

// One recipe's window terms per layer, as UpdateWindow::close computes them
// per parameter and PrecisionAdamW sums them per layer: a [layers,
// kWindowTerms] fp64 tensor.
torch::Tensor ShadowRecipes::recipeTerms(const torch::Tensor& weights, const torch::Tensor& start,
                                         const torch::Tensor& pendingDelta, bool stochastic) const {
  const torch::Tensor end = weights.to(torch::kFloat64);
  const torch::Tensor arrivalResidual = end - start - intendedSum_;
  const torch::Tensor residual = pendingDelta.defined() ? arrivalResidual + pendingDelta : arrivalResidual;
  const torch::Tensor residualDot = residual * intendedSum_;
  const torch::Tensor intendedSq = intendedSum_.square();
  const auto layerCount = static_cast<int64_t>(layers_.size());
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(end.device());
  auto perLayer = [&](const torch::Tensor& v) { return torch::zeros({layerCount}, f64).index_add_(0, layerIndex_, v); };
  auto perGroup = [&](const torch::Tensor& v) {
    return torch::zeros({layerCount * kLostGroups}, f64).index_add_(0, termIndex_, v).view({layerCount, kLostGroups});
  };
  const torch::Tensor groupsR = perGroup(residualDot), groupsQ = perGroup(intendedSq);
  torch::Tensor variance = torch::zeros({layerCount}, f64);
  if (stochastic) {
    const torch::Tensor ulp = bf16Ulp(torch::maximum(end.abs(), start.abs()));
    variance = perLayer(intendedSq * intendedSum_.abs() * ulp);
  }
  const torch::Tensor pendingDot =
      pendingDelta.defined() ? perLayer(pendingDelta * intendedSum_) : torch::zeros({layerCount}, f64);
  return torch::cat({groupsR.sum(1, true), groupsQ.sum(1, true), perLayer(arrivalResidual.square()).unsqueeze(1),
                     elementsPerLayer_.unsqueeze(1), pendingDot.unsqueeze(1), groupsR, groupsQ, variance.unsqueeze(1),
                     perLayer(residual.square()).unsqueeze(1)},
                    1);
}

nlohmann::json ShadowRecipes::afterStep() {
  if (views_.empty() || !before_.defined()) return nullptr;
  torch::NoGradGuard noGrad;
  steps_ += 1;
  const torch::Tensor after = gather();
  const torch::Tensor intended64 = after.to(torch::kFloat64) - before_.to(torch::kFloat64);
  const torch::Tensor intended = intended64.to(torch::kFloat32);
  before_ = torch::Tensor();
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64).device(intended.device());
  const auto layerCount = static_cast<int64_t>(layers_.size());
  if (!intendedSum_.defined()) {  // a window opens at the shadows' current values
    intendedSum_ = torch::zeros_like(intended64);
    nearestStart_ = nearest_.to(torch::kFloat64);
    stochasticStart_ = stochastic_.to(torch::kFloat64);
    kahanStart_ = kahan_.to(torch::kFloat64);
    bufferStart_ = buffer_.to(torch::kFloat64);
    nonZero_ = torch::zeros({layerCount}, f64);
    belowHalfUlp_ = torch::zeros({layerCount}, f64);
  }
  // Of the intended updates, those a nearest write of the weight cannot take.
  const torch::Tensor moved = intended != 0;
  const torch::Tensor small = moved.logical_and(intended.abs() < bf16Ulp(nearest_).mul_(0.5f));
  nonZero_.index_add_(0, layerIndex_, moved.to(torch::kFloat64));
  belowHalfUlp_.index_add_(0, layerIndex_, small.to(torch::kFloat64));
  intendedSum_.add_(intended64);

  // The three writes of precision/kernels/adamw_element.h, on the shadows.
  nearest_ = bf16Values(nearest_ + intended);
  kernels::RandomStream stream;
  stream.seed = seed_;
  stream.step = static_cast<uint32_t>(steps_);
  stream.stream = kShadowStream;
  stochastic_ = roundToBf16Stochastic(stochastic_ + intended,
                                      philoxRandom16(stochastic_.numel(), stream, stochastic_.device()))
                    .to(torch::kFloat32);
  const KahanWrite k = kahanBf16Write(kahan_, buffer_, intended);
  buffer_ = bf16Values(k.compensation);
  kahan_ = k.written.to(torch::kFloat32);

  if (steps_ % window_ != 0) return nullptr;
  const torch::Tensor none;
  const torch::Tensor terms =
      torch::stack({recipeTerms(nearest_, nearestStart_, none, false),
                    recipeTerms(stochastic_, stochasticStart_, none, true),
                    recipeTerms(kahan_, kahanStart_, buffer_.to(torch::kFloat64) - bufferStart_, false)})
          .cpu();
  const torch::Tensor counts = torch::stack({nonZero_, belowHalfUlp_}).cpu();
  intendedSum_ = torch::Tensor();  // the next step opens the next window
  const auto t = terms.accessor<double, 3>();
  const auto c = counts.accessor<double, 2>();
  nlohmann::json out = nlohmann::json::array();
  for (int64_t l = 0; l < layerCount; ++l) {
    double lost[3], se[3];
    for (int r = 0; r < 3; ++r) {
      double row[kWindowTerms];
      for (int k = 0; k < kWindowTerms; ++k) row[k] = t[r][l][k];
      LayerWindowStats stats;
      addWindowTerms(stats, row);
      lost[r] = stats.updateLost();
      se[r] = stats.updateLostStdError();
    }
    auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    out.push_back({{"layer", layers_[static_cast<size_t>(l)]},
                   {"elements", static_cast<int64_t>(t[0][l][3])},
                   {"update_lost", {{"nearest", number(lost[0])}, {"stochastic", number(lost[1])}, {"kahan", number(lost[2])}}},
                   {"update_lost_se", {{"nearest", number(se[0])}, {"stochastic", number(se[1])}, {"kahan", number(se[2])}}},
                   {"below_half_ulp", c[0][l] > 0 ? c[1][l] / c[0][l] : 0.0}});
  }
  return out;
}

}  // namespace plab
