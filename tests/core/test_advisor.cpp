// The precision advisor (core/advisor/): its shadow figures read like real
// runs of each recipe, it finds the layers a constructed model makes bf16
// lose, and advice.json round-trips.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <algorithm>
#include <fstream>
#include <atomic>
#include <map>
#include <tuple>

#include "advisor/advice_report.h"
#include "advisor/advisor.h"
#include "advisor/candidate_choice.h"
#include "advisor/candidate_plans.h"
#include "model/model_config.h"
#include "model/model_factory.h"
#include "support/seed_spread.h"
#include "support/small_runs.h"
#include "support/test_registry.h"
#include "support/tiny_models.h"
#include "train/trainer.h"
#include "util/errors.h"
#include "util/json_file.h"

namespace test_advisor {

using namespace plab;
namespace fs = std::filesystem;

namespace {

const uint64_t kSeeds[] = {1, 2, 3};

// Per layer, the mean over a run's windows of a figure.
using LayerMeans = std::map<std::string, double>;

struct Means {
  std::map<std::string, double> sum;
  std::map<std::string, int> count;
  void add(const std::string& layer, double v) {
    sum[layer] += v;
    count[layer] += 1;
  }
  LayerMeans means() const {
    LayerMeans out;
    for (const auto& [layer, s] : sum) out[layer] = s / count.at(layer);
    return out;
  }
};

double meanOver(const LayerMeans& m) {
  double s = 0;
  for (const auto& [layer, v] : m) s += v;
  return m.empty() ? NAN : s / double(m.size());
}

// The default fine-tune, shortened: 40 steps of 4 x 32 tokens, windows of 10.
RunConfig shortFineTune(OptimizerMode mode, uint64_t seed) {
  RunConfig c = test::smallTrainingRun(mode, 40);
  c.seq_len = 32;
  c.update_window = 10;
  c.layer_stats_every = 10;
  c.eval_every = 0;
  c.eval_batches = 2;
  c.seed = seed;
  return c;
}

// The shadow run's per-layer means of one write (key "nearest", ...).
std::map<std::string, LayerMeans> shadowMeans(uint64_t seed) {
  RunConfig c = shortFineTune(OptimizerMode::Fp32AdamW, seed);
  c.shadow_recipes = true;
  Trainer t(c);
  std::map<std::string, Means> means;
  Trainer::Callbacks cb;
  cb.onStep = [&](const StepMetrics& m) {
    if (!m.shadowRecipes.is_array()) return;
    for (const auto& e : m.shadowRecipes)
      for (const char* key : {"nearest", "stochastic", "kahan"})
        means[key].add(e.at("layer").get<std::string>(), e.at("update_lost").at(key).get<double>());
  };
  const RunResult r = t.run(cb);
  if (r.status != RunStatus::Completed) qFatal("shadow run failed: %s", r.message.c_str());
  std::map<std::string, LayerMeans> out;
  for (const auto& [key, m] : means) out[key] = m.means();
  return out;
}

LayerMeans realMeans(OptimizerMode mode, uint64_t seed) {
  Trainer t(shortFineTune(mode, seed));
  Means means;
  Trainer::Callbacks cb;
  cb.onStep = [&](const StepMetrics& m) {
    for (const LayerWindowMetrics& w : m.windowLayers) means.add(w.layer, w.updateLost);
  };
  const RunResult r = t.run(cb);
  if (r.status != RunStatus::Completed) qFatal("run failed: %s", r.message.c_str());
  return means.means();
}

// A tiny GPT-2 (byte vocabulary) whose token and position embeddings carry
// a constant offset of 16 on every element: the model computes exactly the
// same function (every path from the embeddings goes through a LayerNorm,
// which removes a constant across features, and the tied head's logits
// shift by the same amount for every token), but their bf16 ulp is 1/16 to
// 1/8, so Adam's updates of at most lr = 1e-2 are far below half an ulp
// there and large against the ulp of every other layer.
fs::path constructedModel(const fs::path& dir) {
  nlohmann::json config = {{"model_type", "gpt2"},       {"architectures", {"GPT2LMHeadModel"}},
                           {"vocab_size", 257},          {"n_embd", 32},
                           {"n_layer", 2},               {"n_head", 4},
                           {"n_positions", 64},          {"n_inner", nullptr},
                           {"layer_norm_epsilon", 1e-5}, {"activation_function", "gelu_new"},
                           {"initializer_range", 0.02},  {"bos_token_id", 256},
                           {"eos_token_id", 256}};
  const auto model = createModel(ModelConfig::fromJson(config), 5);
  {
    torch::NoGradGuard noGrad;
    for (auto& p : model->named_parameters()) {
      const std::string& name = p.key();
      if (name == "transformer.wte.weight" || name == "transformer.wpe.weight") p.value().add_(16.0);
      // LayerNorm scales of 1 would have an ulp of 1/128, close to lr: at
      // 1/4 it is 1/512, far below it.
      const bool norm = name.find("ln_") != std::string::npos && name.size() > 7 &&
                        name.compare(name.size() - 7, 7, ".weight") == 0;
      if (norm) p.value().fill_(0.25);
    }
  }
  saveCheckpoint(*model, dir);
  return dir;
}

}  // namespace

class TestAdvisor : public QObject {
  Q_OBJECT

 private slots:
  void adviceJsonRoundTrips() {
    Advice a;
    a.completed = true;
    a.steps = 40;
    a.seeds = {1, 2, 3};
    a.tolerance = 0.005;
    a.toleranceSource = "user";
    a.fp32ValLoss = {2.0, 2.001, 1.999};
    a.fp32Spread = 0.002;
    a.fp32StateBytes = 1600;
    AdvisorCandidate c;
    c.name = "bf16-sr";
    c.config = defaultRunConfig();
    c.config.mode = OptimizerMode::Bf16StochasticRounding;
    c.config.plan.setSubtree("transformer.wte", LayerPrecision::Fp32);
    c.fp32Layers = {"transformer.wte"};
    c.stateBytes = 800;
    c.memorySaved = 0.5;
    c.valLoss = {2.001, 2.002, 2.0};
    c.lossVsFp32 = 0.001;
    c.ciLow = -0.001;
    c.ciHigh = 0.003;
    c.measuredUpdateLost = 0.01;
    c.predictedUpdateLost = 0.02;
    c.trainingPeakBytes = 12345;
    c.config.plan.setRecipeSubtree("transformer.h.0", OptimizerMode::Bf16Kahan);
    c.layerRecipes = c.config.plan.recipes;
    c.layersAtRisk = 1;
    c.compensatedElements = 4096;
    a.candidates = {c, c};
    a.candidates[1].rejected = "over";
    a.chosen = 0;
    a.layers.push_back({"transformer.wte", 100, 0.9, 0.01, 0.02, 0.03, 0.0, 0.001, 0.95});
    a.gemmCandidates = {c, c};
    a.gemmCandidates[0].config.plan.gemm_format = GemmFormat::Mxfp8;
    a.gemmCandidates[1].config.plan.gemm_format = GemmFormat::Nvfp4;
    a.gemmCandidates[1].rejected = "over";
    a.gemmChosen = 0;
    a.gemmLayers.push_back({"transformer.h.0.mlp.c_fc", GemmFormat::Nvfp4, GemmRole::Weight, 0.07, 0.001, 0.09, 3});
    const nlohmann::json j = adviceToJson(a);
    QCOMPARE(j.at("gemm_chosen").at("plan").at("gemm_format").get<std::string>(), std::string("mxfp8"));
    QCOMPARE(j.at("gemm_layers").at(0).at("role").get<std::string>(), std::string("weight"));
    QCOMPARE(j.at("tolerance").get<double>(), 0.005);
    QCOMPARE(j.at("chosen").at("memory_saved").get<double>(), 0.5);
    QCOMPARE(j.at("chosen").at("loss_vs_fp32").get<double>(), 0.001);
    QCOMPARE(j.at("candidates").size(), size_t(2));
    const Advice b = adviceFromJson(nlohmann::json::parse(j.dump()));
    QCOMPARE(adviceToJson(b), j);
    QVERIFY(b.candidates[0].config.plan.overrides.at("transformer.wte") == LayerPrecision::Fp32);
    QVERIFY(b.candidates[0].layerRecipes.at("transformer.h.0") == OptimizerMode::Bf16Kahan);
    QCOMPARE(j.at("chosen").at("layer_recipes").at("transformer.h.0").get<std::string>(), std::string("bf16-kahan"));
    QCOMPARE(b.candidates[0].layersAtRisk, 1);
    QCOMPARE(b.candidates[0].compensatedElements, int64_t(4096));
    QVERIFY_THROWS_EXCEPTION(ConfigError, adviceFromJson(nlohmann::json::object()));
    nlohmann::json badRole = j;
    badRole["gemm_layers"][0]["role"] = "grad_output";  // never shadowed
    QVERIFY_THROWS_EXCEPTION(ConfigError, adviceFromJson(badRole));
    nlohmann::json badIndex = j;
    badIndex["gemm_chosen_index"] = 7;
    QVERIFY_THROWS_EXCEPTION(ConfigError, adviceFromJson(badIndex));
  }

  // A loss difference that rounds to zero reads "0.0000" in report.html, the
  // frontier and the log lines: never "-0.0000" (nor "+-0.0000").
  void adviceTextsHaveNoNegativeZero() {
    Advice a;
    a.completed = true;
    a.seeds = {1, 2};
    a.tolerance = 0.005;
    a.fp32ValLoss = {2.0, 2.1};
    AdvisorCandidate c;
    c.name = "bf16-sr";
    c.config.mode = OptimizerMode::Bf16StochasticRounding;
    c.stateBytes = 500;
    c.memorySaved = 0.5;
    c.valLoss = {1.99997, 2.09997};
    c.lossVsFp32 = -0.00003;
    c.ciLow = -0.00004;
    c.ciHigh = -0.00002;
    c.measuredUpdateLost = -4e-7;
    a.candidates = {c};
    a.chosen = 0;
    a.shadowOverhead = 0.0;
    const std::string html = adviceReportHtml(a);
    QVERIFY(html.find("-0.0000") == std::string::npos && html.find("+-") == std::string::npos &&
            html.find("-0.0 %") == std::string::npos);
    QVERIFY(html.find("final validation loss 0.0000 nats vs fp32 (95 % CI 0.0000 to 0.0000") != std::string::npos);
  }

  // Among plans within tolerance that store the same bytes, the lower loss
  // wins; compute (compensated elements, tokens/s) is reported, not used to
  // choose. The 32k-vocab case, constructed: nearest writes with
  // stochastic rounding on the layers at risk (+0.0112 nats, CI excluding 0,
  // fewer compensated elements) against bf16-sr everywhere (+0.0048), the
  // same state bytes; Kahan saves less; plain nearest is over the tolerance.
  // Exactly equal losses fall back to the shadow (fewer compensated elements).
  void equallyCheapPlansGoToTheLowerLoss() {
    const auto candidate = [](const std::string& name, OptimizerMode mode, int64_t bytes, std::vector<double> val,
                              int64_t compensated) {
      AdvisorCandidate c;
      c.name = name;
      c.config.mode = mode;
      c.stateBytes = bytes;
      c.memorySaved = 1 - double(bytes) / 1000;
      const std::vector<double> fp32 = {3.100, 3.110, 3.105};
      std::vector<double> d;
      for (size_t k = 0; k < val.size(); ++k) d.push_back(val[k] - fp32[k]);
      double mean = 0;
      for (double x : d) mean += x / double(d.size());
      c.valLoss = std::move(val);
      c.lossVsFp32 = mean;
      c.ciLow = mean - 0.002;
      c.ciHigh = mean + 0.002;
      c.compensatedElements = compensated;
      c.tokensPerSecond = {5000, 5100, 4900};
      c.predictedUpdateLost = 0.01;
      return c;
    };
    std::vector<AdvisorCandidate> cs = {
        candidate("bf16-nearest", OptimizerMode::Bf16Nearest, 500, {3.200, 3.211, 3.204}, 0),
        candidate("bf16-nearest + sr at risk", OptimizerMode::Bf16Nearest, 500, {3.1112, 3.1213, 3.1161}, 3'276'800),
        candidate("bf16-sr", OptimizerMode::Bf16StochasticRounding, 500, {3.1046, 3.1151, 3.1097}, 10'485'760),
        candidate("bf16-kahan", OptimizerMode::Bf16Kahan, 625, {3.1001, 3.1102, 3.1049}, 10'485'760)};
    const int chosen = chooseCandidate(cs, 0.02);
    for (const AdvisorCandidate& c : cs) qInfo("%-28s %+.4f  %s", c.name.c_str(), *c.lossVsFp32, c.rejected.c_str());
    QCOMPARE(chosen, 2);
    QVERIFY(cs[2].rejected.empty());
    const std::string& reason = cs[1].rejected;
    QVERIFY2(reason.find("as cheap as the chosen") != std::string::npos &&
                 reason.find("its loss is higher (+0.0112 vs +0.0048 nats vs fp32; paired difference +0.0064") !=
                     std::string::npos &&
                 reason.find("compute: 3,276,800 compensated elements, 5,000 tokens/s vs 10,485,760") !=
                     std::string::npos,
             reason.c_str());
    QVERIFY2(cs[0].rejected.find("over the tolerance") != std::string::npos, cs[0].rejected.c_str());
    QVERIFY2(cs[3].rejected.find("saves less state memory") != std::string::npos, cs[3].rejected.c_str());
    QCOMPARE(computeCostText(cs[0]), std::string("no compensated element, 5,000 tokens/s"));

    // The same loss: the fewer compensated elements.
    cs[1].valLoss = cs[2].valLoss;
    cs[1].lossVsFp32 = cs[2].lossVsFp32;
    for (AdvisorCandidate& c : cs) c.rejected.clear();
    QCOMPARE(chooseCandidate(cs, 0.02), 1);
    QVERIFY2(cs[2].rejected.find("compensates the writes of more elements") != std::string::npos,
             cs[2].rejected.c_str());
  }

  // Point 1 for the GEMM formats: what the shadow says a format does to an
  // operand is what a run in that format measures, bit for bit, where the
  // operand is the same: every weight at step 1, and the first product's
  // input. And the shadow changes nothing of the training.
  void shadowGemmFiguresEqualRealQuantizedOnes() {
    auto stepOne = [](const RunConfig& c) {
      Trainer t(c);
      StepMetrics first;
      Trainer::Callbacks cb;
      cb.onStep = [&](const StepMetrics& m) {
        if (m.step == 1) first = m;
      };
      const RunResult r = t.run(cb);
      if (r.status != RunStatus::Completed) qFatal("run failed: %s", r.message.c_str());
      return std::make_pair(first, r.finalLoss);
    };
    const std::vector<GemmFormat> formats = {GemmFormat::Fp8E4m3, GemmFormat::Mxfp8, GemmFormat::Mxfp4, GemmFormat::Nvfp4};
    RunConfig plain = test::smallTrainingRun(OptimizerMode::Bf16Kahan, 3);
    RunConfig shadowed = plain;
    shadowed.shadow_gemm_formats = formats;
    const auto [shadow, shadowLoss] = stepOne(shadowed);
    QCOMPARE(shadowLoss, stepOne(plain).second);  // bit for bit the same training
    QVERIFY(shadow.gemmLayers.empty());
    QCOMPARE(shadow.shadowGemm.size() % (2 * formats.size()), size_t(0));
    const std::string firstProduct = "transformer.h.0.attn.c_attn";
    for (GemmFormat f : formats) {
      RunConfig real = plain;
      real.plan.gemm_format = f;
      const StepMetrics measured = stepOne(real).first;
      int compared = 0;
      for (const GemmOperandStats& g : measured.gemmLayers) {
        if (g.role == GemmRole::GradOutput || (g.role == GemmRole::Input && g.layer != firstProduct)) continue;
        const auto it = std::find_if(shadow.shadowGemm.begin(), shadow.shadowGemm.end(), [&](const GemmOperandStats& s) {
          return s.layer == g.layer && s.role == g.role && s.format == f;
        });
        QVERIFY2(it != shadow.shadowGemm.end(), g.layer.c_str());
        QVERIFY(it->underflow == g.underflow);  // exactly, not QCOMPARE's fuzzy double
        QVERIFY(it->saturation == g.saturation);
        QVERIFY(it->relError == g.relError);
        QVERIFY(it->dynamicRangeLog2 == g.dynamicRangeLog2);
        QVERIFY(it->scaleLog2Min == g.scaleLog2Min);
        QVERIFY(it->scaleLog2Max == g.scaleLog2Max);
        ++compared;
      }
      // Every Linear/Conv1D weight and the tied head's, plus one input.
      QVERIFY2(compared >= 9, gemmFormatId(f).c_str());
    }
  }

  void atRiskNeedsTheShareAndTwoStandardErrors() {
    QVERIFY(layerAtRisk(0.5, 0.01, 0.1));
    QVERIFY(!layerAtRisk(0.05, 0.001, 0.1));  // below the share
    QVERIFY(!layerAtRisk(0.15, 0.1, 0.1));    // within 2 se of zero
    QVERIFY(layerAtRisk(0.15, INFINITY, 0.1));  // unknown se: the share decides
  }

  // The app stops it from its UI thread: the run in progress ends at its
  // next step and the advice says it is incomplete.
  void stopsWhenAsked() {
    AdvisorOptions o;
    o.base = shortFineTune(OptimizerMode::Bf16Kahan, 1);
    o.seeds = {1, 2};
    std::atomic<bool> stop{false};
    int steps = 0;
    AdvisorCallbacks cb;
    cb.stop = &stop;
    cb.onProgress = [&](int done, int, const std::string&) {
      if (done >= 1) stop = true;  // after the shadow run
      steps = done;
    };
    const Advice a = runAdvisor(o, cb);
    QVERIFY(!a.completed);
    QVERIFY2(a.message.find("stopped") != std::string::npos, a.message.c_str());
    QCOMPARE(steps, 1);
    QVERIFY(a.candidates.empty() || a.chosen < 0);
  }

  // Point 5: the shadow figures equal real runs of each recipe within the
  // seed spread. Per seed, the mean over layers of each layer's mean update
  // lost, from the fp32 run's shadow and from a real run of the recipe.
  void shadowFiguresMatchRealRuns() {
    const std::pair<const char*, OptimizerMode> recipes[] = {{"nearest", OptimizerMode::Bf16Nearest},
                                                             {"kahan", OptimizerMode::Bf16Kahan},
                                                             {"stochastic", OptimizerMode::Bf16StochasticRounding}};
    std::map<std::string, std::vector<double>> shadow, real;
    for (uint64_t seed : kSeeds) {
      const auto s = shadowMeans(seed);
      for (const auto& [key, mode] : recipes) {
        shadow[key].push_back(meanOver(s.at(key)));
        real[key].push_back(meanOver(realMeans(mode, seed)));
      }
    }
    for (const auto& [key, mode] : recipes) {
      const test::Spread sh = test::spreadOf(shadow[key]), re = test::spreadOf(real[key]);
      const double allowed = 3 * std::sqrt(sh.sd * sh.sd + re.sd * re.sd) + 0.02;
      qInfo("%s: shadow %.4f (sd %.4f), real %.4f (sd %.4f), allowed %.4f", key, sh.mean, sh.sd, re.mean, re.sd,
            allowed);
      QVERIFY2(std::abs(sh.mean - re.mean) <= allowed, key);
    }
  }

  // Point 5: on a model where two layers' updates fall far below half a
  // bf16 ulp and every other layer's are large, the shadow flags exactly
  // those two, and the advisor keeps them fp32 or compensated and no other
  // layer fp32.
  void findsTheLayersBf16Loses() {
    QTemporaryDir tmp;
    const fs::path dir = constructedModel(fs::path(tmp.path().toStdString()) / "model");
    AdvisorOptions o;
    o.base = test::smallTrainingRun(OptimizerMode::Bf16Nearest, 60);
    o.base.model.source = "folder";
    o.base.model.path = dir.string();
    o.base.model.tokenizer = "bytes";
    o.base.adamw.lr = 1e-2;
    o.base.batch_size = 8;
    o.base.seq_len = 32;
    o.base.update_window = 10;
    o.base.layer_stats_every = 10;
    o.base.eval_every = 0;
    o.base.eval_batches = 16;
    o.seeds = {1, 2, 3};
    o.gemmFormats.clear();  // the recipes are the point here (the GEMM formats: below)
    o.momentStores.clear();  // likewise (the moment stores: below, and test_advisor_moment_stores)
    std::vector<std::string> progress;
    AdvisorCallbacks cb;
    cb.onProgress = [&](int done, int total, const std::string& text) {
      QVERIFY(done <= total);
      progress.push_back(text);
    };
    cb.onLog = [](const std::string& line) { qInfo("%s", line.c_str()); };
    const Advice a = runAdvisor(o, cb);
    QVERIFY2(a.completed, a.message.c_str());
    QVERIFY(!progress.empty());
    // The shadow's cost: CPU time inside the shadow run's own steps, never negative.
    QVERIFY(a.shadowOverhead && *a.shadowOverhead > 0 && *a.shadowOverhead < 5);
    qInfo("shadow overhead (CPU time within the shadow run's steps): %.3f", *a.shadowOverhead);

    // The shadow names exactly the two embeddings as lost under nearest writes.
    const std::vector<std::string> expected = {"transformer.wpe", "transformer.wte"};
    std::vector<std::string> lost = layersAtRisk(a.layers, OptimizerMode::Bf16Nearest, o.riskThreshold);
    std::sort(lost.begin(), lost.end());
    for (const LayerShadowFigures& l : a.layers)
      qInfo("%-32s nearest %.3f +- %.3f  sr %.3f  kahan %.3f  below half ulp %.3f", l.layer.c_str(), l.lostNearest,
            l.lostNearestSe, l.lostStochastic, l.lostKahan, l.belowHalfUlp);
    QVERIFY2(lost == expected, "the shadow's at-risk layers are not exactly wte and wpe");

    for (const AdvisorCandidate& c : a.candidates)
      qInfo("%-44s saved %.3f  loss vs fp32 %+.4f  %s", c.name.c_str(), c.memorySaved, c.lossVsFp32.value_or(NAN),
            c.rejected.c_str());
    QVERIFY2(a.chosen >= 0, a.message.c_str());
    const AdvisorCandidate& chosen = a.candidates[static_cast<size_t>(a.chosen)];
    QCOMPARE(chosen.layersAtRisk, 0);
    // The cheapest plans that rescue those two layers: nearest writes with
    // exactly them compensated (their own Kahan or SR recipe) or fp32, or
    // stochastic rounding everywhere (the same bytes as nearest); among
    // equally cheap plans the lower loss is chosen.
    if (chosen.config.mode == OptimizerMode::Bf16StochasticRounding) {
      QVERIFY2(chosen.fp32Layers.empty() && chosen.layerRecipes.empty(), chosen.name.c_str());
    } else {
      QVERIFY2(chosen.config.mode == OptimizerMode::Bf16Nearest, chosen.name.c_str());
      std::vector<std::string> kept = chosen.fp32Layers;
      for (const auto& [layer, recipe] : chosen.layerRecipes) {
        QVERIFY2(recipe == OptimizerMode::Bf16Kahan || recipe == OptimizerMode::Bf16StochasticRounding,
                 layer.c_str());
        kept.push_back(layer);
      }
      std::sort(kept.begin(), kept.end());
      QVERIFY2(kept == expected, chosen.name.c_str());
      QVERIFY2(chosen.config.plan.recipes == chosen.layerRecipes, "the run config's plan carries the recipes");
    }
    for (const AdvisorCandidate& c : a.candidates)
      if (c.stateBytes == chosen.stateBytes && c.lossVsFp32 && *c.lossVsFp32 <= a.tolerance)
        QVERIFY2(*c.lossVsFp32 >= *chosen.lossVsFp32, c.name.c_str());
    // The plan of exactly those layers in fp32 and the rest plain bf16 is a
    // candidate, and keeps fp32's loss; plain bf16 everywhere does not
    // (candidates with layer recipes of their own are checked above).
    bool sawPlainWithFp32 = false;
    for (const AdvisorCandidate& c : a.candidates) {
      if (c.config.mode != OptimizerMode::Bf16Nearest || !c.layerRecipes.empty()) continue;
      std::vector<std::string> layers = c.fp32Layers;
      std::sort(layers.begin(), layers.end());
      if (layers.empty()) {
        QVERIFY2(!c.rejected.empty() && *c.lossVsFp32 > a.tolerance, "plain bf16 everywhere was accepted");
      } else if (layers == expected) {
        sawPlainWithFp32 = true;
        QVERIFY2(*c.lossVsFp32 <= a.tolerance, c.rejected.c_str());
      }
    }
    QVERIFY(sawPlainWithFp32);
  }

  // Point 5 on the default experiment, shortened to 60 steps (docs/advisor.md
  // has the 200-step figures from the CLI): a plan saving at least 37.5 %
  // of fp32's state within the tolerance; the files the CLI writes.
  void defaultExperimentSavesAtLeast37Percent() {
    AdvisorOptions o;
    o.base = defaultRunConfig();
    o.base.device = "cpu";
    o.steps = 60;
    o.seeds = {1, 2, 3};
    QTemporaryDir tmp;
    o.outDir = tmp.path().toStdString();
    const Advice a = runAdvisor(o, {});
    QVERIFY2(a.completed, a.message.c_str());
    QVERIFY2(a.chosen >= 0, a.message.c_str());
    const AdvisorCandidate& c = a.candidates[static_cast<size_t>(a.chosen)];
    qInfo("chosen %s: saves %.3f, loss vs fp32 %+.5f (tolerance %.4f)", c.name.c_str(), c.memorySaved, *c.lossVsFp32,
          a.tolerance);
    QVERIFY(c.memorySaved >= 0.375);
    QVERIFY(*c.lossVsFp32 <= a.tolerance);
    QVERIFY(a.tolerance >= kMinTolerance && a.tolerance >= 2 * a.fp32Spread);
    // Plain bf16 (nearest writes everywhere) is docs/default-experiment.md's 0.05-nat gap: rejected.
    for (const AdvisorCandidate& other : a.candidates)
      if (other.config.mode == OptimizerMode::Bf16Nearest && other.fp32Layers.empty() && other.layerRecipes.empty())
        QVERIFY2(*other.lossVsFp32 > a.tolerance, other.rejected.c_str());

    // The GEMM formats: in shadow, for every product's input and weight, the
    // 4-bit formats lose far more than the 8-bit ones (relative error); on
    // the chosen plan, the 4-bit ones end behind MXFP8 (the formats
    // experiment's result), and the suggestion is the fewest bits within tolerance.
    std::map<std::tuple<std::string, GemmRole>, std::map<GemmFormat, double>> relError;
    for (const LayerGemmShadow& g : a.gemmLayers) {
      QVERIFY(g.steps >= 2);  // steps 1 and 40
      relError[{g.layer, g.role}][g.format] = g.relError;
    }
    QVERIFY(relError.count({"lm_head", GemmRole::Weight}));
    QVERIFY(relError.size() >= 2 * 9);  // 8 block products and the head, input and weight
    for (const auto& [key, byFormat] : relError) {
      QCOMPARE(byFormat.size(), o.gemmFormats.size());
      for (GemmFormat four : {GemmFormat::Mxfp4, GemmFormat::Nvfp4})
        for (GemmFormat eight : {GemmFormat::Fp8E4m3, GemmFormat::Mxfp8})
          QVERIFY2(byFormat.at(four) > 2 * byFormat.at(eight), std::get<0>(key).c_str());
    }
    QCOMPARE(a.gemmCandidates.size(), o.gemmFormats.size());
    std::map<GemmFormat, double> gemmLoss;
    for (const AdvisorCandidate& g : a.gemmCandidates) {
      QVERIFY2(g.lossVsFp32, g.name.c_str());
      QCOMPARE(g.stateBytes, c.stateBytes);
      QVERIFY(g.config.mode == c.config.mode);
      gemmLoss[g.config.plan.gemm_format] = *g.lossVsFp32;
      qInfo("%s: %+.4f nats vs fp32 %s", g.name.c_str(), *g.lossVsFp32, g.rejected.c_str());
    }
    QVERIFY(gemmLoss.at(GemmFormat::Mxfp4) > gemmLoss.at(GemmFormat::Mxfp8));
    QVERIFY(gemmLoss.at(GemmFormat::Nvfp4) > gemmLoss.at(GemmFormat::Mxfp8));
    for (size_t i = 0; i < a.gemmCandidates.size(); ++i) {
      const AdvisorCandidate& g = a.gemmCandidates[i];
      QCOMPARE(g.rejected.empty(), static_cast<int>(i) == a.gemmChosen);  // a reason for every other one
      if (*g.lossVsFp32 > a.tolerance) continue;
      QVERIFY(a.gemmChosen >= 0);
      const GemmFormat suggested = a.gemmCandidates[static_cast<size_t>(a.gemmChosen)].config.plan.gemm_format;
      QVERIFY(gemmBitsPerElement(suggested) <= gemmBitsPerElement(g.config.plan.gemm_format));
    }

    const fs::path dir = o.outDir;
    writeAdviceFiles(dir, a, o.base);
    const JsonFile advice = readJsonFile(dir / "advice.json");
    QVERIFY(advice.ok());
    for (const char* key : {"tolerance", "chosen", "candidates"}) QVERIFY(advice.value.contains(key));
    QCOMPARE(advice.value.at("chosen").at("memory_saved").get<double>(), c.memorySaved);
    for (const auto& candidate : advice.value.at("candidates"))
      for (const char* key : {"memory_saved", "loss_vs_fp32", "rejected", "mode", "plan"}) QVERIFY(candidate.contains(key));
    const JsonFile plan = readJsonFile(dir / "plan.json");
    QVERIFY(plan.ok());
    const RunConfig planned = RunConfig::fromJson(plan.value);  // a run config `run` accepts
    QVERIFY(planned.mode == c.config.mode);
    QVERIFY(planned.adamw.moments == c.config.adamw.moments);
    QVERIFY(fs::file_size(dir / "report.html") > 1000);
    QCOMPARE(fs::exists(dir / "plan-gemm.json"), a.gemmChosen >= 0);
    if (a.gemmChosen >= 0) {
      const RunConfig gemmPlan = RunConfig::fromJson(readJsonFile(dir / "plan-gemm.json").value);
      QVERIFY(gemmPlan.plan.gemm_format == a.gemmCandidates[static_cast<size_t>(a.gemmChosen)].config.plan.gemm_format);
      QVERIFY(gemmPlan.shadow_gemm_formats.empty());
    }

    // The moment stores (issue 40 point 5), on the real runs: one verdict
    // per store; a store is in the plan exactly when the chosen plan stores
    // its moments so, and then its own paired gap is within the tolerance;
    // one over it is left out; a store within it that is cheaper than the
    // chosen plan cannot exist; one not run says why. Each store's runs
    // really ran in it (run_info.json's moment_precision).
    QCOMPARE(a.momentStores.size(), o.momentStores.size());
    int inPlan = 0;
    for (const MomentStoreVerdict& v : a.momentStores) {
      const std::string id = momentPrecisionId(v.store);
      qInfo("%s moments: %s", id.c_str(), v.reason.c_str());
      QCOMPARE(v.inPlan, c.config.adamw.moments == v.store);
      if (v.inPlan) {
        ++inPlan;
        QVERIFY2(v.confirmed && *v.lossVsFp32 <= a.tolerance && v.bytesSaved > 0, v.reason.c_str());
        QCOMPARE(v.stateBytes, c.stateBytes);
      }
      if (!v.confirmed) {
        QVERIFY2(v.reason.rfind("not tried", 0) == 0, v.reason.c_str());
        continue;
      }
      if (*v.lossVsFp32 > a.tolerance) QVERIFY2(!v.inPlan && v.reason.find("over the tolerance") != std::string::npos, v.reason.c_str());
      else QVERIFY2(v.stateBytes >= c.stateBytes, v.reason.c_str());
      bool ran = false;
      for (const auto& e : fs::directory_iterator(dir / "runs")) {
        const std::string name = e.path().filename().string(), suffix = "-" + id + "-moments-seed1";
        if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
        const JsonFile info = readJsonFile(e.path() / "run_info.json");
        QVERIFY(info.ok());
        QCOMPARE(info.value.at("moment_precision").get<std::string>(), id);
        // Its bytes are those the run allocated (its last step's, codes and
        // scales), fewer than the plan's on this model (its matrices quantize).
        std::ifstream metrics(e.path() / "metrics.jsonl");
        std::string line, last;
        while (std::getline(metrics, line))
          if (!line.empty()) last = line;
        const MemoryBreakdown m = memoryBreakdownFromJson(nlohmann::json::parse(last).at("memory"));
        QVERIFY(m.scales > 0);
        QCOMPARE(v.stateBytes, m.total());
        QVERIFY2(v.bytesSaved > 0, v.reason.c_str());
        ran = true;
      }
      QVERIFY2(ran, id.c_str());
    }
    QVERIFY(inPlan <= 1);
    QCOMPARE(advice.value.at("moment_stores").size(), o.momentStores.size());
  }
};

PLAB_TEST_GUILESS_MAIN(TestAdvisor)
}  // namespace test_advisor
#include "test_advisor.moc"
