#pragma once
// The precision advisor: the cheapest plan (optimizer mode + per-module
// fp32/bf16 precision and recipe) whose short-run validation loss stays within a tolerance
// of fp32's, found by measurement. Three stages:
//   1. shadow: one fp32 run that also measures, per layer, what a bf16
//      nearest, stochastic and Kahan write would lose of each step's update
//      (advisor/shadow_recipes.h), on sampled elements;
//   2. candidates: a handful of plans from least to most state memory built
//      from those figures (advisor/candidate_plans.h);
//   3. confirmation: each candidate and fp32 trained for the same budget on
//      the same batches over the seeds; the cheapest within tolerance wins;
//   4. moment stores: the low-bit stores (8bit, 4bit, fp8) on that plan,
//      confirmed the same way, cheapest first (advisor/moment_stores.h);
//   5. GEMM formats on the plan so chosen.
// Torch-free, so the app can run it on a worker thread.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/gemm_format_id.h"
#include "train/run_config.h"

namespace plab {

struct AdvisorOptions {
  // The run to advise on: model, data, lr, batch, schedule. Its mode and
  // plan are replaced by each candidate's; output_dir is ignored.
  RunConfig base;
  int64_t steps = 0;                       // per run; 0: base.steps
  std::vector<uint64_t> seeds = {1, 2, 3};  // confirmation seeds; the shadow run takes the first
  // Nats; unset: max(kMinTolerance, 2 x the fp32 runs' seed-to-seed spread
  // (max - min of their final validation losses)).
  std::optional<double> tolerance;
  std::string outDir;  // "": no run folders; else DIR/runs/<candidate>-seed<N>/
  // A layer whose shadow nearest write loses more than this share of its
  // intended update (and more than 2 standard errors) is "at risk".
  double riskThreshold = 0.10;
  // GEMM formats measured in shadow (the input and weight of every bf16
  // product) and then tried on the chosen plan, every product in one of
  // them; empty: neither.
  std::vector<GemmFormat> gemmFormats = {GemmFormat::Fp8E4m3, GemmFormat::Mxfp8, GemmFormat::Mxfp4,
                                         GemmFormat::Nvfp4};
  // Quantized moment stores tried, run-wide, on the plan chosen from the
  // candidates: cheapest first, stopping at the first within tolerance
  // (the rest would save less); empty: none.
  std::vector<MomentPrecision> momentStores = {MomentPrecision::Dynamic8bit, MomentPrecision::Dynamic4bit,
                                               MomentPrecision::Fp8};
};

constexpr double kMinTolerance = 0.005;  // nats

struct AdvisorCallbacks {
  std::function<void(int done, int total, const std::string& text)> onProgress;
  std::function<void(const std::string& line)> onLog;
  // Set from any thread to end early: the run in progress stops at its next
  // step and runAdvisor returns what it has (Advice::completed false).
  const std::atomic<bool>* stop = nullptr;
};

// One layer's shadow figures (advisor/shadow_recipes.h), averaged over the
// shadow run's windows; se: the mean's standard error.
struct LayerShadowFigures {
  std::string layer;
  int64_t elements = 0;  // elements the shadow tracked
  double lostNearest = 0, lostNearestSe = 0;
  double lostStochastic = 0, lostStochasticSe = 0;
  double lostKahan = 0, lostKahanSe = 0;
  double belowHalfUlp = 0;  // share of non-zero intended updates smaller than half a bf16 ulp of the weight
};

// What one GEMM format would do to one operand of one layer's product
// (model/shadow_gemm.h), averaged over the shadow run's statistics steps.
struct LayerGemmShadow {
  std::string layer;
  GemmFormat format = GemmFormat::Bf16;
  GemmRole role = GemmRole::Input;  // input or weight
  double underflow = 0;   // share of non-zero elements quantized to zero
  double saturation = 0;  // share clamped at the element type's largest value
  double relError = 0;    // ||Q(x) - x|| / ||x||
  int steps = 0;          // statistics steps averaged
};

struct AdvisorCandidate {
  std::string name;         // "bf16-nearest + fp32 at risk", ...
  std::string description;  // how it was built, one line
  RunConfig config;         // a run config `precision-lab-cli run` accepts (mode + plan)
  std::vector<std::string> fp32Layers;  // modules kept fp32 by overrides
  // Modules given their own recipe (config.plan.recipes): the compensated
  // writes only where the mode's plain write loses too much.
  std::map<std::string, OptimizerMode> layerRecipes;
  // Predicted risk, counted: the bf16 layers whose own write the shadow says
  // loses more than the risk threshold of their update (layerAtRisk).
  int layersAtRisk = 0;
  // Elements whose write is compensated (stochastic rounding draws a random
  // number each, Kahan reads and writes a buffer): the step's extra work.
  int64_t compensatedElements = 0;
  int64_t stateBytes = 0;   // predicted weights + gradients + optimizer state (precision/memory_estimate.h)
  double memorySaved = 0;   // 1 - stateBytes / fp32's
  std::vector<double> valLoss;  // final validation loss per seed (AdvisorOptions::seeds order); empty if not run
  std::optional<double> lossVsFp32;  // mean over seeds of (valLoss - fp32's valLoss), paired
  double ciLow = 0, ciHigh = 0;      // its 95 % Student-t interval (report/paired_gap.h)
  std::string rejected;              // "" for the chosen one (and any not judged yet)
  // Predicted risk: the shadow's update lost of this candidate's write over
  // its bf16 layers, weighted by their parameter counts (fp32 layers lose 0).
  std::optional<double> predictedUpdateLost;
  // Measured on the first seed's run (train/step_metrics.h RunResult): the
  // most it held for training (state + its step's peak above it).
  std::optional<int64_t> trainingPeakBytes;
  // Measured on the first seed's run: the training state as allocated, per
  // tensor (RunResult::memory). A quantized moment store's stateBytes is
  // this figure: the module-tree estimate adds a module's tensors together,
  // and torchao's size rule is per tensor.
  std::optional<int64_t> measuredStateBytes;
  // The confirmation runs' own update lost (mean over seeds of each run's
  // mean over its windows): what the shadow predicted, measured.
  std::optional<double> measuredUpdateLost, measuredUpdateLostSe;
  std::vector<double> tokensPerSecond;  // per seed
  // Quantized moment stores only: the confirmation runs' moment error
  // (RunResult::meanMomentErrorM/V, mean over seeds).
  std::optional<double> momentErrorM, momentErrorV;
  // Quantized moment stores only: per layer, the confirmation runs' moment
  // error as it bears on the update m/√v to first order, err(m) + err(v)/2
  // (mean over the windows and seeds); the layers the store quantized.
  std::map<std::string, double> layerMomentError;
};

// What the advisor decided about one quantized moment store
// (advisor/moment_stores.h), with the figures that decided it.
struct MomentStoreVerdict {
  MomentPrecision store = MomentPrecision::Dynamic8bit;
  bool inPlan = false;     // the chosen plan stores its moments so
  bool confirmed = false;  // its runs were made (else: not tried, `reason` says why)
  int64_t stateBytes = 0;  // the plan it was tried on, with this store (codes + scales)
  int64_t bytesSaved = 0;  // against that plan with its own moments
  double memorySaved = 0;  // 1 - stateBytes / fp32's
  std::optional<double> lossVsFp32;  // paired over the seeds, as a candidate's
  double ciLow = 0, ciHigh = 0;
  std::optional<double> momentErrorM, momentErrorV;
  std::string reason;  // one line: in or out, and the figures
  // The layers the store was put on (PrecisionPlan::moments); empty: every
  // layer (adamw.moments, run-wide).
  std::vector<std::string> layers;
};

struct Advice {
  bool completed = false;
  std::string message;  // why not completed
  int64_t steps = 0;
  std::vector<uint64_t> seeds;
  double tolerance = kMinTolerance;
  std::string toleranceSource;  // "user", or how it was measured
  std::vector<double> fp32ValLoss;  // per seed
  double fp32Spread = 0;            // max - min of fp32ValLoss
  int64_t fp32StateBytes = 0;
  std::vector<LayerShadowFigures> layers;
  std::vector<AdvisorCandidate> candidates;  // least to most state memory
  int chosen = -1;                           // index into candidates; -1: none within tolerance
  // The quantized moment stores: one verdict per store of
  // AdvisorOptions::momentStores; those confirmed are also in `candidates`.
  std::vector<MomentStoreVerdict> momentStores;
  double seconds = 0;
  // Shadow cost: the CPU time the shadow's own work took in the shadow run's
  // steps over the CPU time of the rest of those steps (never negative;
  // e.g. 0.2: the shadow run used 20 % more CPU time than a plain fp32 run).
  std::optional<double> shadowOverhead;
  // The GEMM formats: per layer and operand in shadow, then the chosen plan
  // with every product in each format, confirmed like the candidates (same
  // state memory: the formats change the products, not what is stored).
  std::vector<LayerGemmShadow> gemmLayers;
  std::vector<AdvisorCandidate> gemmCandidates;
  int gemmChosen = -1;  // index into gemmCandidates: the fewest bits within tolerance; -1: none
};

// Stored bits per element of a GEMM format, block scales included (an fp32
// tensor scale is negligible): the advisor prefers the fewest.
double gemmBitsPerElement(GemmFormat f);

// Blocking; call it on a worker thread. Never throws: errors end in
// Advice::completed false with a message.
Advice runAdvisor(const AdvisorOptions& options, const AdvisorCallbacks& callbacks);

// advice.json: {"tolerance", "tolerance_source", "steps", "seeds", "seconds",
// "completed", "message", "fp32": {"val_loss", "spread", "state_bytes"},
// "chosen": <candidate> or null, "chosen_index",
// "candidates": [{"name", "description", "mode", "plan", "config",
//   "fp32_layers", "state_bytes", "memory_saved", "loss_vs_fp32",
//   "loss_vs_fp32_ci", "val_loss", "rejected", "measured_update_lost",
//   "measured_update_lost_se", "tokens_per_second", "predicted_update_lost",
//   "training_peak_bytes", "measured_state_bytes", "layer_recipes": {module: recipe}, "layers_at_risk",
//   "compensated_elements", "moments", "moment_error": {"m", "v"} or null}],
// "moment_stores": [{"store", "in_plan", "confirmed", "state_bytes",
//   "bytes_saved", "memory_saved", "loss_vs_fp32", "loss_vs_fp32_ci",
//   "moment_error": {"m", "v"}, "reason"}],
// "layers": [{"layer", "elements", "update_lost": {"nearest", "stochastic",
//   "kahan"}, "update_lost_se": {...}, "below_half_ulp"}],
// "shadow_overhead", "gemm_layers": [{"layer", "format", "role",
// "underflow", "saturation", "rel_error", "steps"}], "gemm_candidates":
// [<candidate>], "gemm_chosen": <candidate> or null, "gemm_chosen_index"}.
nlohmann::json adviceToJson(const Advice& advice);
Advice adviceFromJson(const nlohmann::json& j);  // throws ConfigError

}  // namespace plab
