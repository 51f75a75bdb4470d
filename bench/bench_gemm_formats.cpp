// Cost of the simulated GEMM formats (issue 22, point 5): one training step
// (forward, backward, bf16-kahan optimizer step) of a GPT-2 built from a
// config (default bench/configs/gpt2-16m.json: 16 M parameters without the
// tied embedding's 12.9 M), all weights bf16, every Linear/Conv1D and the tied
// head in one GEMM format per row, against the same step with bf16 GEMMs.
// Interleaved rounds: each round times one step of every row, the order
// rotating from round to round; "vs bf16" is the median over the rounds of
// each row's time divided by that round's bf16 time, so load that comes and
// goes moves both alike. The row "+stats" is nvfp4 with the precision-debugger
// statistics (gemm_layers) measured on every step; the statistics' cost at a
// cadence of N steps is (stats row - nvfp4 row) / N of a step. "cpu ms" and
// "cpu vs bf16" are the same for the process's CPU time during the step (all
// threads): on a shared machine, where other processes take turns on the
// cores, they move less than wall time (with 1 thread, the step's own work).
//   bench_gemm_formats [config.json] [batch=8] [seq=128] [rounds=8] [warmup=2] [threads=0: OMP_NUM_THREADS or all]
//                      [formats=all: e.g. "mxfp8,nvfp4"; bf16 and the stats row always run]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "formats/gemm_stats.h"
#include "model/model_config.h"
#include "model/model_factory.h"
#include "model/quantized_linear.h"
#include "precision/precision_adamw.h"
#include "train/torch_runtime.h"

using namespace plab;

namespace {

double processCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Row {
  std::string label;
  GemmFormat format = GemmFormat::Bf16;
  bool stats = false;
  std::shared_ptr<CausalLM> model;
  std::unique_ptr<PrecisionAdamW> optimizer;
  GemmStatsCollector collector;
  std::vector<double> ms, ratios, cpuMs, cpuRatios;
  size_t statsEntries = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string configPath = argc > 1 ? argv[1] : "bench/configs/gpt2-16m.json";
  const int64_t batch = argc > 2 ? std::atoll(argv[2]) : 8;
  const int64_t seq = argc > 3 ? std::atoll(argv[3]) : 128;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 8;
  const int warmup = argc > 5 ? std::atoi(argv[5]) : 2;
  const int threads = applyIntraOpThreads(argc > 6 ? std::atoll(argv[6]) : 0);
  const ModelConfig config = ModelConfig::fromFile(configPath);

  std::vector<std::unique_ptr<Row>> rows;
  auto addRow = [&](const std::string& label, GemmFormat f, bool stats) {
    auto row = std::make_unique<Row>();
    row->label = label;
    row->format = f;
    row->stats = stats;
    row->model = createModel(config, 1);
    PrecisionPlan plan;
    plan.preset = PlanPreset::AllBf16;
    plan.gemm_format = f;
    row->optimizer = std::make_unique<PrecisionAdamW>(applyPrecisionPlan(*row->model, plan, OptimizerMode::Bf16Kahan),
                                                      OptimizerMode::Bf16Kahan, AdamWOptions{}, 1);
    if (stats) attachGemmStats(*row->model, &row->collector);
    rows.push_back(std::move(row));
  };
  const std::string only = argc > 7 ? argv[7] : "";
  for (GemmFormat f : allGemmFormats())
    if (f == GemmFormat::Bf16 || only.empty() || ("," + only + ",").find("," + gemmFormatId(f) + ",") != std::string::npos)
      addRow(gemmFormatId(f), f, false);
  addRow("nvfp4+stats", GemmFormat::Nvfp4, true);

  int64_t parameters = 0;
  for (const auto& p : rows[0]->model->parameters()) parameters += p.numel();
  std::printf("%s: %.1f M parameters (tied head), batch %lld x %lld, %d threads, %d rounds after %d warm-up\n",
              configPath.c_str(), parameters / 1e6, static_cast<long long>(batch), static_cast<long long>(seq),
              threads, rounds, warmup);

  torch::manual_seed(2);
  const torch::Tensor ids = torch::randint(config.vocab_size, {batch, seq + 1}, torch::kInt64);
  const torch::Tensor inputs = ids.narrow(1, 0, seq), targets = ids.narrow(1, 1, seq);
  double cpu = 0;  // the last step's CPU time
  auto step = [&](Row& r) {
    const double c0 = processCpuMs();
    const auto t0 = std::chrono::steady_clock::now();
    r.optimizer->zeroGrad();
    if (r.stats) r.collector.arm();
    r.model->loss(inputs, targets).backward();
    if (r.stats) r.statsEntries = r.collector.disarm().size();
    r.optimizer->step(1e-5, false);
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    cpu = processCpuMs() - c0;
    return wall;
  };

  for (int round = 0; round < warmup + rounds; ++round) {
    std::vector<double> t(rows.size()), c(rows.size());
    for (size_t k = 0; k < rows.size(); ++k) {
      const size_t i = (k + round) % rows.size();  // the order rotates
      t[i] = step(*rows[i]);
      c[i] = cpu;
    }
    if (round < warmup) continue;
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i]->ms.push_back(t[i]);
      rows[i]->ratios.push_back(t[i] / t[0]);
      rows[i]->cpuMs.push_back(c[i]);
      rows[i]->cpuRatios.push_back(c[i] / c[0]);
    }
  }
  std::printf("%-12s %10s %9s %10s %12s\n", "gemm format", "step ms", "vs bf16", "cpu ms", "cpu vs bf16");
  for (const auto& r : rows)
    std::printf("%-12s %10.1f %8.2fx %10.1f %11.2fx%s\n", r->label.c_str(), median(r->ms), median(r->ratios),
                median(r->cpuMs), median(r->cpuRatios),
                r->stats ? ("  (" + std::to_string(r->statsEntries) + " operands measured)").c_str() : "");
  double nv = 0;
  for (const auto& r : rows)
    if (r->format == GemmFormat::Nvfp4 && !r->stats) nv = median(r->ms);
  const double withStats = median(rows.back()->ms);
  if (nv == 0) return 0;  // no nvfp4 row to compare the statistics with
  std::printf("statistics: %.1f ms per statistics step = %.1f %% of an nvfp4 step at every step, %.1f %% at the "
              "default cadence (layer_stats_every 5)\n",
              withStats - nv, 100 * (withStats - nv) / nv, 100 * (withStats - nv) / nv / 5);
  return 0;
}
