// runAdvisor: shadow run, candidates, confirmation runs (advisor/advisor.h).
#include "advisor/advisor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

#include "advisor/candidate_choice.h"
#include "advisor/candidate_plans.h"
#include "advisor/moment_stores.h"
#include "report/number_text.h"
#include "report/paired_gap.h"
#include "train/trainer.h"
#include "util/cpu_time.h"

namespace plab {
namespace {

using Clock = std::chrono::steady_clock;

// report/number_text.h's words: no "-0.0000" in a log line either.
std::string fixed(double v, int digits) { return report::fixedText(v, digits); }
std::string signedNats(double v) { return report::signedFixedText(v, 4); }
std::string percent(double v) { return report::percentText(v, 1); }


// A folder name from a candidate's name: letters, digits, '-'.
std::string slug(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (keep) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "run" : out;
}

// One layer's running sums over the shadow run's windows.
struct ShadowSums {
  int64_t elements = 0;
  int windows = 0;
  double lost[3] = {0, 0, 0}, variance[3] = {0, 0, 0};
  double belowHalfUlp = 0;
};

double meanOf(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / double(v.size());
}

double numberOr(const nlohmann::json& j, double fallback) { return j.is_number() ? j.get<double>() : fallback; }

class AdvisorRun {
 public:
  AdvisorRun(const AdvisorOptions& o, const AdvisorCallbacks& cb) : o_(o), cb_(cb) {}

  Advice run() {
    const auto start = Clock::now();
    advice_.steps = o_.steps > 0 ? o_.steps : o_.base.steps;
    advice_.seeds = o_.seeds;
    try {
      if (o_.seeds.empty()) throw std::runtime_error("no seeds to run");
      execute();
    } catch (const std::exception& e) {
      advice_.completed = false;
      advice_.message = e.what();
      log("advisor: " + advice_.message);
    }
    advice_.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return advice_;
  }

 private:
  bool stopping() const { return cb_.stop && cb_.stop->load(); }
  void log(const std::string& line) {
    if (cb_.onLog) cb_.onLog(line);
  }
  void progress(const std::string& text) {
    if (cb_.onProgress) cb_.onProgress(done_, total_, text);
  }

  RunConfig configFor(const RunConfig& plan, uint64_t seed, const std::string& name) const {
    RunConfig c = plan;
    c.name = name;
    c.seed = seed;
    c.steps = advice_.steps;
    c.resume_from.clear();
    c.checkpoint_every = 0;
    c.output_dir = o_.outDir.empty() ? "" : (std::filesystem::path(o_.outDir) / "runs" / name).string();
    return c;
  }

  // One training run in this process; throws when it did not complete.
  RunResult train(const RunConfig& cfg, const std::function<void(const StepMetrics&)>& onStep = {},
                  const std::function<void(const RunInfo&)>& onStart = {}) {
    if (stopping()) throw std::runtime_error("stopped by the user");
    progress("running " + cfg.name);
    Trainer trainer(cfg);
    Trainer::Callbacks callbacks;
    callbacks.onStart = onStart;
    callbacks.onStep = [&](const StepMetrics& m) {
      if (onStep) onStep(m);
      if (stopping()) trainer.stop();
    };
    const RunResult r = trainer.run(callbacks);
    ++done_;
    if (r.status == RunStatus::Stopped) throw std::runtime_error("stopped by the user");
    std::string line = cfg.name + ": " + runStatusId(r.status);
    if (r.finalValLoss) line += ", val loss " + fixed(*r.finalValLoss, 4);
    if (r.meanUpdateLost) line += ", update lost " + percent(*r.meanUpdateLost);
    if (!r.message.empty()) line += " (" + r.message + ")";
    progress(line);
    return r;
  }

  void shadowRun() {
    RunConfig fp32 = o_.base;
    fp32.mode = OptimizerMode::Fp32AdamW;
    fp32.shadow_recipes = true;
    fp32.shadow_gemm_formats = o_.gemmFormats;
    std::map<std::string, ShadowSums> sums;
    std::vector<std::string> order;
    std::map<std::tuple<std::string, GemmFormat, GemmRole>, size_t> gemmIndex;  // into advice_.gemmLayers
    bool haveTree = false;
    // The shadow's cost, in this run's own steps: the CPU time its work took
    // (StepMetrics::shadowCpuSeconds) against the CPU time of the rest of
    // each step, from one step's report to the next. Both parts of every
    // step, so load on the machine weighs on both alike.
    double lastCpu = 0, stepsCpu = 0, shadowCpu = 0;
    const RunResult r = train(
        configFor(fp32, o_.seeds.front(), "fp32-shadow-seed" + std::to_string(o_.seeds.front())),
        [&](const StepMetrics& m) {
          const double now = processCpuSeconds();
          stepsCpu += now - lastCpu;
          lastCpu = now;
          shadowCpu += m.shadowCpuSeconds.value_or(0.0);
          for (const GemmOperandStats& g : m.shadowGemm) addGemmShadow(g, gemmIndex);
          if (!m.shadowRecipes.is_array()) return;
          for (const nlohmann::json& e : m.shadowRecipes) {
            const std::string layer = e.at("layer").get<std::string>();
            if (!sums.count(layer)) order.push_back(layer);
            ShadowSums& s = sums[layer];
            s.elements = e.at("elements").get<int64_t>();
            s.windows += 1;
            const char* keys[] = {"nearest", "stochastic", "kahan"};
            for (int k = 0; k < 3; ++k) {
              s.lost[k] += numberOr(e.at("update_lost").at(keys[k]), 0.0);
              const double se = numberOr(e.at("update_lost_se").at(keys[k]), INFINITY);
              s.variance[k] += se * se;
            }
            s.belowHalfUlp += numberOr(e.at("below_half_ulp"), 0.0);
          }
        },
        [&](const RunInfo& info) {
          tree_ = info.modules;
          haveTree = true;
          lastCpu = processCpuSeconds();
        });
    if (r.status != RunStatus::Completed || !r.finalValLoss)
      throw std::runtime_error("the fp32 shadow run failed: " + r.message);
    if (!haveTree) throw std::runtime_error("the fp32 shadow run reported no model");
    fp32Val_[o_.seeds.front()] = *r.finalValLoss;
    if (stepsCpu > shadowCpu && shadowCpu >= 0) advice_.shadowOverhead = shadowCpu / (stepsCpu - shadowCpu);
    for (const std::string& layer : order) {
      const ShadowSums& s = sums[layer];
      const double n = s.windows;
      LayerShadowFigures f;
      f.layer = layer;
      f.elements = s.elements;
      // The windows' mean; its se taking the windows as independent (as RunResult does).
      f.lostNearest = s.lost[0] / n;
      f.lostStochastic = s.lost[1] / n;
      f.lostKahan = s.lost[2] / n;
      f.lostNearestSe = std::sqrt(s.variance[0]) / n;
      f.lostStochasticSe = std::sqrt(s.variance[1]) / n;
      f.lostKahanSe = std::sqrt(s.variance[2]) / n;
      f.belowHalfUlp = s.belowHalfUlp / n;
      advice_.layers.push_back(std::move(f));
    }
    if (advice_.layers.empty())
      log("advisor: the shadow run closed no window (steps < update_window?): candidates without per-layer figures");
    for (LayerGemmShadow& g : advice_.gemmLayers) {  // sums to means
      g.underflow /= g.steps;
      g.saturation /= g.steps;
      g.relError /= g.steps;
    }
  }

  void addGemmShadow(const GemmOperandStats& g, std::map<std::tuple<std::string, GemmFormat, GemmRole>, size_t>& index) {
    const auto key = std::make_tuple(g.layer, g.format, g.role);
    auto it = index.find(key);
    if (it == index.end()) {
      LayerGemmShadow l;
      l.layer = g.layer;
      l.format = g.format;
      l.role = g.role;
      it = index.emplace(key, advice_.gemmLayers.size()).first;
      advice_.gemmLayers.push_back(l);
    }
    LayerGemmShadow& l = advice_.gemmLayers[it->second];
    l.underflow += g.underflow;
    l.saturation += g.saturation;
    l.relError += g.relError;
    l.steps += 1;
  }

  // A confirmed candidate (no failed run) whose mean paired gap to fp32 is
  // within the tolerance; the reason given to one that is not.
  bool withinTolerance(const AdvisorCandidate& c) const { return plab::withinTolerance(c, advice_.tolerance); }
  std::string overToleranceReason(const AdvisorCandidate& c) const {
    return "loss " + signedNats(c.lossVsFp32.value_or(NAN)) + " nats vs fp32: over the tolerance " +
           fixed(advice_.tolerance, 4) + " by " + fixed(c.lossVsFp32.value_or(NAN) - advice_.tolerance, 4);
  }

  // The chosen plan with every product in each shadowed format, confirmed
  // over the same seeds; the fewest bits per element within tolerance wins.
  void confirmGemmFormats() {
    if (advice_.chosen < 0 || o_.gemmFormats.empty()) {
      total_ = done_;  // nothing to try them on
      progress("done");
      return;
    }
    const AdvisorCandidate& chosen = advice_.candidates[static_cast<size_t>(advice_.chosen)];
    for (GemmFormat f : o_.gemmFormats) {
      AdvisorCandidate c = chosen;
      c.name = chosen.name + ", " + gemmFormatId(f) + " GEMMs";
      c.description = "the chosen plan with every matrix product in " + gemmFormatId(f) + " (simulated)";
      c.config.plan.gemm_format = f;
      c.config.plan.gemm_formats.clear();
      c.valLoss.clear();
      c.tokensPerSecond.clear();
      c.lossVsFp32.reset();
      c.trainingPeakBytes.reset();
      c.measuredUpdateLost.reset();
      c.measuredUpdateLostSe.reset();
      c.rejected.clear();
      confirm(c);
      advice_.gemmCandidates.push_back(std::move(c));
    }
    for (size_t i = 0; i < advice_.gemmCandidates.size(); ++i) {
      const AdvisorCandidate& c = advice_.gemmCandidates[i];
      if (!withinTolerance(c)) continue;
      if (advice_.gemmChosen < 0 ||
          gemmBitsPerElement(c.config.plan.gemm_format) <
              gemmBitsPerElement(advice_.gemmCandidates[static_cast<size_t>(advice_.gemmChosen)].config.plan.gemm_format))
        advice_.gemmChosen = static_cast<int>(i);
    }
    for (size_t i = 0; i < advice_.gemmCandidates.size(); ++i) {
      AdvisorCandidate& c = advice_.gemmCandidates[i];
      if (static_cast<int>(i) == advice_.gemmChosen || !c.rejected.empty()) continue;
      if (!withinTolerance(c))
        c.rejected = overToleranceReason(c);
      else
        c.rejected = "within tolerance, but more bits per element than " +
                     gemmFormatId(advice_.gemmCandidates[static_cast<size_t>(advice_.gemmChosen)].config.plan.gemm_format);
    }
    if (advice_.gemmChosen < 0) {
      log("advisor: no GEMM format keeps the chosen plan within the tolerance: keep bf16 products");
    } else {
      const AdvisorCandidate& c = advice_.gemmCandidates[static_cast<size_t>(advice_.gemmChosen)];
      log("advisor: GEMMs: " + gemmFormatId(c.config.plan.gemm_format) + " keeps the chosen plan within the tolerance (" +
          signedNats(*c.lossVsFp32) + " nats vs fp32)");
    }
  }

  void execute() {
    const size_t seeds = o_.seeds.size();
    total_ = static_cast<int>(seeds + 6 * seeds);  // refined once the candidates are known
    log("advisor: shadow run (fp32 with shadow bf16 writes), " + std::to_string(advice_.steps) + " steps");
    shadowRun();

    RunConfig fp32 = o_.base;
    fp32.mode = OptimizerMode::Fp32AdamW;
    fp32.shadow_recipes = false;
    fp32.shadow_gemm_formats.clear();
    advice_.candidates = buildCandidates(o_.base, tree_, advice_.layers, o_.riskThreshold);
    advice_.fp32StateBytes = fp32StateBytes(tree_, o_.base.adamw);
    total_ = static_cast<int>(seeds + (advice_.candidates.size() + o_.momentStores.size() + o_.gemmFormats.size()) * seeds);
    log("advisor: " + std::to_string(advice_.candidates.size()) + " candidates, " + std::to_string(seeds) +
        " seed(s) each");
    for (size_t i = 1; i < seeds; ++i) {
      const uint64_t seed = o_.seeds[i];
      const RunResult r = train(configFor(fp32, seed, "fp32-seed" + std::to_string(seed)));
      if (r.status != RunStatus::Completed || !r.finalValLoss)
        throw std::runtime_error("the fp32 run of seed " + std::to_string(seed) + " failed: " + r.message);
      fp32Val_[seed] = *r.finalValLoss;
    }
    for (uint64_t seed : o_.seeds) advice_.fp32ValLoss.push_back(fp32Val_.at(seed));
    const auto [lo, hi] = std::minmax_element(advice_.fp32ValLoss.begin(), advice_.fp32ValLoss.end());
    advice_.fp32Spread = *hi - *lo;
    if (o_.tolerance) {
      advice_.tolerance = *o_.tolerance;
      advice_.toleranceSource = "user";
    } else {
      advice_.tolerance = std::max(kMinTolerance, 2 * advice_.fp32Spread);
      advice_.toleranceSource = "max(" + fixed(kMinTolerance, 3) + ", 2 x fp32 spread " + fixed(advice_.fp32Spread, 5) +
                                " over " + std::to_string(seeds) + " seed(s))";
    }
    log("advisor: tolerance " + fixed(advice_.tolerance, 4) + " nats (" + advice_.toleranceSource + ")");

    for (AdvisorCandidate& c : advice_.candidates) confirm(c);
    confirmMomentStores();
    choose();
    confirmGemmFormats();
    advice_.completed = true;
  }

  void confirm(AdvisorCandidate& c) {
    std::vector<double> differences, lost, lostSe, errorM, errorV;
    // Quantized moments: each layer's moment error on the update, err(m) + err(v)/2, over windows and seeds.
    std::map<std::string, std::pair<double, int>> layerError;
    const auto addLayerErrors = [&](const StepMetrics& m) {
      for (const LayerWindowMetrics& w : m.windowLayers)
        if (w.momentErrorM && w.momentErrorV && std::isfinite(*w.momentErrorM) && std::isfinite(*w.momentErrorV)) {
          auto& [sum, count] = layerError[w.layer];
          sum += *w.momentErrorM + *w.momentErrorV / 2;
          count += 1;
        }
    };
    for (uint64_t seed : o_.seeds) {
      const RunResult r =
          train(configFor(c.config, seed, slug(c.name) + "-seed" + std::to_string(seed)), addLayerErrors);
      if (r.status != RunStatus::Completed || !r.finalValLoss) {
        c.rejected = "its run of seed " + std::to_string(seed) + " failed: " + r.message;
        return;
      }
      c.valLoss.push_back(*r.finalValLoss);
      if (!c.trainingPeakBytes && r.trainingPeakBytes) c.trainingPeakBytes = r.trainingPeakBytes;
      if (!c.measuredStateBytes && r.memory.total() > 0) c.measuredStateBytes = r.memory.total();
      c.tokensPerSecond.push_back(r.meanTokensPerSecond);
      differences.push_back(*r.finalValLoss - fp32Val_.at(seed));
      if (r.meanUpdateLost) lost.push_back(*r.meanUpdateLost);
      if (r.meanUpdateLostStdError) lostSe.push_back(*r.meanUpdateLostStdError);
      if (r.meanMomentErrorM) errorM.push_back(*r.meanMomentErrorM);
      if (r.meanMomentErrorV) errorV.push_back(*r.meanMomentErrorV);
    }
    const report::PairedEstimate e = report::pairedEstimate(differences);
    c.lossVsFp32 = e.mean;
    c.ciLow = e.ciLow;
    c.ciHigh = e.ciHigh;
    for (const auto& [layer, sumCount] : layerError) c.layerMomentError[layer] = sumCount.first / sumCount.second;
    if (!errorM.empty()) c.momentErrorM = meanOf(errorM);
    if (!errorV.empty()) c.momentErrorV = meanOf(errorV);
    if (!lost.empty()) {
      double sum = 0, var = 0;
      for (double v : lost) sum += v;
      for (double v : lostSe) var += v * v;
      c.measuredUpdateLost = sum / double(lost.size());
      if (lostSe.size() == lost.size()) c.measuredUpdateLostSe = std::sqrt(var) / double(lost.size());
    }
  }

  // The quantized moment stores on the plan the candidates alone would give
  // (advisor/moment_stores.h): cheapest first, each confirmed like a
  // candidate unless a store already within tolerance saves at least as
  // much; the confirmed ones join the candidates, so the choice below
  // takes one only where its measured gap is within the tolerance.
  void confirmMomentStores() {
    if (o_.momentStores.empty()) return;
    const size_t seeds = o_.seeds.size();
    std::vector<AdvisorCandidate> scratch = advice_.candidates;
    const int best = chooseCandidate(scratch, advice_.tolerance);
    if (best < 0) {
      for (MomentPrecision s : o_.momentStores) {
        MomentStoreVerdict v;
        v.store = s;
        v.reason = "not tried: no candidate plan is within the tolerance to put it on";
        advice_.momentStores.push_back(v);
      }
      total_ -= static_cast<int>(o_.momentStores.size() * seeds);
      return;
    }
    momentPlan_ = scratch[static_cast<size_t>(best)];
    log("advisor: moment stores on " + momentPlan_.name + " (" + percent(momentPlan_.memorySaved) +
        " saved), cheapest first");
    momentVariants_ = tryMomentStores(momentPlan_, o_.momentStores, tree_, advice_.fp32StateBytes, advice_.tolerance,
                                      [&](AdvisorCandidate& v) {
                                        // A store on part of the model: runs beyond the count above.
                                        if (!v.config.plan.moments.empty()) {
                                          total_ += static_cast<int>(seeds);
                                          log("advisor: " + v.name + ": " + v.description);
                                        }
                                        confirm(v);
                                      });
    for (const AdvisorCandidate& v : momentVariants_) {
      if (!v.config.plan.moments.empty()) {  // counted when run
        if (v.rejected.rfind("not tried", 0) != 0) advice_.candidates.push_back(v);
        continue;
      }
      if (v.rejected.rfind("not tried", 0) == 0) {  // momentStoreSkipReason: no runs made
        total_ -= static_cast<int>(seeds);
        continue;
      }
      advice_.candidates.push_back(v);
    }
    std::stable_sort(advice_.candidates.begin(), advice_.candidates.end(),
                     [](const AdvisorCandidate& a, const AdvisorCandidate& b) { return a.stateBytes < b.stateBytes; });
  }

  // After the choice: each store's verdict, with the reason the choice gave it.
  void judgeMomentStores() {
    if (momentVariants_.empty()) return;
    advice_.momentStores =
        momentStoreVerdicts(momentPlan_, momentVariants_, advice_.candidates, advice_.chosen, advice_.tolerance);
  }

  // The least state memory within tolerance; among equally cheap plans the
  // lower loss (advisor/candidate_choice.h).
  void choose() {
    advice_.chosen = chooseCandidate(advice_.candidates, advice_.tolerance);
    judgeMomentStores();
    if (advice_.chosen < 0) {
      advice_.message = "no candidate stays within the tolerance: keep fp32 (or mixed) for this run";
      log("advisor: " + advice_.message);
    } else {
      const AdvisorCandidate& c = advice_.candidates[static_cast<size_t>(advice_.chosen)];
      log("advisor: chosen " + c.name + ": saves " + percent(c.memorySaved) + " of fp32's state, loss " +
          signedNats(*c.lossVsFp32) + " nats vs fp32 (tolerance " + fixed(advice_.tolerance, 4) + "); compute: " +
          computeCostText(c));
    }
    for (const MomentStoreVerdict& v : advice_.momentStores) log("advisor: " + momentStoreVerdictLine(v));
  }

  const AdvisorOptions& o_;
  const AdvisorCallbacks& cb_;
  Advice advice_;
  ModuleNode tree_;
  AdvisorCandidate momentPlan_;                  // the plan the moment stores were tried on
  std::vector<AdvisorCandidate> momentVariants_;  // it with each store, cheapest first
  std::map<uint64_t, double> fp32Val_;
  int done_ = 0, total_ = 0;
};

}  // namespace

double gemmBitsPerElement(GemmFormat f) {
  switch (f) {
    case GemmFormat::Bf16: return 16;
    case GemmFormat::Fp8E4m3:
    case GemmFormat::Fp8E5m2: return 8;
    case GemmFormat::Mxfp8: return 8 + 8.0 / 32;
    case GemmFormat::Mxfp4: return 4 + 8.0 / 32;
    case GemmFormat::Nvfp4: return 4 + 8.0 / 16;
  }
  return 16;
}

Advice runAdvisor(const AdvisorOptions& options, const AdvisorCallbacks& callbacks) {
  try {
    return AdvisorRun(options, callbacks).run();
  } catch (const std::exception& e) {  // e.g. allocation failures outside a run
    Advice a;
    a.message = e.what();
    return a;
  }
}

}  // namespace plab
