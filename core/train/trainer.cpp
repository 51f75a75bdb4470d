#include "train/trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <iomanip>
#include <mutex>
#include <random>
#include <sstream>

#include "data/text_dataset.h"
#include "distributed/data_parallel.h"
#include "distributed/rank_agreement.h"
#include "distributed/sharded_adamw.h"
#include "model/bf16_gemm_choice.h"
#include "model/model_factory.h"
#include "model/module_tree.h"
#include "precision/decay_effect.h"
#include "precision/fp16_eps.h"
#include "precision/loss_scale/dynamic_loss_scale.h"
#include "precision/param_recipes.h"
#include "precision/precision_adamw.h"
#include "precision/state_layout.h"
#include "train/checkpoint.h"
#include "train/fp16_gradients.h"
#include "train/lr_schedule.h"
#include "train/metrics_writer.h"
#include "train/model_loading.h"
#include "train/run_peak.h"
#include "train/running_statistics.h"
#include "train/step_probes.h"
#include "util/step_memory.h"
#include "util/atomic_file.h"
#include "train/torch_runtime.h"
#include "util/blas_info.h"
#include "util/errors.h"
#include "util/space_reserve.h"
#include "util/utc_time.h"

// Allocator figures need the CUDA half of LibTorch (c10_cuda); the stats
// API (getDeviceStats, allocated/reserved Stat arrays) exists in 1.13 and 2.x.
#if defined(PLAB_HAVE_CUDA_KERNELS) && defined(__has_include)
#if __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#define PLAB_HAVE_CUDA_ALLOCATOR_STATS 1
#endif
#endif

namespace plab {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
// Pause/stop flags shared between the training thread and the controls.
struct RunControl {
  mutable std::mutex mutex;
  std::condition_variable wake;
  bool pauseRequested = false;
  bool stopRequested = false;
  std::string abortReason;  // set: the stop ends the run Failed with it

  bool stopping() const {
    std::lock_guard<std::mutex> lock(mutex);
    return stopRequested;
  }
  std::string failure() const {
    std::lock_guard<std::mutex> lock(mutex);
    return abortReason;
  }
  // Blocks while paused; returns the seconds spent waiting.
  double waitWhilePaused() {
    std::unique_lock<std::mutex> lock(mutex);
    if (!pauseRequested || stopRequested) return 0;
    const auto start = Clock::now();
    wake.wait(lock, [&] { return !pauseRequested || stopRequested; });
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
};
}  // namespace

struct Trainer::Impl {
  RunConfig config;
  WorldInfo world;
  RunControl control;
};

namespace {

std::string fmt(double v, int precision = 4) {
  std::ostringstream s;
  s << std::setprecision(precision) << v;
  return s.str();
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

// |w| of the bf16 parameters, an even stride through all of them (at most
// about 65,536 values): what the weight-decay assessment rounds the Adam
// updates against (precision/decay_effect.h, UpdateDither).
std::vector<float> bf16WeightMagnitudes(const std::vector<TrainableParam>& params) {
  int64_t total = 0;
  for (const TrainableParam& p : params)
    if (p.param.scalar_type() == torch::kBFloat16) total += p.param.numel();
  std::vector<float> out;
  if (total == 0) return out;
  const int64_t stride = std::max<int64_t>(1, total / 65536);
  for (const TrainableParam& p : params) {
    if (p.param.scalar_type() != torch::kBFloat16) continue;
    const torch::Tensor sample = p.param.detach().reshape({-1}).slice(0, 0, c10::nullopt, stride).abs()
                                     .to(torch::kCPU, torch::kFloat32).contiguous();
    out.insert(out.end(), sample.data_ptr<float>(), sample.data_ptr<float>() + sample.numel());
  }
  return out;
}

// Replaced whole (temporary name + rename): a crash or a full disk never
// leaves an empty or torn summary.
void writeJsonFile(const fs::path& file, const nlohmann::json& j) { writeJsonFileAtomically(file, j); }

// Set aside before the run starts for the files written at its end, so that
// a disk filled by the metrics still gets them; the run is refused without
// it. Measured (default model, --no-pdf): summary.json 0.7 KB, run_info.json
// 9 KB, report.html + charts/*.svg 55 KB after 30 steps, 230 KB after 1500.
constexpr uint64_t kSummaryReserveBytes = 16 * 1024;
constexpr uint64_t kRunInfoReserveBytes = 64 * 1024;
constexpr uint64_t kReportReserveBytes = 512 * 1024;
constexpr uint64_t kFinalFilesReserveBytes = kSummaryReserveBytes + kRunInfoReserveBytes + kReportReserveBytes;
// A file system allocates whole blocks: what one small file may take beyond its bytes.
constexpr uint64_t kBlockSlackBytes = 4096;

torch::Device resolveDevice(const std::string& requested) {
  if (requested == "auto")
    return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  if (requested == "cpu") return torch::Device(torch::kCPU);
  if (const std::string problem = deviceProblem(requested); !problem.empty()) throw ConfigError(problem);
  const int index = requested == "cuda" ? 0 : std::stoi(requested.substr(5));
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::string cudaAllocatorSummary(const torch::Device& device) {
#ifdef PLAB_HAVE_CUDA_ALLOCATOR_STATS
  if (!device.is_cuda()) return "";
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
  // Index 0 is the aggregate over small and large pools.
  std::ostringstream s;
  s << "allocated " << stats.allocated_bytes[0].current / (1024.0 * 1024.0) << " MiB (peak "
    << stats.allocated_bytes[0].peak / (1024.0 * 1024.0) << " MiB), reserved "
    << stats.reserved_bytes[0].current / (1024.0 * 1024.0) << " MiB";
  return s.str();
#else
  return device.is_cuda() ? "allocator statistics unavailable in this build" : "";
#endif
}

double gradNorm(const std::vector<TrainableParam>& params) {
  // Per-tensor norms in fp32, their squares added in fp64 so that bf16 gradients of many
  // layers do not lose the small contributions; one host read for all (a
  // read per parameter would synchronise a GPU once per tensor).
  std::vector<torch::Tensor> sums;
  for (const TrainableParam& p : params) {
    const torch::Tensor& g = p.param.grad();
    if (g.defined()) sums.push_back(at::norm(g, 2, torch::kFloat).square());  // no full-size temporary
  }
  if (sums.empty()) return 0.0;
  return std::sqrt(torch::stack(sums).to(torch::kDouble).sum().item<double>());
}

void scaleGrads(const std::vector<TrainableParam>& params, double factor) {
  torch::NoGradGuard noGrad;
  for (const TrainableParam& p : params) {
    torch::Tensor g = p.param.grad();
    if (g.defined()) g.mul_(factor);
  }
}

// One training run from setup to summary; members keep what was measured
// so a failure mid-run still reports it.
class Session {
 public:
  Session(RunControl& control, const RunConfig& cfg, const WorldInfo& world, const Trainer::Callbacks& cb)
      : control_(control), cfg_(cfg), world_(world), cb_(cb) {}

  void log(const std::string& line) {
    if (cb_.onLog) cb_.onLog(line);
  }

  // Frees the space set aside for summary.json and the report, just before writing them.
  void releaseSummaryReserve() { summaryReserve_.release(); }
  // The other ranks' errors then name this one.
  void announceFailure(const std::string& message) noexcept {
    if (dp_) dp_->announceFailure(message);
  }

  void execute() {
    if (!cfg_.output_dir.empty()) {
      const fs::path dir = cfg_.output_dir;
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) throw IoError("cannot create output folder " + dir.string() + ": " + ec.message());
      // Before anything is written: a disk without room for the final files refuses the run.
      summaryReserve_ = SpaceReserve(dir / ".summary-reserve", kFinalFilesReserveBytes);
      writeJsonFile(dir / "config.json", cfg_.toJson());
      writer_ = std::make_unique<MetricsWriter>(dir);
    }
    setup();
    train();
  }

  void setup() {
    info_.startedAt = utcTimestampNow();  // the runs' start order (report/run_order.h)
    const torch::Device device = resolveDevice(cfg_.device);
    device_ = device;
    // Before joining: every rank refuses the same config alike, none waits for the others.
    checkGlobalBatch(world_, cfg_.batch_size);
    // At the rendezvous, before any collective: the same settings and build on every rank.
    dp_ = std::make_unique<DataParallel>(world_, device,
                                         world_.distributed() ? rankAgreementDocument(cfg_) : nlohmann::json());
    // Before the run's first tensor operation: ATen and MKL choose their code then.
    if (cfg_.reproducible) log(pinReproducibleCpuMath());
    applyIntraOpThreads(cfg_.reproducible ? 1 : cfg_.threads);
    torch::manual_seed(cfg_.seed);
    rng_.seed(cfg_.seed);

    LoadedModel loaded = loadModelForRun(cfg_.model, cfg_.seed, /*allowDownload=*/true,
                                         [this](const std::string& s) { log(s); }, device.str());
    // A resumed run is this model with the checkpoint's weights, loaded
    // below once the checkpoint is checked against it.
    model_ = loaded.model;
    for (const std::string& w : loaded.warnings) log("warning: " + w);
    hfFiles_ = std::move(loaded.hfFiles);
    const int64_t maxPositions = model_->config().max_position_embeddings;
    if (maxPositions > 0 && cfg_.seq_len > maxPositions)
      throw ConfigError("run config: 'seq_len' " + std::to_string(cfg_.seq_len) +
                        " exceeds the model's max positions (" + std::to_string(maxPositions) + ")");
    // With an output folder the tokens live in an unlinked, memory-mapped
    // file there (data/token_store.h); otherwise compact in memory.
    dataset_ = std::make_unique<TextDataset>(cfg_.data, *loaded.tokenizer, cfg_.seq_len, cfg_.output_dir);

    // Move first, then convert: the optimizer's param list (and any fp32
    // source copies) then live on the training device.
    model_->to(device);
    params_ = applyPrecisionPlan(*model_, cfg_.plan, cfg_.mode);
    // The ranks' reductions are sized by these: a model file that differs
    // between machines is named here, not by a collective of mismatched sizes.
    if (world_.distributed()) dp_->agree("parameters", parameterLayoutDocument(params_));
    UpdateStatsOptions statsOptions;
    statsOptions.window = cfg_.update_window;
    optimizer_ = std::make_unique<ShardedAdamW>(params_, cfg_.mode, cfg_.adamw, cfg_.seed, statsOptions, *dp_,
                                                optimizerStateSharding(world_.worldSize));
    for (TrainableParam& p : params_) p.fp32Source = torch::Tensor();  // adopted by the optimizer (its owner's)
    probes_ = std::make_unique<StepProbes>(*model_, cfg_, params_);
    if (modeScalesLoss(cfg_.mode)) {
      LossScaleConfig lossScale;
      lossScale.initScale = cfg_.loss_scale_init;
      lossScale.growthInterval = cfg_.loss_scale_growth_interval;
      scaler_.emplace(lossScale);
    }
    if (!cfg_.resume_from.empty()) {
      nlohmann::json savedScale;
      firstStep_ = resumeFromCheckpoint(cfg_.resume_from, cfg_, *model_, *optimizer_, rng_, &savedScale) + 1;
      if (scaler_) scaler_.emplace(DynamicLossScale::fromJson(savedScale));  // GradScaler.load_state_dict
      log("resuming from " + cfg_.resume_from + " at step " + std::to_string(firstStep_));
    }
    model_->train();

    for (auto& [inputs, targets] : dataset_->valBatches(cfg_.batch_size, cfg_.eval_batches))
      valBatches_.emplace_back(dp_->localRows(inputs).to(device), dp_->localRows(targets).to(device));

    RunInfo& info = info_;
    info.runName = cfg_.name;
    info.device = device.str();
    info.modelType = model_->config().model_type;
    info.tokenizer = loaded.tokenizerDescription;
    info.documentSeparator = loaded.documentSeparator;
    info.modelWarnings = loaded.warnings;
    info.modules = describeModules(*model_);
    for (const TrainableParam& p : params_) {
      info.parameterCount += p.param.numel();
      if (p.param.scalar_type() == torch::kBFloat16 || p.param.scalar_type() == torch::kFloat16)
        info.bf16ParameterCount += p.param.numel();
      if (info.layers.empty() || info.layers.back() != p.layer) {
        bool seen = false;
        for (const auto& l : info.layers) seen = seen || l == p.layer;
        if (!seen) info.layers.push_back(p.layer);
      }
    }
    info.predictedMemory = predictMemory(params_, cfg_.mode, cfg_.adamw);
    info.measuredMemory = optimizer_->measuredMemory();
    info.rankMemory = optimizer_->rankMemory();
    info.optimizerStateSharded = optimizer_->sharded();
    info.fp32Baseline = fp32AdamWBaseline(info.parameterCount);
    info.optimizerMode = optimizerModeId(cfg_.mode);
    info.momentPrecision = momentPrecisionOf(params_, cfg_.mode, cfg_.adamw);
    statistics_.emplace(layersHoldingPending(params_, cfg_.mode));
    // Weight decay at every step of the schedule, in the bf16 layers' recipe
    // (fp32 layers, and every layer without bf16 ones, decay as fp32 does).
    const OptimizerMode decayMode = info.bf16ParameterCount > 0 ? cfg_.mode : OptimizerMode::Fp32AdamW;
    // bf16-nearest rounds each step's decay with its Adam update: the
    // assessment then needs the weights' sizes, not only lr x wd.
    const UpdateDither dither = decayMode == OptimizerMode::Bf16Nearest && cfg_.adamw.weight_decay > 0
                                    ? updateDitherOf(bf16WeightMagnitudes(params_), cfg_.adamw.beta1)
                                    : UpdateDither{};
    info.weightDecayEffect = assessWeightDecay(
        decayMode, cfg_.adamw.weight_decay, cfg_.steps, [this](int64_t s) { return scheduledLr(cfg_, s); }, dither);
    info.weightDecayRoundedAway = info.weightDecayEffect.verdict == DecayVerdict::Vanished;
    info.updateWindow = cfg_.update_window;
    info.statisticsBytes = optimizer_->statisticsBytes();
    info.tokensPerStep = cfg_.batch_size * cfg_.grad_accum * cfg_.seq_len;
    info.trainTokens = dataset_->numTrainBlocks() * cfg_.seq_len;
    info.cudaAllocatorSummary = cudaAllocatorSummary(device);
    // The bf16 products' CPU path, timed on this run's shapes (model/bf16_gemm_choice.h),
    // before describeTorchRuntime names it; not in distributed runs, whose ranks must multiply alike,
    // nor in resumed ones, which take their checkpoint's (resumeFromCheckpoint).
    if (device.is_cpu() && !world_.distributed() && cfg_.resume_from.empty())
      chooseCpuBf16GemmPath(bf16GemmShapes(*model_, cfg_.batch_size * cfg_.seq_len));
    const TorchRuntime runtime = describeTorchRuntime();
    info.libtorchVersion = runtime.libtorchVersion;
    info.cudaKernelsLinked = runtime.cudaKernelsLinked;
    info.intraOpThreads = runtime.intraOpThreads;
    info.blas = runtime.blas;
    info.cpuBf16Gemm = device.is_cpu() ? runtime.cpuBf16Gemm : "";
    info.cpuCapability = runtime.cpuCapability;
    info.mklCnr = runtime.mklReproducibility;
    info.cpuModel = runtime.cpuModel;
    info.libc = runtime.libc;
    if (loadedBlas().slow && device.is_cpu())
      log("warning: LibTorch uses the reference BLAS (" + runtime.blas +
          "): fp32 matrix products are many times slower than with an optimised BLAS");
    log("LibTorch " + runtime.libtorchVersion + ", " + std::to_string(runtime.intraOpThreads) +
        " intra-op threads, CUDA kernels " + (runtime.cudaKernelsLinked ? "linked" : "not linked") +
        (device.is_cpu() && info.bf16ParameterCount > 0 ? ", bf16 matrix products: " + runtime.cpuBf16Gemm : ""));
    if (writer_) {
      const nlohmann::json runInfo = toJson(info);
      summaryReserve_.take(dumpJsonForFile(runInfo).size() + kBlockSlackBytes);  // its share of the reserve
      writeJsonFile(fs::path(cfg_.output_dir) / "run_info.json", runInfo);
    }

    log("run " + cfg_.name + ": " + loaded.description + ", " + info.modelType + ", " +
        std::to_string(info.parameterCount) + " params (" + std::to_string(info.bf16ParameterCount) +
        (modeUsesFp16(cfg_.mode) ? " fp16" : " bf16") + "), mode " + optimizerModeId(cfg_.mode) + ", device " +
        info.device + ", " +
        std::to_string(dataset_->numTrainBlocks()) + " train / " + std::to_string(dataset_->numValBlocks()) +
        " val blocks of " + std::to_string(cfg_.seq_len) + " tokens");
    if (info.weightDecayEffect.verdict != DecayVerdict::Fine)
      log("note: " + describeDecayAssessment(decayMode, info.weightDecayEffect,
                                             torchStepFused(cfg_.adamw.torchStep, /*bf16Weights=*/true)));
    if (const std::string eps = fp16EpsWarning(cfg_.mode, cfg_.adamw); !eps.empty()) log("warning: " + eps);
    if (cb_.onStart) cb_.onStart(info);
  }

  double evaluate() {
    torch::NoGradGuard noGrad;
    model_->eval();
    double sum = 0;
    for (const auto& [inputs, targets] : valBatches_) sum += model_->loss(inputs, targets).item<double>();
    sum = dp_->mean(sum, "the validation loss");
    model_->train();
    return valBatches_.empty() ? std::nan("") : sum / static_cast<double>(valBatches_.size());
  }

  void record(const StepMetrics& m) {
    steps_.push_back(m);
    if (writer_) writer_->write(m);
    if (cb_.onStep) cb_.onStep(m);
  }

  void train() {
    const auto start = Clock::now();
    double pausedSeconds = 0;
    peak_.emplace(firstStep_, cfg_.steps, cfg_.layer_stats_every, cfg_.update_window);
    for (int64_t step = firstStep_; step <= cfg_.steps; ++step) {
      pausedSeconds += control_.waitWhilePaused();
      if (world_.distributed() && testCrashRequested(world_, step)) std::_Exit(3);
      // All ranks stop at the same step, or the others would wait for it;
      // and a run aborted on any rank (abort()) ends failed on every rank,
      // whichever rank's signal came first.
      const std::string aborted = control_.failure();  // before stopping(): abort() sets both
      bool stop = control_.stopping(), abort = !aborted.empty();
      if (world_.distributed()) {
        torch::Tensor requests = torch::tensor({stop ? 1.0 : 0.0, abort ? 1.0 : 0.0}, torch::kDouble).to(device_);
        dp_->sum(requests, "the stop request of step " + std::to_string(step));
        requests = requests.cpu();
        stop = requests[0].item<double>() > 0;
        abort = requests[1].item<double>() > 0;
      }
      if (abort) throw TrainingError(aborted.empty() ? "another rank aborted the run (its --nproc launcher ended)" : aborted);
      if (stop) {
        status_ = RunStatus::Stopped;
        message_ = "stopped by the user after step " + std::to_string(step - 1);
        log("run " + cfg_.name + ": " + message_);
        return;
      }
      StepMetrics m;
      m.step = step;
      m.lr = scheduledLr(cfg_, step);
      // The run's real peak memory, probed on a few steps (train/run_peak.h).
      std::optional<StepMemoryProbe> probe;
      int64_t stateAtStart = 0;  // weights, gradients (still held from the last step) and optimizer state
      if (peak_->probes(step)) {
        stateAtStart = optimizer_->measuredMemory().total();
        probe.emplace(device_.str());
      }
      const auto stepStart = Clock::now();

      optimizer_->zeroGrad();
      // Summed on the device and read once per step, not per micro-batch.
      torch::Tensor lossSum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device_));
      // A statistics step: the optimizer's per-layer figures and the quantized operands'.
      const bool collect = step % cfg_.layer_stats_every == 0 || step == 1;
      probes_->beforeForward(step, collect);
      for (int64_t micro = 0; micro < cfg_.grad_accum; ++micro) {
        auto [inputs, targets] = dataset_->trainBatch(cfg_.batch_size, rng_);  // the same global batch on every rank
        torch::Tensor loss = model_->loss(dp_->localRows(inputs).to(device_), dp_->localRows(targets).to(device_));
        const torch::Tensor share = loss / static_cast<double>(cfg_.grad_accum);
        (scaler_ ? scaler_->scaleLoss(share) : share).backward();  // scaler.scale(loss).backward()
        lossSum += loss.detach().to(torch::kDouble);
      }
      probes_->afterBackward(m);
      m.loss = dp_->mean(lossSum.item<double>() / static_cast<double>(cfg_.grad_accum),
                         "the loss of step " + std::to_string(step));
      dp_->averageGradients(params_, "the gradients of step " + std::to_string(step));
      bool skip = false;
      if (modeUsesFp16(cfg_.mode)) skip = prepareFp16Gradients(params_, scaler_ ? &*scaler_ : nullptr, m);
      m.gradNorm = gradNorm(params_);
      if (!std::isfinite(m.loss)) {
        m.elapsedSeconds = std::chrono::duration<double>(Clock::now() - start).count() - pausedSeconds;
        m.memory = optimizer_->measuredMemory();
        record(m);
        throw TrainingError("loss became " + std::string(std::isnan(m.loss) ? "NaN" : "infinite") +
                            " at step " + std::to_string(step) + " (lr=" + fmt(m.lr) +
                            ", mode=" + optimizerModeId(cfg_.mode) + ")" + fp16EpsCause(cfg_.mode, cfg_.adamw));
      }
      if (!skip && cfg_.grad_clip > 0 && m.gradNorm > cfg_.grad_clip)
        scaleGrads(params_, cfg_.grad_clip / (m.gradNorm + 1e-6));

      // GradScaler.step: a step with Inf/NaN gradients leaves weights,
      // moments and step counts alone; then GradScaler.update.
      if (!skip) probes_->beforeOptimizerStep();
      const OptimizerStepStats stats = skip ? OptimizerStepStats{} : optimizer_->step(m.lr, collect);
      if (!skip) probes_->afterOptimizerStep(m);
      if (scaler_) scaler_->update();
      if (skip) {
        ++skippedSteps_;
        log("step " + std::to_string(step) + ": Inf/NaN in the fp16 gradients at loss scale " + fmt(*m.lossScale) +
            ": step skipped, scale now " + fmt(scaler_->scale()));
      }
      statistics_->add(step, collect && !skip, stats, m);
      m.memory = optimizer_->measuredMemory();
      if (probe)
        if (const auto probed = peak_->add(step, *probe, stateAtStart))
          log("memory at step " + std::to_string(step) + (collect ? " (statistics)" : "") +
              (stats.window.empty() ? "" : " (window)") + ": peak " + fmt(mib(probed->aboveStart), 4) +
              " MiB above the step's start, " + fmt(mib(probed->training), 4) + " MiB held for training");

      const double stepSeconds = std::chrono::duration<double>(Clock::now() - stepStart).count();
      trainSeconds_ += stepSeconds;
      m.tokensPerSecond = stepSeconds > 0 ? double(info_.tokensPerStep) / stepSeconds : 0.0;

      if ((cfg_.eval_every > 0 && step % cfg_.eval_every == 0) || step == cfg_.steps) {
        m.valLoss = evaluate();
        lastValLoss_ = m.valLoss;
        log("step " + std::to_string(step) + "/" + std::to_string(cfg_.steps) + ": train loss " + fmt(m.loss) +
            ", val loss " + fmt(*m.valLoss) + statistics_->logSuffix());
      }
      m.elapsedSeconds = std::chrono::duration<double>(Clock::now() - start).count() - pausedSeconds;
      record(m);

      if (cfg_.checkpoint_every > 0 && step % cfg_.checkpoint_every == 0) saveCheckpoint(step);
    }
    status_ = RunStatus::Completed;
  }

  // Rank 0 writes checkpoint-N: weights, optimizer state, step counts and
  // data sampler; resuming from it continues bit for bit on CPU
  // (train/checkpoint.h). A sharded state is gathered from every rank, so
  // the ranks first agree whether rank 0 writes.
  void saveCheckpoint(int64_t step) {
    bool writes = !cfg_.output_dir.empty();
    if (optimizer_->sharded()) writes = dp_->any(writes, "whether step " + std::to_string(step) + " saves a checkpoint");
    if (!writes) {
      if (step == cfg_.checkpoint_every) log("checkpoint_every is set but output_dir is not: no checkpoints");
    } else if (cfg_.output_dir.empty()) {
      optimizer_->stateTensors();  // this rank's shards, for rank 0 to write
    } else {
      const fs::path dir = fs::path(cfg_.output_dir) / ("checkpoint-" + std::to_string(step));
      // First: trainer_state.json, written last by writeCheckpoint, marks a complete folder.
      writeHfModelFiles(dir, hfFiles_);
      writeCheckpoint(dir, *model_, *optimizer_, cfg_, step, rng_, scaler_ ? scaler_->toJson() : nlohmann::json());
      log("saved checkpoint " + dir.string());
    }
  }

  RunResult result() const {
    RunResult r;
    r.status = status_;
    r.message = message_;
    r.configError = configError_;
    r.worldSize = world_.worldSize;
    // After a step each rank also holds its gradients (none exist at the start).
    r.rankMemory = steps_.empty() ? info_.rankMemory : optimizer_->rankMemory();
    r.stepsDone = steps_.empty() ? 0 : steps_.back().step;
    if (status_ == RunStatus::Failed && !steps_.empty() && !std::isfinite(steps_.back().loss))
      r.stepsDone = steps_.back().step - 1;  // the diverged step did not update the weights
    if (!steps_.empty()) {
      r.finalLoss = steps_.back().loss;
      r.memory = steps_.back().memory;
    } else {
      r.memory = info_.measuredMemory;
    }
    r.finalValLoss = lastValLoss_;
    int64_t tokens = 0;
    for (const StepMetrics& m : steps_)
      if (std::isfinite(m.loss)) tokens += info_.tokensPerStep;
    r.meanTokensPerSecond = trainSeconds_ > 0 ? double(tokens) / trainSeconds_ : 0.0;
    if (peak_) {
      r.stepPeakBytes = peak_->stepPeakBytes();
      r.trainingPeakBytes = peak_->trainingPeakBytes();
      r.processPeakBytes = peak_->processPeakBytes();
      r.peakProbeSteps = peak_->probedSteps();
    }
    if (scaler_) {
      r.skippedSteps = skippedSteps_;
      r.finalLossScale = scaler_->scale();
    }
    if (statistics_) statistics_->fill(r);
    const double baseline = double(info_.fp32Baseline.total());
    r.memorySavedFraction = baseline > 0 ? 1.0 - double(r.memory.total()) / baseline : 0.0;
    return r;
  }

  void fail(const std::string& message, bool configError = false) {
    status_ = RunStatus::Failed;
    message_ = message;
    configError_ = configError;
  }

 private:
  RunControl& control_;
  const RunConfig& cfg_;
  const WorldInfo& world_;
  const Trainer::Callbacks& cb_;
  std::unique_ptr<DataParallel> dp_;  // set up first; a no-op in a world of one
  torch::Device device_{torch::kCPU};
  std::optional<RunPeak> peak_;  // set when training starts
  std::mt19937_64 rng_;
  int64_t firstStep_ = 1;  // > 1 when resumed from a checkpoint
  std::shared_ptr<CausalLM> model_;
  HfModelFiles hfFiles_;  // the tokenizer files every checkpoint gets
  std::unique_ptr<TextDataset> dataset_;
  std::vector<TrainableParam> params_;
  std::unique_ptr<ShardedAdamW> optimizer_;  // ZeRO-1 over the ranks, or one PrecisionAdamW
  std::optional<DynamicLossScale> scaler_;   // fp16-mixed only
  std::unique_ptr<StepProbes> probes_;       // GEMM operand statistics and the advisor's shadows
  int64_t skippedSteps_ = 0;                 // this process's, resumed runs counting from their first step
  std::vector<std::pair<torch::Tensor, torch::Tensor>> valBatches_;
  std::unique_ptr<MetricsWriter> writer_;
  SpaceReserve summaryReserve_;
  RunInfo info_;
  std::vector<StepMetrics> steps_;
  RunStatus status_ = RunStatus::Failed;
  std::string message_;
  bool configError_ = false;
  double trainSeconds_ = 0;
  std::optional<RunningStatistics> statistics_;  // set up with the optimizer
  std::optional<double> lastValLoss_;
};

// LibTorch errors carry a C++ backtrace after the first line; users need
// only the first line.
std::string firstLine(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

Trainer::Trainer(RunConfig config, WorldInfo world) : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->world = std::move(world);
  if (!impl_->world.writesOutputs()) impl_->config.output_dir.clear();  // rank 0 writes the run folder
}
Trainer::~Trainer() = default;

RunResult Trainer::run(const Callbacks& callbacks) {
  Session session(impl_->control, impl_->config, impl_->world, callbacks);
  try {
    session.execute();
  } catch (const ConfigError& e) {  // the config, or a file it names: the CLI's exit 2
    session.fail(firstLine(e.what()), /*configError=*/true);
    session.announceFailure(firstLine(e.what()));
  } catch (const std::exception& e) {
    session.fail(firstLine(e.what()));
    session.announceFailure(firstLine(e.what()));
  } catch (...) {
    session.fail("unknown error");
  }
  RunResult result = session.result();
  session.releaseSummaryReserve();
  try {
    if (!impl_->config.output_dir.empty() && fs::is_directory(impl_->config.output_dir))
      writeJsonFile(fs::path(impl_->config.output_dir) / "summary.json", toJson(result));
  } catch (const std::exception& e) {
    if (result.status != RunStatus::Failed) {
      result.status = RunStatus::Failed;
      result.message = e.what();
    }
  }
  try {
    std::string line = "run " + impl_->config.name + " " + runStatusId(result.status) + " after " +
                       std::to_string(result.stepsDone) + " steps";
    if (result.stepsDone > 0)
      line += ": final loss " + fmt(result.finalLoss) + ", " + fmt(result.meanTokensPerSecond, 5) + " tok/s";
    if (result.skippedSteps)
      line += ", " + std::to_string(*result.skippedSteps) + " steps skipped by the loss scaler (scale now " +
              fmt(*result.finalLossScale) + ")";
    if (!result.message.empty()) line += " (" + result.message + ")";
    session.log(line);
  } catch (...) {
  }
  return result;
}

void Trainer::pause() {
  std::lock_guard<std::mutex> lock(impl_->control.mutex);
  impl_->control.pauseRequested = true;
}

void Trainer::resume() {
  {
    std::lock_guard<std::mutex> lock(impl_->control.mutex);
    impl_->control.pauseRequested = false;
  }
  impl_->control.wake.notify_all();
}

void Trainer::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->control.mutex);
    impl_->control.stopRequested = true;
  }
  impl_->control.wake.notify_all();
}

void Trainer::abort(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(impl_->control.mutex);
    impl_->control.stopRequested = true;
    impl_->control.abortReason = reason.empty() ? "aborted" : reason;
  }
  impl_->control.wake.notify_all();
}

bool Trainer::paused() const {
  std::lock_guard<std::mutex> lock(impl_->control.mutex);
  return impl_->control.pauseRequested;
}

const RunConfig& Trainer::config() const { return impl_->config; }

}  // namespace plab
