// Which fp32 run a run is measured against (its twin: the same config except
// mode and plan), how runs are named when names repeat, and the paired test
// over seeds that says whether a gap to fp32 is beyond seed noise.
#include <QtTest/QtTest>

#include <cmath>

#include "report/fp32_comparison.h"
#include "report/fp32_twin.h"
#include "report/paired_gap.h"
#include "support/test_registry.h"
#include "train/trainer.h"

namespace test_fp32_twin {

using namespace plab;

namespace {

// A finished run whose val loss at the last step is `finalVal`.
RunRecord finishedRun(const std::string& name, OptimizerMode mode, uint64_t seed, double finalVal, int steps = 10) {
  RunRecord r;
  r.config = defaultRunConfig();
  r.config.name = name;
  r.config.mode = mode;
  r.config.seed = seed;
  r.config.steps = steps;
  for (int s = 1; s <= steps; ++s) {
    StepMetrics m;
    m.step = s;
    m.loss = 3.0 - 0.01 * s;
    if (s % 5 == 0) m.valLoss = finalVal + 0.001 * (steps - s);
    r.steps.push_back(m);
  }
  r.result.stepsDone = steps;
  r.result.finalLoss = r.steps.back().loss;
  r.result.finalValLoss = finalVal;
  return r;
}

// What train() records, for runs on the tiny model.
std::vector<double> trainedLosses(const RunConfig& c) {
  Trainer t(c);
  std::vector<double> losses;
  Trainer::Callbacks cb;
  cb.onStep = [&](const StepMetrics& m) {
    losses.push_back(m.loss);
    if (m.valLoss) losses.push_back(*m.valLoss);
  };
  const RunResult r = t.run(cb);
  if (r.status != RunStatus::Completed) losses.clear();
  return losses;
}

}  // namespace

class TestFp32Twin : public QObject {
  Q_OBJECT
 private slots:
  // The reproduction: a 20-step lr-1e-3 sweep's fp32 run listed after
  // the comparison must not be the twin of the comparison's runs.
  void twinIsTheSameConfigExceptModeAndPlan() {
    RunRecord fp32 = finishedRun("cmp-fp32", OptimizerMode::Fp32AdamW, 0, 2.0);
    RunRecord kahan = finishedRun("cmp-kahan", OptimizerMode::Bf16Kahan, 0, 2.0003);
    kahan.config.plan = PrecisionPlan{};  // the plan may differ: it is what is compared
    RunRecord sweepFp32 = finishedRun("ext-sweep-fp32", OptimizerMode::Fp32AdamW, 0, 1.97, 20);
    sweepFp32.config.adamw.lr = 1e-3;
    std::vector<RunRecord> runs = {fp32, kahan, sweepFp32};
    QCOMPARE(report::fp32TwinIndex(runs, 1), std::optional<size_t>(0));
    QCOMPARE(report::fp32TwinIndex(runs, 0), std::optional<size_t>(0));  // fp32 is its own
    QCOMPARE(report::fp32TwinIndices(runs)[1], std::optional<size_t>(0));

    // Every field that changes an fp32 run's losses must match.
    const auto twinAfter = [&](auto change) {
      std::vector<RunRecord> v = {fp32, kahan};
      change(v[0].config);
      return report::fp32TwinIndex(v, 1);
    };
    QVERIFY(!twinAfter([](RunConfig& c) { c.adamw.lr *= 2; }));
    QVERIFY(!twinAfter([](RunConfig& c) { c.steps = 20; }));
    QVERIFY(!twinAfter([](RunConfig& c) { c.eval_batches += 3; }));
    QVERIFY(!twinAfter([](RunConfig& c) { c.lr_schedule = c.lr_schedule == "cosine" ? "constant" : "cosine"; }));
    QVERIFY(!twinAfter([](RunConfig& c) { c.warmup_steps += 1; }));
    QVERIFY(!twinAfter([](RunConfig& c) { c.seed = 7; }));
    QVERIFY(!twinAfter([](RunConfig& c) { c.adamw.weight_decay += 0.05; }));
    QVERIFY(!twinAfter([](RunConfig& c) { c.grad_clip += 0.5; }));
    QVERIFY(!twinAfter([](RunConfig& c) { c.data.val_fraction = 0.2; }));
    // Bookkeeping and what fp32 ignores do not.
    QVERIFY(twinAfter([](RunConfig& c) { c.name = "other"; }));
    QVERIFY(twinAfter([](RunConfig& c) { c.output_dir = "/elsewhere"; }));
    QVERIFY(twinAfter([](RunConfig& c) { c.checkpoint_every = 5; }));
    QVERIFY(twinAfter([](RunConfig& c) { c.layer_stats_every = 1; }));
    QVERIFY(twinAfter([](RunConfig& c) { c.update_window = 4; }));
    QVERIFY(twinAfter([](RunConfig& c) { c.adamw.moments = MomentPrecision::Fp32; }));
    QVERIFY(twinAfter([](RunConfig& c) { c.adamw.kernels = StepKernels::Reference; }));

    // A finished twin wins over a later one still training, a failed one never counts.
    RunRecord training = fp32;
    training.steps.resize(3);
    training.result = RunResult{};
    RunRecord failed = fp32;
    failed.result.status = RunStatus::Failed;
    runs = {fp32, kahan, training, failed};
    QCOMPARE(report::fp32TwinIndex(runs, 1), std::optional<size_t>(0));
    runs = {kahan, training};
    QCOMPARE(report::fp32TwinIndex(runs, 0), std::optional<size_t>(1));
  }

  // The verdict names the twin, and says so when there is none.
  void verdictNamesTheTwin() {
    std::vector<RunRecord> runs = {finishedRun("base-fp32", OptimizerMode::Fp32AdamW, 0, 2.0),
                                   finishedRun("base-bf16", OptimizerMode::Bf16Plain, 0, 2.06)};
    const std::string v = report::comparisonVerdict(runs, 1);
    QVERIFY2(v.rfind("bf16: +0.0600 nats val loss vs fp32 twin base-fp32", 0) == 0, v.c_str());
    QVERIFY2(v.find("one seed: run more seeds for a paired test") != std::string::npos, v.c_str());
    QCOMPARE(report::fp32TwinText(runs, 1), std::string("fp32 twin: base-fp32"));
    // A mean update lost of -0.00004 % (Kahan's pending part) is "0.0 %", never "-0.0 %".
    runs[1].steps.back().updateLost = -4e-7;
    QVERIFY2(report::comparisonVerdict(runs, 1).find(", 0.0 % of the intended update lost") != std::string::npos,
             report::comparisonVerdict(runs, 1).c_str());
    // With its standard error when the windows recorded one: 0.6 and 0.8 points -> 0.5 for the mean of two.
    runs[1].steps.back().updateLost = 0.88;
    runs[1].steps.back().updateLostStdError = 0.006;
    runs[1].steps[4].updateLost = 0.90;
    runs[1].steps[4].updateLostStdError = 0.008;
    QVERIFY2(report::comparisonVerdict(runs, 1).find(", 89.0 ± 0.5 % of the intended update lost") != std::string::npos,
             report::comparisonVerdict(runs, 1).c_str());
    runs[0].config.adamw.lr = 1e-3;
    const std::string none = report::comparisonVerdict(runs, 1);
    QVERIFY2(none.find("no fp32 twin") != std::string::npos, none.c_str());
    QCOMPARE(report::fp32TwinText(runs, 1), std::string("no fp32 twin"));
    const RunConfig twin = report::fp32TwinConfig(runs[1].config);
    QCOMPARE(twin.name, std::string("base-bf16-fp32-twin"));
    runs.push_back(finishedRun("x", OptimizerMode::Fp32AdamW, 0, 2.0));
    runs.back().config = twin;
    QCOMPARE(report::fp32TwinIndex(runs, 1), std::optional<size_t>(2));
  }

  // A reference chosen by hand (display.json "fp32_reference") wins over the
  // rule, is named as chosen, and its config's differences are said.
  void referenceChosenByHand() {
    std::vector<RunRecord> runs = {finishedRun("twin", OptimizerMode::Fp32AdamW, 0, 2.0),
                                   finishedRun("other", OptimizerMode::Fp32AdamW, 0, 1.9, 20),
                                   finishedRun("bf16", OptimizerMode::Bf16Plain, 0, 2.06)};
    runs[0].config.output_dir = "/ws/run1-fp32";
    runs[1].config.output_dir = "/ws/run2-fp32/";  // a trailing slash names the same folder
    runs[1].config.adamw.lr = 1e-3;
    runs[2].config.output_dir = "/ws/run3-bf16";
    QCOMPARE(report::runFolderName(runs[1]), std::string("run2-fp32"));
    QCOMPARE(report::fp32TwinIndex(runs, 2), std::optional<size_t>(0));  // automatic
    QCOMPARE(report::fp32TwinCell(runs, 2), std::string("twin"));

    runs[2].fp32Reference = "run2-fp32";
    QCOMPARE(report::fp32TwinIndex(runs, 2), std::optional<size_t>(1));
    QCOMPARE(report::fp32TwinIndices(runs)[2], std::optional<size_t>(1));  // the same rule, cached
    QCOMPARE(report::fp32TwinKeyDifferences(runs[2].config, runs[1].config),
             (std::vector<std::string>{"adamw.lr", "steps"}));
    QCOMPARE(report::fp32TwinCell(runs, 2), std::string("other (chosen)"));
    QCOMPARE(report::fp32TwinText(runs, 2),
             std::string("fp32 run other, chosen by hand; its config differs in: adamw.lr, steps"));
    const std::string v = report::comparisonVerdict(runs, 2);
    QVERIFY2(v.find("vs fp32 run other (chosen by hand; differs in: adamw.lr, steps)") != std::string::npos, v.c_str());
    QVERIFY2(v.find("fp32 twin") == std::string::npos, v.c_str());  // never passed off as a twin

    // Chosen, same config: marked as chosen, no differences.
    runs[2].fp32Reference = "run1-fp32";
    QCOMPARE(report::fp32TwinText(runs, 2), std::string("fp32 run twin, chosen by hand; the same config except mode and plan"));
    QVERIFY(report::comparisonVerdict(runs, 2).find("vs fp32 run twin (chosen by hand)") != std::string::npos);

    // Chosen but gone (removed, hidden from an export) or failed: no reference, saying why, never the rule's pick.
    runs[2].fp32Reference = "run9-fp32";
    QVERIFY(!report::fp32TwinIndex(runs, 2));
    QCOMPARE(report::fp32TwinCell(runs, 2), std::string("chosen run9-fp32 not listed"));
    QVERIFY(report::comparisonVerdict(runs, 2).find("no fp32 reference: the fp32 run chosen by hand (run9-fp32)") !=
            std::string::npos);
    runs[2].fp32Reference = "run2-fp32";
    runs[1].result.status = RunStatus::Failed;
    QVERIFY(!report::fp32TwinIndex(runs, 2));
    runs[1].result.status = RunStatus::Completed;

    // A folder name that repeats (runs opened from two sweeps): the one next to the run.
    RunRecord elsewhere = runs[1];
    elsewhere.config.output_dir = "/other/run2-fp32";
    runs.insert(runs.begin(), elsewhere);
    QCOMPARE(report::fp32TwinIndex(runs, 3), std::optional<size_t>(2));
    // An fp32 run is its own reference whatever is stored.
    runs[1].fp32Reference = "run2-fp32";
    QCOMPARE(report::fp32TwinIndex(runs, 1), std::optional<size_t>(1));
    QCOMPARE(report::fp32TwinCell(runs, 1), std::string("itself"));
  }

  void repeatedNamesAreToldApart() {
    const std::vector<RunRecord> runs = {finishedRun("run", OptimizerMode::Fp32AdamW, 0, 2.0),
                                         finishedRun("run", OptimizerMode::Fp32AdamW, 0, 2.0),
                                         finishedRun("other", OptimizerMode::Bf16Plain, 0, 2.0)};
    QCOMPARE(report::runLabel(runs, 0), std::string("run"));
    QCOMPARE(report::runLabel(runs, 1), std::string("run (2)"));
    QCOMPARE(report::runLabel(runs, 2), std::string("other"));
    // The later of two identical finished fp32 runs is the twin, named apart.
    QCOMPARE(report::fp32TwinText(runs, 2), std::string("fp32 twin: run (2)"));
  }

  void studentQuantiles() {
    QCOMPARE(report::studentT975(4), 2.776);
    QVERIFY(std::abs(report::studentT975(60) - 2.000) < 0.002);
    QVERIFY(std::abs(report::studentT975(120) - 1.980) < 0.002);
    const report::PairedEstimate e = report::pairedEstimate({1.0, 2.0, 3.0});
    QCOMPARE(e.mean, 2.0);
    QCOMPARE(e.sd, 1.0);
    QVERIFY(std::abs(e.ciHigh - (2.0 + 4.303 / std::sqrt(3.0))) < 1e-12);
  }

  // Five seeds, each recipe run against its own seed's fp32: a gap far
  // below fp32's seed-to-seed spread is still beyond noise when the pairs
  // agree, and mixed's gap is the compute share.
  void pairedGapOverSeeds() {
    const double fp32Val[] = {1.93, 1.95, 1.94, 1.92, 1.96};  // sd 0.016
    const double kahanGap[] = {0.0004, 0.0006, 0.0005, 0.0003, 0.0007};
    const double mixedGap[] = {0.0003, 0.0004, 0.0004, 0.0002, 0.0005};
    const double srGap[] = {0.0004, -0.0003, 0.0001, -0.0002, 0.0000};
    std::vector<RunRecord> runs;
    for (int s = 0; s < 5; ++s) {
      const uint64_t seed = 1 + s;
      const std::string sfx = "-s" + std::to_string(seed);
      runs.push_back(finishedRun("fp32" + sfx, OptimizerMode::Fp32AdamW, seed, fp32Val[s]));
      runs.push_back(finishedRun("kahan" + sfx, OptimizerMode::Bf16Kahan, seed, fp32Val[s] + kahanGap[s]));
      runs.push_back(finishedRun("mixed" + sfx, OptimizerMode::Fp32MasterWeights, seed, fp32Val[s] + mixedGap[s]));
      runs.push_back(finishedRun("sr" + sfx, OptimizerMode::Bf16StochasticRounding, seed, fp32Val[s] + srGap[s]));
    }
    const auto kahan = report::pairedGap(runs, 1);
    QVERIFY(kahan);
    QCOMPARE(kahan->total.pairs, 5);
    QVERIFY(std::abs(kahan->total.mean - 0.0005) < 1e-9);
    QVERIFY(kahan->total.beyondNoise());
    QVERIFY(kahan->validation);
    QVERIFY(kahan->compute && kahan->optimizer);
    QVERIFY(std::abs(kahan->compute->mean - 0.00036) < 1e-9);
    QVERIFY(std::abs(kahan->optimizer->mean - 0.00014) < 1e-9);
    const auto sr = report::pairedGap(runs, 3);
    QVERIFY(sr && !sr->total.beyondNoise());
    const std::string text = report::comparisonVerdict(runs, 1);
    QVERIFY2(text.find("over 5 seeds +0.000500 (95 % CI +0.000") != std::string::npos, text.c_str());
    QVERIFY2(text.find("beyond seed noise; bf16 compute (mixed, 5 seeds) +0.000360") != std::string::npos, text.c_str());
    QVERIFY2(report::comparisonVerdict(runs, 3).find("within seed noise") != std::string::npos,
             report::comparisonVerdict(runs, 3).c_str());
    // Another learning rate is another family, with no twin and no pairs.
    runs[1].config.adamw.lr = 1e-4;
    const auto alone = report::pairedGap(runs, 1);
    QVERIFY(!alone);
    // A run still training gets no paired figure yet.
    runs[5].result = RunResult{};
    QVERIFY(!report::pairedGap(runs, 5));
  }

  // With mixed and the same recipe on fp32 moments over the same seeds, the
  // gap splits into compute (mixed's gap), weight write (fp32-moment run's
  // gap minus mixed's) and moments (this gap minus the fp32-moment run's),
  // seed by seed: the parts' means add up to the gap's exactly, each with its
  // own paired interval; the runs' own update lost and update noise go with
  // the write. A seed missing one of the runs leaves it out of the split.
  void gapAttributionAddsUp() {
    const double fp32Val[] = {1.93, 1.95, 1.94, 1.92, 1.96};
    const double mixedGap[] = {0.0001, 0.0000, 0.0001, 0.0002, 0.0001};
    const double momentsFp32Gap[] = {0.0004, 0.0002, 0.0003, 0.0004, 0.0002};
    const double kahanGap[] = {0.0005, 0.0002, 0.0004, 0.0003, 0.0003};
    std::vector<RunRecord> runs;
    for (int s = 0; s < 5; ++s) {
      const uint64_t seed = 11 + s;
      const std::string sfx = "-s" + std::to_string(seed);
      runs.push_back(finishedRun("fp32" + sfx, OptimizerMode::Fp32AdamW, seed, fp32Val[s]));
      runs.push_back(finishedRun("mixed" + sfx, OptimizerMode::Fp32MasterWeights, seed, fp32Val[s] + mixedGap[s]));
      RunRecord kahan = finishedRun("kahan" + sfx, OptimizerMode::Bf16Kahan, seed, fp32Val[s] + kahanGap[s]);
      kahan.result.meanUpdateLost = 0.0;
      kahan.result.meanUpdateNoise = 0.12;
      runs.push_back(kahan);
      RunRecord fp32Moments = finishedRun("kahan-m" + sfx, OptimizerMode::Bf16Kahan, seed, fp32Val[s] + momentsFp32Gap[s]);
      fp32Moments.config.adamw.moments = MomentPrecision::Fp32;
      runs.push_back(fp32Moments);
    }
    const auto gap = report::pairedGap(runs, 2);
    QVERIFY(gap && gap->attribution);
    const auto& a = *gap->attribution;
    QCOMPARE(a.seeds.size(), size_t(5));
    QVERIFY(std::abs(a.gap.mean - 0.00034) < 1e-12);
    QVERIFY(std::abs(a.compute.mean - 0.0001) < 1e-12);
    QVERIFY(std::abs(a.write.mean - 0.0002) < 1e-12);
    QVERIFY(std::abs(a.moments.mean - 0.00004) < 1e-12);
    QVERIFY(std::abs(a.compute.mean + a.write.mean + a.moments.mean - a.gap.mean) < 1e-15);
    QVERIFY(a.write.ciLow > 0);  // the write's pairs all agree in sign: beyond noise
    QCOMPARE(*a.updateNoise, 0.12);
    const std::string text = report::comparisonVerdict(runs, 2);
    QVERIFY2(text.find("over 5 seeds with mixed and fp32-moment runs +0.000340 = compute +1.00e-04 (95 % CI ") !=
                     std::string::npos &&
                 text.find(" + weight write +0.000200 (95 % CI +0.000112 to ") != std::string::npos &&
                 text.find("[update lost 0.00 %, update noise 12.0 %] + moments +4.00e-05 (95 % CI ") != std::string::npos,
             text.c_str());
    // The fp32-moment run itself has nothing to split further.
    QVERIFY(!report::pairedGap(runs, 3)->attribution);
    // Without one seed's fp32-moment run, that seed is left out of the split only.
    runs.erase(runs.begin() + 3);
    const auto fewer = report::pairedGap(runs, 2);
    QVERIFY(fewer && fewer->attribution);
    QCOMPARE(fewer->total.pairs, 5);
    QCOMPARE(fewer->attribution->seeds.size(), size_t(4));
  }

  // The twin rule leaves out layer_stats_every and update_window because
  // they only measure: two fp32 runs that differ in them train identically.
  void measurementCadenceDoesNotChangeTraining() {
    RunConfig a = defaultRunConfig();
    a.mode = OptimizerMode::Fp32AdamW;
    a.steps = 4;
    a.batch_size = 2;
    a.seq_len = 16;
    a.warmup_steps = 0;
    a.eval_every = 2;
    a.eval_batches = 1;
    a.device = "cpu";
    a.threads = 1;
    RunConfig b = a;
    a.layer_stats_every = 1;
    a.update_window = 2;
    b.layer_stats_every = 3;
    b.update_window = 0;
    const std::vector<double> la = trainedLosses(a), lb = trainedLosses(b);
    QVERIFY(!la.empty());
    QCOMPARE(la, lb);
    QCOMPARE(report::fp32TwinKey(a), report::fp32TwinKey(b));
  }
};

PLAB_TEST_GUILESS_MAIN(TestFp32Twin)
}  // namespace test_fp32_twin
#include "test_fp32_twin.moc"
