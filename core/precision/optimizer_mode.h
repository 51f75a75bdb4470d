#pragma once
// The optimizer recipes, their moment precision and the AdamW
// hyper-parameters. Torch-free. docs/modes.md's mode table says exactly what each
// recipe computes; keep the two in step.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plab {

enum class OptimizerMode {
  Fp32AdamW,               // "fp32": everything fp32 (plan ignored), == torch::optim::AdamW
  Bf16Plain,               // "bf16": torch::optim::AdamW on bf16 params, every operation in bf16
  Bf16Nearest,             // "bf16-nearest": fp32 update math, one round-to-nearest write
  Bf16Kahan,               // "bf16-kahan": fp32 update math, Kahan-compensated write (bf16 buffer)
  Bf16StochasticRounding,  // "bf16-sr": fp32 update math, stochastically rounded write
  Fp32MasterWeights,       // "mixed": fp32 master copy in the optimizer, bf16 compute params
  // The fp16 recipes: the plan's low-precision layers hold fp16 instead of bf16.
  Fp16Plain,               // "fp16": torch's AdamW on fp16 params and fp16 state (model.half()), no loss scaling
  Fp16Mixed,               // "fp16-mixed": fp32 master copy and moments, fp16 compute params, dynamic loss scaling
};

// How AdamW's m and v of bf16 parameters are stored. fp32 parameters keep
// fp32 moments (except under "8bit", which takes them too, as torchao); "fp32" and "mixed" keep fp32 moments everywhere, and
// "bf16" keeps bf16 moments (torch's state follows the parameter's dtype).
enum class MomentPrecision {
  ModeDefault,     // "default": the recipe's own choice (momentPrecisionDefault)
  Fp32,            // "fp32": 8 bytes per parameter
  Bf16Nearest,     // "bf16": 4 bytes; 0.999 * v rounds back to v, so v stops decaying
  Bf16Stochastic,  // "bf16-sr": 4 bytes, stochastically rounded writes (decay survives on average)
  Fp16,            // "fp16": 4 bytes, the "fp16" recipe's own (torch's state follows the fp16 param); not selectable
  // "8bit": torchao's AdamW8bit store and step: uint8 dynamic-tree codes with
  // an fp32 scale per 256 elements (2.03 bytes per parameter), the fp32 and
  // bf16 parameters of the recipe alike; a tensor under 4096 elements or
  // not a whole number of blocks keeps its moments in its own dtype, as
  // torchao does (state_layout.h, precision/kernels/quantized_adamw.h).
  Dynamic8bit,
  // "4bit": torchao's AdamW4bit store and step: 4-bit codes, two per byte,
  // with an fp32 scale per 128 elements (1.06 bytes per parameter for m and
  // v together); m on a 16-value dynamic-tree code (signed), v on the linear
  // code 1/16 .. 1 (no zero, lpmm's second-moment map); the same size rule
  // with 128-element blocks.
  Dynamic4bit,
  // "fp8": torchao's AdamWFp8 store and step: m and v as fp8 e4m3 codes
  // with an fp32 scale per 256 elements (the block's largest magnitude /
  // 448), 2.03 bytes per parameter; the 8-bit size rule.
  Fp8,
};

// The bf16 story's modes: the default experiment, bench, the app's mode list.
const std::vector<OptimizerMode>& allOptimizerModes();
// The fp16 recipes ("fp16", "fp16-mixed"): chosen by id (CLI --mode, a run config).
const std::vector<OptimizerMode>& fp16OptimizerModes();
// Both lists, in that order: every mode a run config or --mode accepts.
const std::vector<OptimizerMode>& everyOptimizerMode();
// Whether the plan's low-precision layers hold fp16 (else bf16) under this mode.
bool modeUsesFp16(OptimizerMode m);
// Whether a plan may give one subtree this recipe (PrecisionPlan::recipes):
// the bf16 recipes ("bf16", "bf16-nearest", "bf16-kahan", "bf16-sr",
// "mixed"), which differ only in how a bf16 layer's step is stored.
bool modeIsLayerRecipe(OptimizerMode m);
// Whether the mode scales the loss (torch.amp.GradScaler's semantics, precision/loss_scale/).
bool modeScalesLoss(OptimizerMode m);
std::string optimizerModeId(OptimizerMode m);       // "fp32", "bf16", "bf16-nearest", ...
std::string optimizerModeLabel(OptimizerMode m);    // "fp32 AdamW", "bf16 AdamW (torch, naive)", ...
std::string optimizerModeSummary(OptimizerMode m);  // one sentence: what the recipe computes
OptimizerMode optimizerModeFromId(const std::string& id);  // throws ConfigError listing valid ids

const std::vector<MomentPrecision>& allMomentPrecisions();
std::string momentPrecisionId(MomentPrecision p);  // "default", "fp32", "bf16", "bf16-sr", "fp16"
MomentPrecision momentPrecisionFromId(const std::string& id);  // throws ConfigError
// Whether the moment setting changes anything for this mode.
bool modeHasMomentChoice(OptimizerMode m);
// Whether the store quantizes the moments block-wise (torchao's optimizer
// states: "8bit", "4bit", "fp8"), whose moment error a run measures (docs/metrics.md).
bool momentsQuantized(MomentPrecision p);
// The choice a recipe makes when the config says "default"; chosen by the
// moment-precision measurements in tests/core/test_moment_precision.cpp.
MomentPrecision momentPrecisionDefault(OptimizerMode m);

// How the bf16 write rules and "mixed" are computed: "fused" runs one pass
// per element (precision/kernels/, CPU and CUDA twins); "reference" runs the
// tensor-op functions of precision/steps/ (slower, several full-size fp32
// temporaries). "fp32" and "bf16" are torch's own arithmetic either way;
// "bf16"'s for-loop form runs in one pass (kernels/torch_forloop_bf16.h,
// the same bits) unless this is "reference".
enum class StepKernels { Fused, Reference };
std::string stepKernelsId(StepKernels k);                 // "fused", "reference"
StepKernels stepKernelsFromId(const std::string& id);     // throws ConfigError

// Which of torch's AdamW paths "fp32" and "bf16" reproduce bit for bit (and
// fp32 layers under every mode): "fused" is torch.optim.AdamW(fused=True)
// on the CPU, one pass per element (precision/kernels/torch_fused_adamw.h);
// "for-loop" is torch's default single-tensor form (foreach=False;
// foreach=True gives the same bits on fp32 and bf16), several tensor
// passes. "default": fused for fp32 weights (the same recipe, faster), the
// for-loop form for bf16 ones ("bf16" is the naive recipe whose every
// operation rounds to bf16; fused, torch computes in fp32 and rounds once,
// nearly "bf16-nearest"). Where the fused kernel does not run (fp16
// weights, CUDA, a non-contiguous tensor) the for-loop form does.
enum class TorchStep { ModeDefault, Fused, ForLoop };
std::string torchStepId(TorchStep t);              // "default", "fused", "for-loop"
TorchStep torchStepFromId(const std::string& id);  // throws ConfigError
// Whether weights of that kind (bf16 or fp32) take the fused form.
bool torchStepFused(TorchStep t, bool bf16Weights);

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
  // Moments of bf16 layers in the recipes that offer a choice
  // (bf16-nearest, bf16-kahan, bf16-sr); ignored by the others.
  MomentPrecision moments = MomentPrecision::ModeDefault;
  StepKernels kernels = StepKernels::Fused;
  TorchStep torchStep = TorchStep::ModeDefault;
};

nlohmann::json toJson(const AdamWOptions& o);
// Strict; also accepts the older "bf16_moments": true/false (= "bf16"/"fp32").
AdamWOptions adamWOptionsFromJson(const nlohmann::json& j);  // throws ConfigError

// Whether a pure-decay step at the peak lr keeps less than 10 % of the
// decay asked for (decayStepEffect in precision/decay_effect.h: in "bf16"
// and "bf16-nearest" once lr * wd < 2^-9, in "bf16-kahan" below about 5e-6).
// assessWeightDecay covers the whole schedule and distorted decay too.
bool weightDecayRoundedAway(OptimizerMode mode, const AdamWOptions& o);

}  // namespace plab
