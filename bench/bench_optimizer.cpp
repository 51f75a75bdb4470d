// Time of one optimizer step per mode on a few million parameters, against
// torch::optim::AdamW on the same shapes.
//   bench_optimizer [elements=4000000] [steps=20] [warmup=3] [device=cpu]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "precision/precision_adamw.h"
#include "util/blas_info.h"

using namespace plab;

namespace {

// Linear-like layers of width 1024 (plus biases) adding up to ~elements.
std::vector<torch::Tensor> makeParams(int64_t elements, const torch::Device& device) {
  std::vector<torch::Tensor> out;
  const int64_t width = 1024;
  int64_t total = 0;
  while (total < elements) {
    const int64_t rows = std::min<int64_t>(width, std::max<int64_t>(1, (elements - total) / width));
    out.push_back(torch::randn({rows, width}, device) * 0.02);
    out.push_back(torch::zeros({rows}, device));
    total += rows * width + rows;
  }
  for (auto& p : out) p.set_requires_grad(true);
  return out;
}

void sync(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

double medianMs(int steps, int warmup, const torch::Device& device, const std::function<void()>& step) {
  std::vector<double> ms;
  for (int i = 0; i < warmup + steps; ++i) {
    sync(device);
    const auto t0 = std::chrono::steady_clock::now();
    step();
    sync(device);
    const auto t1 = std::chrono::steady_clock::now();
    if (i >= warmup) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t elements = argc > 1 ? std::atoll(argv[1]) : 4000000;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 20;
  const int warmup = argc > 3 ? std::atoi(argv[3]) : 3;
  const torch::Device device(argc > 4 ? argv[4] : "cpu");
  torch::manual_seed(0);
  torch::NoGradGuard noGrad;

  std::vector<torch::Tensor> reference = makeParams(elements, device);
  int64_t numel = 0;
  for (auto& p : reference) {
    numel += p.numel();
    p.mutable_grad() = torch::randn_like(p) * 1e-3;
  }
  const BlasInfo blas = loadedBlas();
  std::printf("BLAS: %s %s\n", blas.name.c_str(), blas.library.c_str());
  std::printf("%lld parameters in %zu tensors on %s, %d threads; median of %d steps after %d warmup\n",
              static_cast<long long>(numel), reference.size(), device.str().c_str(), torch::get_num_threads(),
              steps, warmup);

  torch::optim::AdamW torchOpt(reference, torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  const double torchMs = medianMs(steps, warmup, device, [&] { torchOpt.step(); });
  const int64_t torchState = numel * 8;  // exp_avg + exp_avg_sq, fp32
  std::printf("%-30s %10s %10s %14s %14s\n", "optimizer", "ms/step", "vs torch", "state bytes", "total bytes");
  std::printf("%-30s %10.2f %10.2f %14lld %14lld\n", "torch::optim::AdamW (fp32)", torchMs, 1.0,
              static_cast<long long>(torchState), static_cast<long long>(16 * numel));

  for (OptimizerMode mode : allOptimizerModes()) {
    for (bool stats : {false, true}) {
      std::vector<TrainableParam> params;
      const bool bf16 = mode != OptimizerMode::Fp32AdamW;
      for (size_t i = 0; i < reference.size(); ++i) {
        torch::Tensor p = reference[i].detach().clone();
        if (bf16) p = p.to(torch::kBFloat16);
        p.set_requires_grad(true);
        p.mutable_grad() = reference[i].grad().to(p.scalar_type());
        params.push_back({"p" + std::to_string(i), "layer" + std::to_string(i / 2), p, {}});
      }
      // Without stats nothing is measured; with them, the per-step statistics
      // and the update-lost window (20 steps) as a default run collects them.
      UpdateStatsOptions statsOptions;
      statsOptions.window = stats ? 20 : 0;
      PrecisionAdamW opt(params, mode, AdamWOptions{}, 0, statsOptions);
      const double ms = medianMs(steps, warmup, device, [&] { opt.step(1e-3, stats); });
      const MemoryBreakdown mem = opt.measuredMemory();
      const std::string name = optimizerModeId(mode) + (stats ? " +stats" : "");
      std::printf("%-30s %10.2f %10.2f %14lld %14lld\n", name.c_str(), ms, ms / torchMs,
                  static_cast<long long>(mem.moments + mem.master + mem.kahan), static_cast<long long>(mem.total()));
    }
  }
  return 0;
}
