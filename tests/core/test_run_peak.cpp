// The run's measured memory peak (train/run_peak.h): which steps are probed
// (a statistics step and a window-closing step among them, not only the
// second step), that the measured saving is taken against the fp32 twin
// and is absent without one, and that the figures round-trip through
// summary.json and the run-folder reader.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>

#include "report/fp32_comparison.h"
#include "report/run_folder_reader.h"
#include "support/test_registry.h"
#include "train/run_peak.h"
#include "train/trainer.h"

namespace test_run_peak {

using namespace plab;
namespace fs = std::filesystem;

namespace {

// The embedded tiny GPT-2: statistics on step 1 and every 3 steps, an
// update-lost window closing every 4.
RunConfig tinyRun(OptimizerMode mode, uint64_t seed) {
  RunConfig c = defaultRunConfig();
  c.name = "peak-" + optimizerModeId(mode);
  c.mode = mode;
  c.seed = seed;
  c.steps = 5;
  c.batch_size = 8;
  c.seq_len = 32;
  c.warmup_steps = 0;
  c.eval_every = 5;
  c.eval_batches = 1;
  c.layer_stats_every = 3;
  c.update_window = 4;
  c.device = "cpu";
  return c;
}

RunRecord train(const RunConfig& c, std::vector<std::string>* logs = nullptr) {
  RunRecord r;
  Trainer t(c);
  Trainer::Callbacks cb;
  cb.onStart = [&](const RunInfo& i) { r.info = i; };
  cb.onStep = [&](const StepMetrics& m) { r.steps.push_back(m); };
  cb.onLog = [&](const std::string& line) {
    if (logs) logs->push_back(line);
  };
  r.result = t.run(cb);
  r.config = t.config();
  return r;
}

using Steps = std::vector<int64_t>;

}  // namespace

class TestRunPeak : public QObject {
  Q_OBJECT
 private slots:
  // The second step, the first statistics step after it and the first
  // window-closing step after it; a resumed run counts from its first step.
  void plannedSteps() {
    QCOMPARE(RunPeak(1, 200, 10, 20).plannedSteps(), (Steps{2, 10, 20}));
    QCOMPARE(RunPeak(1, 5, 3, 4).plannedSteps(), (Steps{2, 3, 4}));
    QCOMPARE(RunPeak(1, 200, 1, 2).plannedSteps(), (Steps{2}));    // all three are step 2
    QCOMPARE(RunPeak(1, 200, 50, 0).plannedSteps(), (Steps{2, 50}));  // no window
    QCOMPARE(RunPeak(1, 8, 50, 20).plannedSteps(), (Steps{2}));    // past the last step
    QCOMPARE(RunPeak(1, 1, 10, 20).plannedSteps(), (Steps{1}));    // a one-step run
    QCOMPARE(RunPeak(51, 100, 10, 20).plannedSteps(), (Steps{52, 60}));
    QVERIFY(RunPeak(1, 5, 3, 4).probes(3) && !RunPeak(1, 5, 3, 4).probes(1) && !RunPeak(1, 5, 3, 4).probes(5));
  }

  // A real run probes exactly those steps, and reports both figures.
  void runProbesAStatisticsAndAWindowStep() {
    std::vector<std::string> logs;
    const RunRecord r = train(tinyRun(OptimizerMode::Bf16Kahan, 1), &logs);
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QCOMPARE(r.result.peakProbeSteps, (Steps{2, 3, 4}));
    QVERIFY(!r.steps[2].layers.empty() && r.steps[1].layers.empty());  // step 3 is a statistics step, 2 is not
    QVERIFY(r.steps[3].updateLost.has_value());                          // step 4 closes a window
    // The trainer saw the probed steps as such: one line per probe.
    const auto logged = [&](const std::string& prefix) {
      return std::any_of(logs.begin(), logs.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
    };
    QVERIFY(logged("memory at step 2: peak "));
    QVERIFY(logged("memory at step 3 (statistics): peak "));
    QVERIFY(logged("memory at step 4 (window): peak "));
    QVERIFY(!logged("memory at step 5"));
    QVERIFY(r.result.stepPeakBytes && *r.result.stepPeakBytes > 0);
    QVERIFY(r.result.trainingPeakBytes && *r.result.trainingPeakBytes > 0);
    qInfo("kahan: step peak %lld B, training peak %lld B, state %lld B",
          static_cast<long long>(*r.result.stepPeakBytes), static_cast<long long>(*r.result.trainingPeakBytes),
          static_cast<long long>(r.result.memory.total()));
    // The process holds at least the training state at its peak.
    QVERIFY(*r.result.trainingPeakBytes >= r.result.memory.total());
  }

  // Against the fp32 run with the same model, data and seed (the one
  // fp32TwinIndex picks); without one there is no figure, not 0 %.
  void peakSavingAgainstTheFp32Twin() {
    const std::vector<RunRecord> runs = {train(tinyRun(OptimizerMode::Fp32AdamW, 1)),
                                         train(tinyRun(OptimizerMode::Bf16Plain, 1))};
    const auto ref = report::fp32TwinIndex(runs, 1);
    QCOMPARE(ref, std::optional<size_t>(0));
    const auto saved = report::measuredPeakSaving(runs[1], &runs[*ref]);
    QVERIFY(saved.has_value());
    QCOMPARE(*saved, 1.0 - double(*runs[1].result.trainingPeakBytes) / double(*runs[0].result.trainingPeakBytes));
    QVERIFY(*saved < runs[1].result.memorySavedFraction + 0.5);  // a real figure, not a copy of 1
    const std::string verdict = report::runVerdict(runs[1], &runs[*ref]);
    QVERIFY2(verdict.find("% state memory saved (measured peak ") != std::string::npos &&
                 verdict.find(" fp32's)") != std::string::npos,
             verdict.c_str());
    qInfo("%s", verdict.c_str());

    // A bf16 run with another seed has no fp32 twin.
    std::vector<RunRecord> alone = runs;
    alone[1].config.seed = 7;
    QVERIFY(!report::fp32TwinIndex(alone, 1));
    QVERIFY(!report::measuredPeakSaving(alone[1], nullptr));
    QCOMPARE(report::peakSavingText(alone[1], nullptr), std::string("no fp32 twin"));
    const std::string lone = report::runVerdict(alone[1], nullptr);
    QVERIFY2(lone.find("no fp32 twin to compare the peak with") != std::string::npos, lone.c_str());
    // A reference without a measured peak (an old folder) gives none either.
    RunRecord oldFp32 = runs[0];
    oldFp32.result.trainingPeakBytes.reset();
    QVERIFY(!report::measuredPeakSaving(runs[1], &oldFp32));
    QCOMPARE(report::peakSavingText(runs[1], &oldFp32), std::string("fp32 peak not measured"));
    RunRecord unmeasured = runs[1];
    unmeasured.result.trainingPeakBytes.reset();
    QCOMPARE(report::peakSavingText(unmeasured, &runs[0]), std::string("not measured"));
  }

  // summary.json carries the figures; the reader brings them back, and a
  // folder written before them reads as unmeasured.
  void roundTripsThroughSummaryJson() {
    QTemporaryDir tmp;
    RunConfig c = tinyRun(OptimizerMode::Bf16StochasticRounding, 2);
    c.output_dir = (fs::path(tmp.path().toStdString()) / "run").string();
    const RunRecord r = train(c);
    QVERIFY(r.result.trainingPeakBytes.has_value());
    const StoredRun back = readRunFolder(c.output_dir);
    QCOMPARE(back.record.result.trainingPeakBytes, r.result.trainingPeakBytes);
    QCOMPARE(back.record.result.stepPeakBytes, r.result.stepPeakBytes);
    QCOMPARE(back.record.result.peakProbeSteps, r.result.peakProbeSteps);

    const fs::path summary = fs::path(c.output_dir) / "summary.json";
    nlohmann::json j = nlohmann::json::parse(std::ifstream(summary));
    j.erase("training_peak_bytes");
    j.erase("peak_probe_steps");
    j["step_peak_bytes"] = "garbage";
    std::ofstream(summary) << j.dump();
    const StoredRun old = readRunFolder(c.output_dir);
    QCOMPARE(old.status, StoredRunStatus::Completed);
    QVERIFY(!old.record.result.trainingPeakBytes && !old.record.result.stepPeakBytes);
    QVERIFY(old.record.result.peakProbeSteps.empty());
  }
};

PLAB_TEST_GUILESS_MAIN(TestRunPeak)
}  // namespace test_run_peak
#include "test_run_peak.moc"
