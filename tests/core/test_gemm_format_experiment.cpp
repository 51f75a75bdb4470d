// The default formats experiment (train/gemm_format_experiment.h) and its
// verdicts (report/gemm_format_verdict.h): six runs named after their
// format, the remedy run keeping the tied head bf16; each verdict is the val
// loss minus the bf16 run's of the same seed, paired over seeds.
#include <QtTest/QtTest>

#include "report/gemm_format_verdict.h"
#include "support/finished_runs.h"
#include "support/test_registry.h"
#include "train/gemm_format_experiment.h"
#include "train/run_config.h"

namespace test_gemm_format_experiment {

using namespace plab;

using plab::test::finishedRun;

class GemmFormatExperimentTest : public QObject {
  Q_OBJECT
 private slots:
  void sixRunsNamedAfterTheirFormat() {
    const std::vector<RunConfig> runs = loadRunConfigs(defaultFormatsExperimentJson());
    const std::vector<std::string> names = {"tiny-gpt2-finetune-bf16",  "tiny-gpt2-finetune-fp8-e4m3",
                                            "tiny-gpt2-finetune-mxfp8", "tiny-gpt2-finetune-mxfp4",
                                            "tiny-gpt2-finetune-nvfp4", "tiny-gpt2-finetune-nvfp4-bf16-head"};
    QCOMPARE(runs.size(), names.size());
    const RunConfig base = defaultRunConfig();
    for (size_t i = 0; i < runs.size(); ++i) {
      QCOMPARE(runs[i].name, names[i]);
      QVERIFY(runs[i].mode == OptimizerMode::Bf16Kahan);
      QVERIFY(runs[i].plan.preset == base.plan.preset);  // bf16 weights
      QCOMPARE(runs[i].steps, base.steps);
    }
    QVERIFY(runs[0].plan.gemm_format == GemmFormat::Bf16 && !runs[0].plan.usesLowPrecisionGemms());
    QVERIFY(runs[3].plan.gemm_format == GemmFormat::Mxfp4);
    QVERIFY(runs[5].plan.gemm_format == GemmFormat::Nvfp4);
    QVERIFY(runs[5].plan.gemm_formats.at("lm_head") == GemmFormat::Bf16);
  }

  void verdictsArePairedOverSeedsAgainstBf16() {
    const std::vector<RunConfig> cfg = loadRunConfigs(defaultFormatsExperimentJson());
    std::vector<RunRecord> runs;
    // Seed-major, as --seeds lists them; mxfp8 +0.01/+0.03, mxfp4 +0.2/+0.22.
    for (uint64_t seed : {1u, 2u}) {
      const double base = seed == 1 ? 3.0 : 3.5;
      runs.push_back(finishedRun(cfg[0], seed, base));
      runs.push_back(finishedRun(cfg[2], seed, base + (seed == 1 ? 0.01 : 0.03)));
      runs.push_back(finishedRun(cfg[3], seed, base + (seed == 1 ? 0.2 : 0.22)));
    }
    RunConfig otherLr = cfg[4];  // no bf16 run with its lr: no verdict
    otherLr.adamw.lr = 1e-3;
    runs.push_back(finishedRun(otherLr, 1, 9.0));
    const auto verdicts = report::gemmFormatVerdicts(runs);
    QCOMPARE(verdicts.size(), size_t(2));
    QCOMPARE(verdicts[0].label, std::string("tiny-gpt2-finetune-mxfp8"));
    QCOMPARE(verdicts[0].differences.size(), size_t(2));
    QVERIFY(std::abs(verdicts[0].estimate.mean - 0.02) < 1e-12);
    QCOMPARE(verdicts[1].label, std::string("tiny-gpt2-finetune-mxfp4"));
    QVERIFY(std::abs(verdicts[1].estimate.mean - 0.21) < 1e-12);
    QVERIFY(verdicts[1].estimate.beyondNoise());
    QVERIFY(verdicts[1].text.find("over 2 seeds") != std::string::npos);
    QVERIFY(verdicts[1].text.find("behind bf16 beyond seed noise") != std::string::npos);
  }
};

PLAB_TEST_APPLESS_MAIN(GemmFormatExperimentTest)
}  // namespace test_gemm_format_experiment
#include "test_gemm_format_experiment.moc"
