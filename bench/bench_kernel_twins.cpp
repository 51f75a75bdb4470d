// The fused optimizer kernels' CUDA twin against their CPU twin, for a
// machine without Qt (packaging/gpu-check.sh): every recipe steps the same
// parameters with the same gradients on both devices; the state must agree
// bit for bit (quantized moments: the dequantized m and v, codes times
// scales, on a whole number of blocks). Prints one line per recipe; exit 1 on a mismatch, 2 when
// there is no CUDA device or the build has no CUDA kernels.
//   bench_kernel_twins [elements=1000003] [steps=20]
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "precision/precision_adamw.h"

using namespace plab;

namespace {

struct Recipe {
  const char* name;
  OptimizerMode mode;
  MomentPrecision moments;
  bool fp32Weights = false;  // an fp32 layer of a bf16 recipe (quantized moments step it too)
};

// Weights, moments and the master or Kahan buffer of the one parameter.
std::vector<torch::Tensor> stateOf(const PrecisionAdamW& opt, const torch::Tensor& param) {
  std::vector<torch::Tensor> out = {param.detach().cpu()};
  for (const torch::Tensor& t : {opt.firstMoment("w"), opt.secondMoment("w"), opt.masterWeight("w"),
                                 opt.kahanCompensation("w")})
    if (t.defined()) out.push_back(t.cpu());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000003;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
#ifndef PLAB_HAVE_CUDA_KERNELS
  std::printf("built without the CUDA kernels (needs a CUDA LibTorch and nvcc at configure time)\n");
  return 2;
#endif
  if (!torch::cuda::is_available()) {
    std::printf("no CUDA device\n");
    return 2;
  }
  torch::NoGradGuard noGrad;
  const Recipe recipes[] = {
      {"bf16-nearest (bf16 moments)", OptimizerMode::Bf16Nearest, MomentPrecision::Bf16Nearest},
      {"bf16-nearest (fp32 moments)", OptimizerMode::Bf16Nearest, MomentPrecision::Fp32},
      {"bf16-kahan (bf16-sr moments)", OptimizerMode::Bf16Kahan, MomentPrecision::Bf16Stochastic},
      {"bf16-kahan (fp32 moments)", OptimizerMode::Bf16Kahan, MomentPrecision::Fp32},
      {"bf16-sr (bf16-sr moments)", OptimizerMode::Bf16StochasticRounding, MomentPrecision::Bf16Stochastic},
      {"mixed", OptimizerMode::Fp32MasterWeights, MomentPrecision::ModeDefault},
      {"bf16-sr (8bit moments)", OptimizerMode::Bf16StochasticRounding, MomentPrecision::Dynamic8bit},
      {"bf16-kahan (8bit moments)", OptimizerMode::Bf16Kahan, MomentPrecision::Dynamic8bit},
      {"bf16-nearest (4bit moments)", OptimizerMode::Bf16Nearest, MomentPrecision::Dynamic4bit},
      {"bf16-sr (4bit moments)", OptimizerMode::Bf16StochasticRounding, MomentPrecision::Dynamic4bit},
      {"bf16-sr (fp8 moments)", OptimizerMode::Bf16StochasticRounding, MomentPrecision::Fp8},
      {"fp32 weights (8bit moments)", OptimizerMode::Bf16StochasticRounding, MomentPrecision::Dynamic8bit, true},
  };
  int failures = 0;
  for (const Recipe& r : recipes) {
    // Quantized moments need whole blocks (else they stay plain, as torchao's).
    const int64_t size = momentsQuantized(r.moments) ? std::max<int64_t>(n / 256 * 256, 4096) : n;
    torch::manual_seed(1);
    const torch::Tensor init = (1 + torch::rand({size})).to(r.fp32Weights ? torch::kFloat32 : torch::kBFloat16);
    AdamWOptions o;
    o.moments = r.moments;
    UpdateStatsOptions stats;
    stats.window = 5;
    torch::Tensor onCpu = init.clone().set_requires_grad(true);
    torch::Tensor onGpu = init.to(torch::kCUDA).set_requires_grad(true);
    PrecisionAdamW cpu({{"w", "layer", onCpu, {}}}, r.mode, o, 7, stats);
    PrecisionAdamW gpu({{"w", "layer", onGpu, {}}}, r.mode, o, 7, stats);
    int64_t roundedCpu = 0, roundedGpu = 0;
    for (int k = 0; k < steps; ++k) {
      const torch::Tensor g = torch::randn({size}).to(init.scalar_type());
      onCpu.mutable_grad() = g.clone();
      onGpu.mutable_grad() = g.to(torch::kCUDA);
      for (const auto& l : cpu.step(1e-2, true).layers) roundedCpu += l.roundedAway;
      for (const auto& l : gpu.step(1e-2, true).layers) roundedGpu += l.roundedAway;
    }
    const auto a = stateOf(cpu, onCpu), b = stateOf(gpu, onGpu);
    bool equal = a.size() == b.size() && roundedCpu == roundedGpu;
    for (size_t i = 0; equal && i < a.size(); ++i) equal = torch::equal(a[i], b[i]);
    std::printf("%-32s %s (rounded away: cpu %lld, cuda %lld)\n", r.name, equal ? "bit-exact" : "MISMATCH",
                static_cast<long long>(roundedCpu), static_cast<long long>(roundedGpu));
    failures += equal ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
