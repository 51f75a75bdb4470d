#include "model/bf16_gemm_choice.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <tuple>

#include "model/causal_lm.h"
#include "model/layers.h"

namespace plab {
namespace {

void visitModules(torch::nn::Module& m, const std::string& path,
                  const std::function<void(torch::nn::Module&, const std::string&)>& f) {
  f(m, path);
  for (const auto& child : m.named_children())
    visitModules(*child.value(), path.empty() ? child.key() : path + "." + child.key(), f);
}

bool bf16OnCpu(const torch::Tensor& w) {
  return w.defined() && w.dim() == 2 && w.scalar_type() == torch::kBFloat16 && w.device().is_cpu();
}

enum Kind { kNative, kUpcast, kFp32, kKinds };

// Forward and backward of one product cost 3 x 2 x rows x in x out FLOPs;
// a shape above this is timed on a slice of its output features.
constexpr double kMaxFlopsPerCall = 4e8;
// On a shared machine one call in a few takes several times its time (another
// process holds a core; with two threads the OpenMP barrier waits for the
// preempted one): a single round once read the upcast path at 5.9 GFLOP/s
// where torch reads 20-40. Interference only adds time, so each shape keeps
// its fastest call of up to 5 rounds, and never fewer than 2.
constexpr int kRounds = 5;
constexpr int kMinRounds = 2;

struct Timed {
  Bf16GemmShape shape;
  int64_t out = 0;     // the output features timed
  double scale = 1;    // shape.out / out
  torch::Tensor x[2], w[2], g[2];  // [0] bf16, [1] fp32; w is the leaf ([in, out] when transposed)
  std::array<std::vector<double>, kKinds> seconds;
};

// Deterministic operands that draw nothing from torch's generator: a run's
// seeded random stream is the same with or without the measurement.
torch::Tensor filled(int64_t rows, int64_t cols, double amplitude) {
  return torch::linspace(-amplitude, amplitude, rows * cols).reshape({rows, cols});
}

double secondsOf(Kind k, const Timed& t) {
  const int i = k == kFp32 ? 1 : 0;
  const auto start = std::chrono::steady_clock::now();
  const torch::Tensor w = t.shape.transposedWeight ? t.w[i].t() : t.w[i];
  const torch::Tensor y = k == kFp32 ? at::linear(t.x[i], w)
                                     : bf16LinearOnPath(t.x[i], w, {}, k == kNative ? Bf16GemmPath::Native
                                                                                   : Bf16GemmPath::Upcast);
  torch::autograd::grad({y}, {t.x[i], t.w[i]}, {t.g[i]});
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double fastest(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

// Estimated seconds of one step's products per kind.
std::array<double, kKinds> stepSeconds(const std::vector<Timed>& timed) {
  std::array<double, kKinds> s{};
  for (const Timed& t : timed)
    for (int k = 0; k < kKinds; ++k) s[k] += static_cast<double>(t.shape.count) * t.scale * fastest(t.seconds[k]);
  return s;
}

}  // namespace

std::vector<Bf16GemmShape> bf16GemmShapes(torch::nn::Module& model, int64_t rows) {
  std::map<std::tuple<int64_t, int64_t, bool>, int64_t> counts;  // (in, out, transposed) -> count
  std::map<std::string, torch::Tensor> embeddings;
  visitModules(model, "", [&](torch::nn::Module& m, const std::string& path) {
    if (auto* linear = dynamic_cast<LinearImpl*>(&m); linear && bf16OnCpu(linear->weight))
      ++counts[{linear->weight.size(1), linear->weight.size(0), false}];
    if (auto* conv = dynamic_cast<Conv1DImpl*>(&m); conv && bf16OnCpu(conv->weight))
      ++counts[{conv->weight.size(0), conv->weight.size(1), true}];
    if (auto* e = dynamic_cast<EmbeddingImpl*>(&m)) embeddings[path] = e->weight;
  });
  if (auto* lm = dynamic_cast<CausalLM*>(&model)) {
    const auto owner = embeddings.find(lm->tiedHeadOwner());
    if (owner != embeddings.end() && bf16OnCpu(owner->second))
      ++counts[{owner->second.size(1), owner->second.size(0), false}];
  }
  std::vector<Bf16GemmShape> out;
  for (const auto& [key, count] : counts)
    out.push_back({rows, std::get<0>(key), std::get<1>(key), std::get<2>(key), count});
  return out;
}

Bf16GemmMeasurement measureBf16GemmPaths(const std::vector<Bf16GemmShape>& shapes) {
  Bf16GemmMeasurement m;
  if (shapes.empty()) return m;
  const auto start = std::chrono::steady_clock::now();
  torch::AutoGradMode grad(true);
  std::vector<Timed> timed;
  double flops = 0;
  for (const Bf16GemmShape& s : shapes) {
    if (s.rows <= 0 || s.in <= 0 || s.out <= 0 || s.count <= 0) continue;
    Timed t;
    t.shape = s;
    const double perOut = 6.0 * static_cast<double>(s.rows) * static_cast<double>(s.in);
    t.out = std::clamp<int64_t>(static_cast<int64_t>(kMaxFlopsPerCall / perOut), std::min<int64_t>(64, s.out), s.out);
    t.scale = static_cast<double>(s.out) / static_cast<double>(t.out);
    for (int i = 0; i < 2; ++i) {
      const auto dtype = i == 0 ? torch::kBFloat16 : torch::kFloat32;
      t.x[i] = filled(s.rows, s.in, 1.0).to(dtype).requires_grad_();
      t.w[i] = (s.transposedWeight ? filled(s.in, t.out, 0.02) : filled(t.out, s.in, 0.02)).to(dtype).requires_grad_();
      t.g[i] = filled(s.rows, t.out, 1e-3).to(dtype);
    }
    for (int k = 0; k < kKinds; ++k) secondsOf(static_cast<Kind>(k), t);  // warm-up: kernels chosen, buffers allocated
    flops += perOut * static_cast<double>(s.out) * static_cast<double>(s.count);
    timed.push_back(std::move(t));
  }
  for (int round = 0; round < kRounds; ++round) {
    for (Timed& t : timed)
      for (int j = 0; j < kKinds; ++j) {  // the order rotates each round: a load that comes and goes touches all
        const Kind k = static_cast<Kind>((j + round) % kKinds);
        t.seconds[k].push_back(secondsOf(k, t));
      }
    m.rounds = round + 1;
    const std::array<double, kKinds> s = stepSeconds(timed);
    // A CPU without native bf16 instructions: its bf16 kernels run 40-100x slower, no need to time them on.
    if (round + 1 >= kMinRounds && (s[kNative] > 3 * s[kUpcast] || s[kUpcast] > 3 * s[kNative])) break;
  }
  const std::array<double, kKinds> s = stepSeconds(timed);
  const auto gflops = [&](double seconds) { return seconds > 0 ? flops / seconds / 1e9 : 0.0; };
  m.nativeGflops = gflops(s[kNative]);
  m.upcastGflops = gflops(s[kUpcast]);
  m.fp32Gflops = gflops(s[kFp32]);
  m.shapes = static_cast<int64_t>(timed.size());
  m.threads = at::get_num_threads();
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

Bf16GemmPath fasterBf16GemmPath(const Bf16GemmMeasurement& m, Bf16GemmPath incumbent) {
  if (!m.measured()) return incumbent;
  constexpr double kMargin = 1.05;
  if (incumbent == Bf16GemmPath::Native) return m.upcastGflops > kMargin * m.nativeGflops ? Bf16GemmPath::Upcast : incumbent;
  return m.nativeGflops > kMargin * m.upcastGflops ? Bf16GemmPath::Native : incumbent;
}

std::string describeBf16GemmMeasurement(const Bf16GemmMeasurement& m) {
  char buf[240];
  std::snprintf(buf, sizeof buf,
                "native %.1f, upcast %.1f, fp32 %.1f GFLOP/s over %lld shapes, fastest of %d rounds, %d thread%s, %.2f s",
                m.nativeGflops, m.upcastGflops, m.fp32Gflops, static_cast<long long>(m.shapes), m.rounds, m.threads,
                m.threads == 1 ? "" : "s", m.seconds);
  return buf;
}

std::optional<Bf16GemmChoice> chooseCpuBf16GemmPath(const std::vector<Bf16GemmShape>& shapes) {
  if (cpuBf16GemmPathForced() || shapes.empty()) return std::nullopt;
  using Key = std::pair<std::vector<std::array<int64_t, 5>>, int>;
  Key key;
  for (const Bf16GemmShape& s : shapes) key.first.push_back({s.rows, s.in, s.out, s.transposedWeight ? 1 : 0, s.count});
  key.second = at::get_num_threads();
  static std::mutex mutex;
  static std::map<Key, Bf16GemmChoice> chosen;
  std::lock_guard<std::mutex> lock(mutex);
  Bf16GemmChoice choice;
  if (const auto it = chosen.find(key); it != chosen.end()) {
    choice = it->second;
    choice.measuredEarlier = true;
  } else {
    choice.measurement = measureBf16GemmPaths(shapes);
    choice.path = fasterBf16GemmPath(choice.measurement, cpuBf16GemmDefault());
    chosen[key] = choice;
  }
  setChosenCpuBf16GemmPath(choice.path, "chosen by measurement: " + describeBf16GemmMeasurement(choice.measurement) +
                                            (choice.measuredEarlier ? ", measured earlier in this process" : ""));
  return choice;
}

}  // namespace plab
