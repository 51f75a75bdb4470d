#pragma once
// Everything needed to reproduce a run; serialized as the run's config.json
// and accepted by `precision-lab-cli run`. Torch-free.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/data_config.h"
#include "precision/optimizer_mode.h"
#include "precision/precision_plan.h"

namespace plab {

struct ModelSpec {
  // "embedded": the tiny GPT-2 shipped in resources, pretrained on the
  //             shipped corpus (random init if the binary has no checkpoint)
  // "embedded-init": the same config, random init
  // "config":   random init from the config.json at `path`
  // "folder":   pretrained weights in the folder at `path`
  // "hub":      repo id in `path`, taken from the HF cache or downloaded
  std::string source = "embedded";
  std::string path;
  std::string revision = "main";
  // "auto": the model folder's tokenizer (bytes for models built from a
  // config without one); "bytes": the byte tokenizer even when a folder has
  // its own. A pretrained folder without a tokenizer needs "bytes".
  std::string tokenizer = "auto";
};

// Strict like RunConfig::fromJson (keys source, path, revision, tokenizer).
ModelSpec modelSpecFromJson(const nlohmann::json& j);
nlohmann::json toJson(const ModelSpec& s);

struct RunConfig {
  std::string name = "run";
  ModelSpec model;
  DataConfig data;
  PrecisionPlan plan;
  OptimizerMode mode = OptimizerMode::Bf16Kahan;
  AdamWOptions adamw;
  int64_t steps = 200;
  int64_t batch_size = 8;
  int64_t grad_accum = 1;
  int64_t seq_len = 64;
  std::string lr_schedule = "cosine";  // "constant" | "cosine"
  int64_t warmup_steps = 10;
  double min_lr_ratio = 0.1;           // cosine floor as a fraction of lr
  double grad_clip = 1.0;              // <= 0: off
  int64_t eval_every = 50;             // 0: only at the end
  int64_t eval_batches = 4;
  int64_t layer_stats_every = 5;       // per-step statistics cadence (and step 1); 2-7 % of a step at 1
  int64_t update_window = 20;          // K steps of the update-lost measurement; 0: off
  int64_t checkpoint_every = 0;        // 0: none; checkpoint-N/ holds weights, optimizer and sampler state
  std::string resume_from;             // a checkpoint-N folder of this run to continue from; "": start fresh
  uint64_t seed = 0;
  std::string device = "auto";         // "auto" | "cpu" | "cuda" | "cuda:N"
  int64_t threads = 0;                 // LibTorch intra-op threads; 0: OMP_NUM_THREADS, else one per CPU
  // CPU only: the same fp32 weights on every x86-64 machine, bit for bit (one
  // thread, portable kernels; train/torch_runtime.h: pinReproducibleCpuMath).
  bool reproducible = false;
  std::string output_dir;              // metrics stream here when set
  // fp16-mixed's loss scaler ("loss_scale": {"init_scale", "growth_interval"};
  // GradScaler's defaults; growth x2 and backoff x0.5 are fixed). Written to
  // JSON for fp16-mixed only.
  double loss_scale_init = 65536.0;
  int64_t loss_scale_growth_interval = 2000;
  // Measure per layer what bf16 nearest, stochastic and Kahan writes would
  // lose of the fp32 layers' updates, in shadow (advisor/shadow_recipes.h);
  // metrics.jsonl key "shadow_recipes" on window steps. Off: files unchanged.
  bool shadow_recipes = false;
  // Measure what each of these GEMM formats would do to the input and weight
  // of every product that runs in bf16, in shadow (model/shadow_gemm.h);
  // metrics.jsonl key "shadow_gemm" on step 1 and every 2 x update_window
  // steps. Empty: files unchanged.
  std::vector<GemmFormat> shadow_gemm_formats;

  // Strict: unknown keys and wrong types raise ConfigError naming the key.
  static RunConfig fromJson(const nlohmann::json& j);
  nlohmann::json toJson() const;
};

// A file holds one run object, or {"runs": [...]}, or
// {"base": {...}, "sweep": {"mode": ["fp32","bf16",...]}} expanding the base
// over the listed values (run names get a suffix). At most 1000 runs per
// file: a sweep is counted before it is expanded.
std::vector<RunConfig> loadRunConfigs(const nlohmann::json& j);

// The embedded default run: fine-tuning the embedded pretrained tiny GPT-2
// on the shipped corpus at lr 5e-5, all parameters bf16, mode bf16-kahan.
RunConfig defaultRunConfig();
// The default experiment: that run under every optimizer mode, plus
// bf16-kahan and bf16-sr again with "adamw.moments": "fp32" (names
// "<name>-<mode>[-fp32-moments]"), as a runs file ({"runs": [...]}) for
// loadRunConfigs.
nlohmann::json defaultExperimentJson();

}  // namespace plab
