// The physics of low-precision GEMMs over seeds (issue 22, point 4): the
// default fine-tune (the embedded pretrained tiny GPT-2, bf16 weights,
// bf16-kahan), shortened to 30 steps, with every product in one GEMM format,
// seeds 1-3, each run against the bf16-GEMM run of its seed (paired).
// Measured on this tree (30 steps, seeds 1-3, val loss minus bf16's):
//   bf16 1.9847 +- 0.0017 (seed spread); fp8-e4m3 +0.0042, mxfp8 +0.0035,
//   mxfp4 +0.080, nvfp4 +0.047, nvfp4 with the tied head in bf16 +0.034
//   (each paired interval above 0).
// What the literature reports and the assertions pin, with tolerances from
// the spread measured here: the 8-bit formats within 3 seed spreads of bf16
// and under a tenth of the 4-bit gaps; MXFP4 and NVFP4 behind by more than
// 5 spreads and beyond noise paired; NVFP4 (16-element blocks, e4m3 scales)
// ahead of MXFP4 paired; the bf16 head narrows NVFP4's gap, paired.
#include <QtTest/QtTest>

#include <map>

#include "report/paired_gap.h"
#include "support/seed_spread.h"
#include "support/test_registry.h"
#include "train/trainer.h"

namespace test_formats_training {

using namespace plab;
using plab::test::Spread;
using plab::test::spreadOf;

namespace {

const std::vector<uint64_t> kSeeds = {1, 2, 3};

double finalValLoss(const PrecisionPlan& plan, const std::string& label, uint64_t seed) {
  RunConfig c = defaultRunConfig();
  c.name = "formats-" + label + "-s" + std::to_string(seed);
  c.plan.gemm_format = plan.gemm_format;
  c.plan.gemm_formats = plan.gemm_formats;
  c.seed = seed;
  c.steps = 30;
  c.eval_every = 0;  // evaluate at the end only
  c.eval_batches = 8;
  c.layer_stats_every = 1000;  // step 1 only
  c.update_window = 0;
  c.device = "cpu";
  Trainer t(c);
  const RunResult r = t.run({});
  if (r.status != RunStatus::Completed || !r.finalValLoss) qFatal("run %s failed: %s", c.name.c_str(), r.message.c_str());
  return *r.finalValLoss;
}

}  // namespace

class FormatsTrainingTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    for (uint64_t seed : kSeeds) {
      for (GemmFormat f : {GemmFormat::Bf16, GemmFormat::Fp8E4m3, GemmFormat::Mxfp8, GemmFormat::Mxfp4,
                           GemmFormat::Nvfp4}) {
        PrecisionPlan plan;
        plan.gemm_format = f;
        val_[gemmFormatId(f)].push_back(finalValLoss(plan, gemmFormatId(f), seed));
      }
      PrecisionPlan head;  // the 4-bit recipes' remedy: the last layer in higher precision
      head.gemm_format = GemmFormat::Nvfp4;
      head.setGemmSubtree("lm_head", GemmFormat::Bf16);
      val_["nvfp4-bf16-head"].push_back(finalValLoss(head, "nvfp4-bf16-head", seed));
    }
    bf16_ = spreadOf(val_["bf16"]);
    qInfo("bf16 val loss %.4f +- %.4f over %zu seeds", bf16_.mean, bf16_.sd, kSeeds.size());
    for (const auto& [label, v] : val_) {
      if (label == "bf16") continue;
      const report::PairedEstimate e = report::pairedEstimate(gap(label));
      qInfo("%-16s %+.4f (95 %% CI %+.4f to %+.4f, paired)", label.c_str(), e.mean, e.ciLow, e.ciHigh);
    }
  }

  void eightBitFormatsTrackBf16() {
    const double smallest4Bit = std::min(report::pairedEstimate(gap("mxfp4")).mean,
                                         report::pairedEstimate(gap("nvfp4")).mean);
    for (const char* f : {"fp8-e4m3", "mxfp8"}) {
      const double g = report::pairedEstimate(gap(f)).mean;
      QVERIFY2(std::abs(g) <= 3 * bf16_.sd, (std::string(f) + " gap " + std::to_string(g) + " vs spread " +
                                            std::to_string(bf16_.sd)).c_str());
      QVERIFY2(std::abs(g) <= 0.1 * smallest4Bit, (std::string(f) + " gap " + std::to_string(g)).c_str());
    }
  }

  void fourBitFormatsAreVisiblyBehind() {
    for (const char* f : {"mxfp4", "nvfp4"}) {
      const report::PairedEstimate e = report::pairedEstimate(gap(f));
      QVERIFY2(e.mean >= 5 * bf16_.sd, (std::string(f) + " gap " + std::to_string(e.mean) + " vs spread " +
                                       std::to_string(bf16_.sd)).c_str());
      QVERIFY2(e.beyondNoise() && e.ciLow > 0, f);
    }
  }

  void nvfp4IsAheadOfMxfp4() {
    std::vector<double> d;
    for (size_t i = 0; i < kSeeds.size(); ++i) d.push_back(val_["mxfp4"][i] - val_["nvfp4"][i]);
    const report::PairedEstimate e = report::pairedEstimate(d);
    QVERIFY2(e.ciLow > 0, ("mxfp4 - nvfp4 " + std::to_string(e.mean)).c_str());
  }

  // The remedy closes part of the gap only (here about a quarter): the
  // quantized attention and MLP products still cost most of it.
  void bf16HeadNarrowsNvfp4sGap() {
    std::vector<double> d;
    for (size_t i = 0; i < kSeeds.size(); ++i) d.push_back(val_["nvfp4"][i] - val_["nvfp4-bf16-head"][i]);
    const report::PairedEstimate e = report::pairedEstimate(d);
    QVERIFY2(e.ciLow > 0, ("nvfp4 - nvfp4-bf16-head " + std::to_string(e.mean)).c_str());
    QVERIFY(report::pairedEstimate(gap("nvfp4-bf16-head")).ciLow > 0);  // still behind bf16
  }

 private:
  std::vector<double> gap(const std::string& label) {
    std::vector<double> d;
    for (size_t i = 0; i < kSeeds.size(); ++i) d.push_back(val_[label][i] - val_["bf16"][i]);
    return d;
  }

  std::map<std::string, std::vector<double>> val_;
  Spread bf16_;
};

PLAB_TEST_APPLESS_MAIN(FormatsTrainingTest)
}  // namespace test_formats_training
#include "test_formats_training.moc"
