// Time of one optimizer step per mode on a few million parameters, against
// torch.optim.AdamW(fused=True)'s step on the same shapes (ATen's
// _fused_adamw_, the fastest correct AdamW torch has on the CPU; on fp32
// weights for "fp32", on bf16 weights for the bf16 modes) and against the bytes each mode
// must move (every state tensor read and written once, the gradient read):
// "floor ms" is those bytes at the machine's measured copy bandwidth.
// "transient" is the step's peak memory above what was resident before it
// (CPU: peak RSS after malloc_trim; CUDA: allocator peak).
// Each row is timed in paired rounds: a torch step and the row's step, back
// to back (their order alternating), repeated; "torch ms" is the median of
// the torch steps of those rounds and "vs torch" the median of each round's
// ratio of the two adjacent timings, so a load that comes and goes during
// the run moves both alike (one torch timing taken at the start once read
// 1.63x and 0.39x for torch's own code).
// The first row pairs torch with a second copy of itself: how near 1.00 it
// reads is the run's noise.
// The "8bit" rows: adamw.moments "8bit" (torchao's AdamW8bit store and
// step, CPU only) on bf16 weights per write rule and on fp32 weights, and
// "4bit" / "fp8" (AdamW4bit, AdamWFp8) the same way;
// bench/compare_torchao_states.sh times torchao's own step beside them.
//   bench_optimizer [elements=4000000] [steps=20] [warmup=3] [device=cpu] [threads] [rows]
// rows: comma-separated terms (default: every row). A term that is a mode id
// ("fp32", "bf16-kahan") picks that mode's rows, 8bit ones included; any other
// term the rows whose name contains it ("8bit", "+stats", "2nd copy").
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ops/_fused_adamw.h>

#include "precision/precision_adamw.h"
#include "train/torch_runtime.h"
#include "util/step_memory.h"

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

double timeMs(const torch::Device& device, const std::function<void()>& step) {
  sync(device);
  const auto t0 = std::chrono::steady_clock::now();
  step();
  sync(device);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Paired {
  double ms;       // median of the row's steps
  double torchMs;  // median of the torch steps of the same rounds
  double ratio;    // median over the rounds of ms / torch ms
};

// `warmup` + `steps` rounds of one torch step and one step of the row, torch
// first in even rounds and second in odd ones (whichever runs second in a
// round finds the caches and clocks the first one left).
Paired pairedRounds(int steps, int warmup, const torch::Device& device, const std::function<void()>& torchStep,
                    const std::function<void()>& step) {
  std::vector<double> ms, torchMs, ratios;
  for (int i = 0; i < warmup + steps; ++i) {
    double t = 0, m = 0;
    if (i % 2 == 0) {
      t = timeMs(device, torchStep);
      m = timeMs(device, step);
    } else {
      m = timeMs(device, step);
      t = timeMs(device, torchStep);
    }
    if (i < warmup) continue;
    torchMs.push_back(t);
    ms.push_back(m);
    ratios.push_back(m / t);
  }
  return {median(ms), median(torchMs), median(ratios)};
}

// torch.optim.AdamW(fused=True)'s step as Python runs it: the step counts
// advanced, then one _fused_adamw_ over the list.
struct TorchFused {
  std::vector<torch::Tensor> params, grads, m, v, steps;
  TorchFused(const std::vector<torch::Tensor>& reference, torch::ScalarType dtype) {
    for (const auto& p : reference) {
      params.push_back(p.detach().to(dtype, false, /*copy=*/true));
      grads.push_back(p.grad().to(dtype, false, /*copy=*/true));
      m.push_back(torch::zeros_like(params.back()));
      v.push_back(torch::zeros_like(params.back()));
      steps.push_back(torch::zeros({}, torch::TensorOptions().dtype(torch::kFloat32).device(p.device())));
    }
  }
  void step() {
    for (auto& t : steps) t.add_(1);
    at::_fused_adamw_(params, grads, m, v, {}, steps, 1e-3, 0.9, 0.999, 0.01, 1e-8, false, false);
  }
};

// Copy bandwidth (bytes read + written per second) of a 256 MiB copy, the
// best of 10 as STREAM reports it: the floor is what the machine can do.
double copyBandwidth(const torch::Device& device) {
  const torch::Tensor src = torch::ones({64 << 20}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  torch::Tensor dst = torch::zeros_like(src);
  double best = 1e30;
  for (int i = 0; i < 10; ++i) {
    sync(device);
    const auto t0 = std::chrono::steady_clock::now();
    dst.copy_(src);
    sync(device);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * static_cast<double>(src.numel() * 4) / best;
}

// Peak bytes one call adds above what is resident before it (util/step_memory.h).
int64_t transientBytes(const torch::Device& device, const std::function<void()>& step) {
  const StepMemoryProbe probe(device.str());
  step();
  return probe.peakAboveStart().value_or(-1);
}

// The 6th argument: see the header comment.
class RowFilter {
 public:
  explicit RowFilter(const std::string& terms) {
    size_t from = 0;
    while (from <= terms.size()) {
      const size_t comma = std::min(terms.find(',', from), terms.size());
      if (comma > from) terms_.push_back(terms.substr(from, comma - from));
      from = comma + 1;
    }
  }
  bool operator()(const std::string& name, std::optional<OptimizerMode> mode = std::nullopt) const {
    if (terms_.empty()) return true;
    for (const std::string& t : terms_) {
      if (isModeId(t) ? mode && optimizerModeId(*mode) == t : name.find(t) != std::string::npos) return true;
    }
    return false;
  }

 private:
  static bool isModeId(const std::string& t) {
    for (OptimizerMode m : allOptimizerModes())
      if (optimizerModeId(m) == t) return true;
    return false;
  }
  std::vector<std::string> terms_;
};

}  // namespace

int main(int argc, char** argv) {
  const int64_t elements = argc > 1 ? std::atoll(argv[1]) : 4000000;
  const int steps = std::max(1, argc > 2 ? std::atoi(argv[2]) : 20);
  const int warmup = std::max(0, argc > 3 ? std::atoi(argv[3]) : 3);
  const torch::Device device(argc > 4 ? argv[4] : "cpu");
  if (argc > 5 && std::atoi(argv[5]) > 0) torch::set_num_threads(std::atoi(argv[5]));
  const RowFilter wanted(argc > 6 ? argv[6] : "");
  torch::manual_seed(0);
  torch::NoGradGuard noGrad;

  std::vector<torch::Tensor> reference = makeParams(elements, device);
  int64_t numel = 0;
  for (auto& p : reference) {
    numel += p.numel();
    p.mutable_grad() = torch::randn_like(p) * 1e-3;
  }
  const TorchRuntime runtime = describeTorchRuntime();
  std::printf("LibTorch %s, BLAS %s\n", runtime.libtorchVersion.c_str(), runtime.blas.c_str());
  std::printf("%lld parameters in %zu tensors on %s, %d threads; medians of %d paired rounds (a torch step and "
              "the row's, back to back) after %d warmup\n",
              static_cast<long long>(numel), reference.size(), device.str().c_str(), torch::get_num_threads(),
              steps, warmup);

  const double bandwidth = copyBandwidth(device);
  std::printf("copy bandwidth: %.2f GB/s (read + write)\n", bandwidth / 1e9);
  const auto floorMs = [&](int64_t bytes) { return 1000.0 * static_cast<double>(bytes) / bandwidth; };

  TorchFused fusedFp32(reference, torch::kFloat32), fusedBf16(reference, torch::kBFloat16);
  const std::function<void()> torchStep = [&] { fusedFp32.step(); };
  const std::function<void()> torchStepBf16 = [&] { fusedBf16.step(); };
  const int64_t torchMoved = numel * (2 * 4 + 4 + 2 * 8);  // param r/w, grad r, m and v r/w (fp32)
  std::printf("torch ms: torch.optim.AdamW(fused=True) on weights of the row's dtype (fp32 rows: fp32; the rest: bf16)\n");
  std::printf("%-34s %9s %9s %9s %9s %8s %8s %14s %12s\n", "optimizer", "ms/step", "torch ms", "vs torch",
              "floor ms", "x floor", "GB/s", "state bytes", "transient");
  const auto row = [&](const std::string& name, const Paired& t, int64_t moved, int64_t state, int64_t transient,
                       int64_t weightBytes) {
    std::printf("%-34s %9.2f %9.2f %9.2f %9.2f %8.2f %8.2f %14lld %7.1f MiB (%.1f%% of weights)\n", name.c_str(),
                t.ms, t.torchMs, t.ratio, floorMs(moved), t.ms / floorMs(moved),
                static_cast<double>(moved) / (t.ms / 1000) / 1e9, static_cast<long long>(state),
                static_cast<double>(transient) / (1 << 20),
                100.0 * static_cast<double>(transient) / static_cast<double>(weightBytes));
  };
  // torch against copies of itself (the noise) and torch's C++ for-loop AdamW.
  const char* const twinFp32Name = "torch fused fp32 (2nd copy)";
  const char* const twinBf16Name = "torch fused bf16 (2nd copy)";
  const char* const loopName = "torch::optim::AdamW fp32 (C++ loop)";
  if (wanted(twinFp32Name)) {
    TorchFused twin(reference, torch::kFloat32);
    const Paired t = pairedRounds(steps, warmup, device, torchStep, [&] { twin.step(); });
    row(twinFp32Name, t, torchMoved, numel * 8, transientBytes(device, torchStep), numel * 4);
  }
  if (wanted(twinBf16Name)) {
    TorchFused twinBf16(reference, torch::kBFloat16);
    const Paired b = pairedRounds(steps, warmup, device, torchStepBf16, [&] { twinBf16.step(); });
    row(twinBf16Name, b, torchMoved / 2, numel * 4, transientBytes(device, torchStepBf16), numel * 2);
  }
  if (wanted(loopName)) {
    std::vector<torch::Tensor> copy;
    for (const auto& p : reference) {
      copy.push_back(p.detach().clone().set_requires_grad(true));
      copy.back().mutable_grad() = p.grad().clone();
    }
    torch::optim::AdamW loop(copy, torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
    const Paired l = pairedRounds(steps, warmup, device, torchStep, [&] { loop.step(); });
    row(loopName, l, torchMoved, numel * 8, transientBytes(device, [&] { loop.step(); }), numel * 4);
  }

  for (OptimizerMode mode : allOptimizerModes()) {
    // fp32 and bf16: torch's fused form or its for-loop form (adamw.torch_step);
    // the others: the fused kernels or their tensor-op reference (adamw.kernels).
    // bf16's for-loop form twice: its one-pass kernel (adamw.kernels "fused",
    // kernels/torch_forloop_bf16.h) and torch's tensor ops ("reference").
    const bool torchRecipe = mode == OptimizerMode::Fp32AdamW || mode == OptimizerMode::Bf16Plain;
    for (int form = 0; form < 3; ++form) {
      const bool forLoopKernel = form == 2;
      if (forLoopKernel && mode != OptimizerMode::Bf16Plain) continue;
      const StepKernels kernels = form == 1 ? StepKernels::Reference : StepKernels::Fused;
      // none: nothing measured; window: the update-lost window alone (20
      // steps), what most training steps carry; stats: the per-step
      // statistics too, as on a layer-stats step.
      for (int collect = 0; collect < 3; ++collect) {
        const bool stats = collect == 2;
        std::string name = optimizerModeId(mode);
        if (torchRecipe) name += form == 0 ? " torch fused" : form == 1 ? " torch for-loop" : " for-loop kernel";
        else name += kernels == StepKernels::Fused ? " fused" : " reference";
        if (collect == 1) name += " +window";
        if (collect == 2) name += " +window +stats";
        if (!wanted(name, mode)) continue;
        std::vector<TrainableParam> params;
        const bool bf16 = mode != OptimizerMode::Fp32AdamW;
        for (size_t i = 0; i < reference.size(); ++i) {
          torch::Tensor p = reference[i].detach().clone();
          if (bf16) p = p.to(torch::kBFloat16);
          p.set_requires_grad(true);
          p.mutable_grad() = reference[i].grad().to(p.scalar_type());
          params.push_back({"p" + std::to_string(i), "layer" + std::to_string(i / 2), p, {}});
        }
        UpdateStatsOptions statsOptions;
        statsOptions.window = collect > 0 ? 20 : 0;
        AdamWOptions options;
        options.kernels = kernels;
        options.torchStep = form == 0 ? TorchStep::Fused : TorchStep::ForLoop;
        PrecisionAdamW opt(params, mode, options, 0, statsOptions);
        const Paired t = pairedRounds(steps, warmup, device, bf16 ? torchStepBf16 : torchStep,
                                      [&] { opt.step(1e-3, stats); });
        const int64_t transient = transientBytes(device, [&] { opt.step(1e-3, stats); });
        const MemoryBreakdown mem = opt.measuredMemory();
        const int64_t state = mem.moments + mem.master + mem.kahan + mem.scales;
        const int64_t moved = 2 * (mem.weights + state) + mem.gradients;
        row(name, t, moved, state, transient, mem.weights);
      }
    }
  }

  // Quantized moments: torchao's AdamW8bit step, per weight write, bare and
  // with statistics (the moment error among them); AdamW4bit's and
  // AdamWFp8's with stochastic rounding.
  const struct {
    const char* name;
    OptimizerMode mode;
    bool bf16;
    MomentPrecision store;
  } eightBit[] = {{"8bit moments, fp32 weights", OptimizerMode::Bf16Nearest, false, MomentPrecision::Dynamic8bit},
                  {"8bit moments, bf16-nearest", OptimizerMode::Bf16Nearest, true, MomentPrecision::Dynamic8bit},
                  {"8bit moments, bf16-kahan", OptimizerMode::Bf16Kahan, true, MomentPrecision::Dynamic8bit},
                  {"8bit moments, bf16-sr", OptimizerMode::Bf16StochasticRounding, true, MomentPrecision::Dynamic8bit},
                  {"4bit moments, fp32 weights", OptimizerMode::Bf16Nearest, false, MomentPrecision::Dynamic4bit},
                  {"4bit moments, bf16-nearest", OptimizerMode::Bf16Nearest, true, MomentPrecision::Dynamic4bit},
                  {"4bit moments, bf16-kahan", OptimizerMode::Bf16Kahan, true, MomentPrecision::Dynamic4bit},
                  {"4bit moments, bf16-sr", OptimizerMode::Bf16StochasticRounding, true, MomentPrecision::Dynamic4bit},
                  {"fp8 moments, fp32 weights", OptimizerMode::Bf16Nearest, false, MomentPrecision::Fp8},
                  {"fp8 moments, bf16-nearest", OptimizerMode::Bf16Nearest, true, MomentPrecision::Fp8},
                  {"fp8 moments, bf16-kahan", OptimizerMode::Bf16Kahan, true, MomentPrecision::Fp8},
                  {"fp8 moments, bf16-sr", OptimizerMode::Bf16StochasticRounding, true, MomentPrecision::Fp8}};
  for (const auto& r : eightBit) {
    if (!device.is_cpu()) break;  // no CUDA kernel for the quantized store yet
    for (bool stats : {false, true}) {
      const std::string name = std::string(r.name) + (stats ? " +window +stats" : "");
      if (!wanted(name, r.bf16 ? r.mode : OptimizerMode::Fp32AdamW)) continue;
      std::vector<TrainableParam> params;
      for (size_t i = 0; i < reference.size(); ++i) {
        torch::Tensor p = reference[i].detach().clone();
        if (r.bf16) p = p.to(torch::kBFloat16);
        p.set_requires_grad(true);
        p.mutable_grad() = reference[i].grad().to(p.scalar_type());
        params.push_back({"p" + std::to_string(i), "layer" + std::to_string(i / 2), p, {}});
      }
      UpdateStatsOptions statsOptions;
      statsOptions.window = stats ? 20 : 0;
      AdamWOptions options;
      options.moments = r.store;
      PrecisionAdamW opt(params, r.mode, options, 0, statsOptions);
      const Paired t =
          pairedRounds(steps, warmup, device, r.bf16 ? torchStepBf16 : torchStep, [&] { opt.step(1e-3, stats); });
      const int64_t transient = transientBytes(device, [&] { opt.step(1e-3, stats); });
      const MemoryBreakdown mem = opt.measuredMemory();
      const int64_t state = mem.moments + mem.master + mem.kahan + mem.scales;
      row(name, t, 2 * (mem.weights + state) + mem.gradients, state, transient, mem.weights);
    }
  }
  return 0;
}
