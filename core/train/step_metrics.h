#pragma once
// What a training run reports, step by step. Torch-free; crosses the worker
// thread to the UI by value.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/gemm_operand_stats.h"
#include "model/module_tree.h"
#include "precision/decay_effect.h"
#include "precision/memory_breakdown.h"

namespace plab {

struct LayerStepMetrics {
  std::string layer;                // module path
  double roundedAwayFraction = 0;   // rounded-away / intended-non-zero elements
  double updateRatio = 0;           // ||effective|| / ||intended||
};

// The windowed "update lost" of one layer (precision/update_stats.h), on
// the steps that close a window.
struct LayerWindowMetrics {
  // A constructor, not an aggregate: {layer, lost, error} stays valid and
  // warning-free with the optional fields after it.
  LayerWindowMetrics(std::string layer_ = {}, double lost = 0, double error = 0, std::optional<double> se = {},
                     std::optional<double> pending = {}, std::optional<int64_t> elements_ = {})
      : layer(std::move(layer_)), updateLost(lost), updateError(error), updateLostStdError(se),
        updatePending(pending), elements(elements_) {}
  std::string layer;
  double updateLost = 0;            // 1 - <arrived + pending, intended> / ||intended||^2 over the window
  double updateError = 0;           // ||arrived - intended|| / ||intended|| over the window
  // Unset in run folders written before they were recorded:
  std::optional<double> updateLostStdError;  // the figure's standard error (update_stats.h); inf: unknown
  std::optional<double> updatePending;       // Kahan, mixed: share of the intended update still in the buffer/master
  std::optional<int64_t> elements;           // elements the window tracked
  std::optional<double> updateNoise;         // ||arrived + pending - intended|| / ||intended|| (update_stats.h)
  // Quantized moment stores only (LayerWindowStats::momentError): over the
  // window, ||stored - exact|| / ||exact|| of m and of v, exact being the
  // fp32 moment each step computed from the stored one before it.
  std::optional<double> momentErrorM, momentErrorV;
};

// The fp16 modes' gradients in one layer, on every step.
struct LayerFp16GradMetrics {
  std::string layer;
  // Share of the gradient's elements that are exactly zero as autograd
  // handed them over in fp16 (in fp16-mixed: the scaled gradient), all
  // elements counted; zeros that fp32 would also have (e.g. unused
  // embedding rows) are in it.
  double zeroShare = 0;
  // fp16-mixed only: of the non-zero finite elements of the unscaled fp32
  // gradient, the share that would flush to zero written to fp16
  // (fp16WriteCounts): what fp16 without loss scaling would lose.
  std::optional<double> flushShare;
};

struct StepMetrics {
  int64_t step = 0;                 // 1-based optimizer step
  double loss = 0;                  // mean train loss over the accumulated micro-batches
  double gradNorm = 0;              // before clipping
  double lr = 0;
  // Set on the steps that measure them (layer_stats_every), unset on the
  // others: never a repeat of an earlier step's value.
  std::optional<double> roundedAwayFraction;  // over all parameters (bf16 and fp32), on the compute weights
  std::optional<double> updateRatio;
  std::optional<double> updateLost;   // set on steps that close an update window
  std::optional<double> updateError;  // likewise
  std::optional<double> updateLostStdError;  // likewise, from runs that recorded it
  std::optional<double> updatePending;       // likewise, Kahan and mixed only
  std::optional<double> updateNoise;         // likewise, from runs that recorded it
  std::optional<double> momentErrorM, momentErrorV;  // likewise, quantized moment stores only
  double tokensPerSecond = 0;
  double elapsedSeconds = 0;
  std::optional<double> valLoss;    // set on evaluation steps
  MemoryBreakdown memory;           // measured
  std::vector<LayerStepMetrics> layers;  // empty on steps without layer stats
  std::vector<LayerWindowMetrics> windowLayers;  // empty unless the step closes a window
  // fp16-mixed: the scale this step's loss was multiplied by, and whether
  // its gradients held Inf/NaN so that the optimizer step was skipped
  // (GradScaler.step); unset in the other modes.
  std::optional<double> lossScale;
  std::optional<bool> stepSkipped;
  // The fp16 modes, every step: the layers' shares (LayerFp16GradMetrics)
  // and the same over all low-precision layers.
  std::optional<double> gradFp16ZeroShare;
  std::optional<double> gradFp16FlushShare;  // fp16-mixed only
  std::vector<LayerFp16GradMetrics> fp16GradLayers;
  // Runs with GEMM formats other than bf16, on statistics steps: each
  // quantized operand of each such layer (input, weight, output gradient).
  std::vector<GemmOperandStats> gemmLayers;
  // Runs with shadow_gemm_formats, on step 1 and every second window: the input and weight
  // of each bf16 product as each of those formats would quantize them
  // (model/shadow_gemm.h); metrics.jsonl "shadow_gemm", the same fields.
  std::vector<GemmOperandStats> shadowGemm;
  // Runs with shadow_recipes, on window steps: per layer what each bf16
  // write would have lost (advisor/shadow_recipes.h); null otherwise.
  nlohmann::json shadowRecipes;
  // Runs with either shadow, every step: the process CPU time the shadows'
  // own work took in this step (train/step_probes.h); metrics.jsonl
  // "shadow_cpu_seconds".
  std::optional<double> shadowCpuSeconds;
};

struct RunInfo {                    // sent once, before step 1
  std::string runName;
  // When the trainer began (util/utc_time.h: "2026-01-02T09:00:00.123Z"):
  // runs are ordered by it (report/run_order.h); "" in folders from before.
  std::string startedAt;
  std::string device;               // "cpu", "cuda:0"
  std::string modelType;
  std::string tokenizer;            // "byte-level-bpe (/m/tokenizer.json)", "bytes", ...
  // Between documents: {"id", "token", "from", "tokenizer_eos"} (train/model_loading.h).
  nlohmann::json documentSeparator;
  // What transformers only warns about in the model's files, kept (LoadedModel::warnings).
  std::vector<std::string> modelWarnings;
  ModuleNode modules;
  int64_t parameterCount = 0;
  int64_t bf16ParameterCount = 0;  // low-precision parameters: bf16, or fp16 in the fp16 modes
  std::vector<std::string> layers;  // modules with parameters, in model order
  MemoryBreakdown predictedMemory;
  MemoryBreakdown measuredMemory;   // the job's state as one copy (sharded parts summed over the ranks)
  std::vector<MemoryBreakdown> rankMemory;  // what each rank holds, measured on it
  bool optimizerStateSharded = false;       // ZeRO-1: each rank keeps its parameters' optimizer state
  MemoryBreakdown fp32Baseline;
  std::string optimizerMode;        // "bf16-kahan", ...
  std::string momentPrecision;      // what the bf16 layers' moments really are: "fp32", "bf16", "bf16-sr"
  // Weight decay over the whole lr schedule (precision/decay_effect.h), of
  // the bf16 layers' recipe (fp32's when there are none); rounded away =
  // verdict "vanished", kept for older readers.
  bool weightDecayRoundedAway = false;
  DecayAssessment weightDecayEffect;
  int64_t updateWindow = 0;         // K of the update-lost window; 0 = off
  int64_t statisticsBytes = 0;      // diagnostics buffers, not training state
  int64_t tokensPerStep = 0;
  int64_t trainTokens = 0;
  std::string cudaAllocatorSummary; // empty on CPU
  std::string blas;                 // LibTorch's BLAS: "mkl", or the mapped library "OpenBLAS (/usr/lib/...)"
  std::string libtorchVersion;      // "2.13.0"
  bool cudaKernelsLinked = false;   // the fused CUDA optimizer kernels are in this build
  int intraOpThreads = 0;           // LibTorch's intra-op threads during the run
  std::string cpuBf16Gemm;          // how bf16 matrix products ran on the CPU (model/bf16_linear.h); "" on CUDA
  std::string cpuCapability;        // ATen's CPU kernel variant ("DEFAULT", "AVX2", "AVX512"): fp32 results depend on it
  std::string mklCnr;               // MKL's conditional-numerical-reproducibility branch; "" without MKL
  std::string cpuModel;             // "AMD EPYC 9R14 96-Core Processor" (/proc/cpuinfo); "" where unknown
  std::string libc;                 // "glibc 2.36": its libm's expf, tanhf... are part of the fp32 results
};

enum class RunStatus { Completed, Stopped, Failed };

struct RunResult {
  RunStatus status = RunStatus::Completed;
  int worldSize = 1;                // processes of a data-parallel run
  std::vector<MemoryBreakdown> rankMemory;  // what each rank held (RunInfo::rankMemory)
  std::string message;              // the error for Failed (e.g. "loss became NaN at step 12")
  // Failed because of the config or a file it names (a ConfigError): the
  // CLI exits 2 for it, as for any config error. Not written to summary.json.
  bool configError = false;
  int64_t stepsDone = 0;
  double finalLoss = 0;
  std::optional<double> finalValLoss;
  double meanTokensPerSecond = 0;
  double meanRoundedAwayFraction = 0;
  std::optional<double> meanUpdateLost;   // over all completed windows
  std::optional<double> meanUpdateError;
  std::optional<double> meanUpdateLostStdError;  // of meanUpdateLost: sqrt(sum of the windows' se^2) / windows
  std::optional<double> meanUpdateNoise;         // mean over the windows of updateNoise
  std::optional<double> meanMomentErrorM, meanMomentErrorV;  // mean over the windows, quantized moments only
  MemoryBreakdown memory;
  double memorySavedFraction = 0;   // 1 - memory.total / fp32Baseline.total
  // The run's measured peak, over the steps in peakProbeSteps (the second
  // step this process runs, or the only one; the first statistics step
  // after it; the first step after it that closes an update-lost window;
  // util/step_memory.h). Unset where it cannot be measured, and in run
  // folders written before it was recorded.
  // stepPeakBytes: the largest peak of one step above the memory resident
  // when it began: activations, temporaries and the optimizer's transients.
  std::optional<int64_t> stepPeakBytes;
  // trainingPeakBytes: the most the run held for training: the bytes of its
  // weights, gradients and optimizer state at a probed step's start (tensor
  // storage) plus that step's measured peak above its start (stepPeakBytes'
  // figure for that step). The measured "memory saved" compares it with the
  // fp32 run's. Diagnostics buffers (statisticsBytes) are not counted.
  std::optional<int64_t> trainingPeakBytes;
  // processPeakBytes: the whole process's resident memory at the probed
  // steps' peaks (CPU: RSS; CUDA: the allocator's bytes): what the run costs
  // the machine, the runtime, model loading and the data included (in the
  // app, other runs in the same process too). The saving it gives is shown
  // beside trainingPeakBytes' (issue 39: that one leaves out the 175-250 MiB
  // every run holds, so it reads a few points higher).
  std::optional<int64_t> processPeakBytes;
  std::vector<int64_t> peakProbeSteps;
  // fp16-mixed only: steps the loss scaler skipped (Inf/NaN gradients) and
  // the scale after the last step.
  std::optional<int64_t> skippedSteps;
  std::optional<double> finalLossScale;
};

nlohmann::json toJson(const StepMetrics& m);
StepMetrics stepMetricsFromJson(const nlohmann::json& j);
nlohmann::json toJson(const RunInfo& i);
nlohmann::json toJson(const RunResult& r);
std::string runStatusId(RunStatus s);  // "completed", "stopped", "failed"

}  // namespace plab
