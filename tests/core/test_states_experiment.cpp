// The default states experiment (train/states_experiment.h, `run
// --default-states`): the default fine-tune once in fp32 and once per
// moment store, every other run differing from the fp32 run only in mode,
// moments and name, so that it is that run's fp32 twin and the verdicts pair
// each store against it over --seeds.
#include <QtTest/QtTest>

#include "report/fp32_comparison.h"
#include "support/finished_runs.h"
#include "support/test_registry.h"
#include "train/run_config.h"
#include "train/states_experiment.h"

namespace test_states_experiment {

using namespace plab;

using plab::test::finishedRun;

class StatesExperimentTest : public QObject {
  Q_OBJECT
 private slots:
  void oneRunPerStoreBesideFp32() {
    const std::vector<RunConfig> runs = loadRunConfigs(defaultStatesExperimentJson());
    struct Expected {
      const char* name;
      OptimizerMode mode;
      MomentPrecision moments;
    };
    const Expected expected[] = {
        {"tiny-gpt2-finetune-fp32", OptimizerMode::Fp32AdamW, MomentPrecision::ModeDefault},
        {"tiny-gpt2-finetune-bf16-sr-bf16-sr-moments", OptimizerMode::Bf16StochasticRounding,
         MomentPrecision::Bf16Stochastic},
        {"tiny-gpt2-finetune-bf16-sr-8bit-moments", OptimizerMode::Bf16StochasticRounding, MomentPrecision::Dynamic8bit},
        {"tiny-gpt2-finetune-bf16-sr-4bit-moments", OptimizerMode::Bf16StochasticRounding, MomentPrecision::Dynamic4bit},
        {"tiny-gpt2-finetune-bf16-sr-fp8-moments", OptimizerMode::Bf16StochasticRounding, MomentPrecision::Fp8},
        {"tiny-gpt2-finetune-bf16-kahan-8bit-moments", OptimizerMode::Bf16Kahan, MomentPrecision::Dynamic8bit},
    };
    QCOMPARE(runs.size(), std::size(expected));
    const RunConfig base = defaultRunConfig();
    for (size_t i = 0; i < runs.size(); ++i) {
      QCOMPARE(runs[i].name, std::string(expected[i].name));
      QVERIFY(runs[i].mode == expected[i].mode);
      QVERIFY(runs[i].adamw.moments == expected[i].moments);
      // Everything else is the default fine-tune's.
      RunConfig rest = runs[i];
      rest.name = base.name;
      rest.mode = base.mode;
      rest.adamw.moments = base.adamw.moments;
      rest.output_dir = base.output_dir;
      QCOMPARE(rest.toJson().dump(), base.toJson().dump());
    }
  }

  void everyStoreIsPairedWithItsSeedsFp32Run() {
    const std::vector<RunConfig> cfg = loadRunConfigs(defaultStatesExperimentJson());
    std::vector<RunRecord> runs;
    for (uint64_t seed : {1u, 2u})
      for (size_t i = 0; i < cfg.size(); ++i) runs.push_back(finishedRun(cfg[i], seed, 2.0 + 0.1 * seed + 0.001 * i));
    for (size_t i = 0; i < runs.size(); ++i) {
      const std::string verdict = report::comparisonVerdict(runs, i);
      if (runs[i].config.mode == OptimizerMode::Fp32AdamW) {
        QVERIFY2(verdict.find("the fp32 reference") != std::string::npos, verdict.c_str());
        continue;
      }
      const std::string twin = "tiny-gpt2-finetune-fp32-s" + std::to_string(runs[i].config.seed);
      QVERIFY2(verdict.find("vs fp32 twin " + twin) != std::string::npos, verdict.c_str());
      QVERIFY2(verdict.find("over 2 seeds") != std::string::npos, verdict.c_str());
    }
  }
};

PLAB_TEST_APPLESS_MAIN(StatesExperimentTest)
}  // namespace test_states_experiment
#include "test_states_experiment.moc"
