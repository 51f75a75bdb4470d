// The moment error of the quantized moment store (docs/metrics.md, "Moment
// error"): per window and layer, ||stored - exact|| / ||exact|| of m and v,
// exact being the fp32 moment each step computed from the stored moment
// before it and the gradient. Held to an independent computation in tensor
// ops (torchao's compiled lerp: prev + (g - prev) * w, each operation rounded
// once in fp32) from the dequantized moments PrecisionAdamW hands out before
// and after each step; exactly 0 where the store keeps plain fp32 moments;
// unset where the moments are not quantized. reference_optimizer_states
// holds the same figure to torchao's own quantizer.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>
#include <map>

#include "precision/precision_adamw.h"
#include "support/test_registry.h"

namespace test_moment_error {

using namespace plab;

namespace {

TrainableParam makeParam(std::vector<int64_t> shape, torch::ScalarType dtype, const std::string& name) {
  torch::Tensor p = torch::randn(shape).to(dtype).set_requires_grad(true);
  return TrainableParam{name, name, p, {}};  // one layer per parameter: figures per parameter
}

struct Sums {
  double errorSq[2] = {0, 0}, exactSq[2] = {0, 0};
};

}  // namespace

class MomentErrorTest : public QObject {
  Q_OBJECT
 private slots:
  // For each quantized store, two windows of 5 steps on a quantized bf16 tensor, a quantized fp32 one,
  // a small bf16 one (plain bf16 moments, rounded to nearest) and a small
  // fp32 one (plain fp32 moments: exactly 0); three weight rules.
  void equalsIndependentComputation_data() {
    QTest::addColumn<int>("store");
    QTest::newRow("8bit") << int(MomentPrecision::Dynamic8bit);
    QTest::newRow("4bit") << int(MomentPrecision::Dynamic4bit);
    QTest::newRow("fp8") << int(MomentPrecision::Fp8);
  }
  void equalsIndependentComputation() {
    QFETCH(int, store);
    for (const OptimizerMode mode :
         {OptimizerMode::Bf16Nearest, OptimizerMode::Bf16Kahan, OptimizerMode::Bf16StochasticRounding}) {
      torch::manual_seed(11);
      std::vector<TrainableParam> params = {makeParam({32, 256}, torch::kBFloat16, "q_bf16"),
                                            makeParam({17, 256}, torch::kFloat32, "q_fp32"),
                                            makeParam({300}, torch::kBFloat16, "plain_bf16"),
                                            makeParam({4097}, torch::kFloat32, "plain_fp32")};
      AdamWOptions options;
      options.moments = MomentPrecision(store);
      UpdateStatsOptions stats;
      stats.window = 5;
      PrecisionAdamW opt(params, mode, options, 3, stats);
      const float w1 = static_cast<float>(1.0 - options.beta1), w2 = static_cast<float>(1.0 - options.beta2);
      std::map<std::string, Sums> sums;
      int windows = 0;
      for (int step = 1; step <= 10; ++step) {
        std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> exact;
        for (TrainableParam& tp : params) {
          // Gradients of varying scale, so that blocks' scales move.
          const double scale = std::pow(10.0, -1 - (step % 4));
          tp.param.mutable_grad() = (torch::randn(tp.param.sizes()) * scale).to(tp.param.scalar_type());
          const torch::Tensor g = tp.param.grad().to(torch::kFloat32);
          const torch::Tensor m = opt.firstMoment(tp.name).to(torch::kFloat32);
          const torch::Tensor v = opt.secondMoment(tp.name).to(torch::kFloat32);
          exact[tp.name] = {m + (g - m) * w1, v + (g * g - v) * w2};
        }
        const OptimizerStepStats out = opt.step(1e-3, false);
        for (TrainableParam& tp : params) {
          const auto& [m, v] = exact[tp.name];
          Sums& s = sums[tp.name];
          const torch::Tensor stored[2] = {opt.firstMoment(tp.name).to(torch::kFloat64),
                                           opt.secondMoment(tp.name).to(torch::kFloat64)};
          const torch::Tensor exact64[2] = {m.to(torch::kFloat64), v.to(torch::kFloat64)};
          for (int k = 0; k < 2; ++k) {
            s.errorSq[k] += (stored[k] - exact64[k]).square().sum().item<double>();
            s.exactSq[k] += exact64[k].square().sum().item<double>();
          }
        }
        if (step % 5 != 0) {
          QVERIFY(out.window.empty());
          continue;
        }
        ++windows;
        QCOMPARE(out.window.size(), params.size());
        for (const LayerWindowStats& w : out.window) {
          const Sums& s = sums.at(w.layer);
          for (int k = 0; k < 2; ++k) {
            const std::optional<double> figure = w.momentError(k);
            QVERIFY2(figure.has_value(), w.layer.c_str());
            const double expected = std::sqrt(s.errorSq[k] / s.exactSq[k]);
            const QString what = QString("%1 %2 %3 window %4: %5 vs independent %6")
                                     .arg(QString::fromStdString(optimizerModeId(mode)), QString::fromStdString(w.layer))
                                     .arg(k == 0 ? "m" : "v")
                                     .arg(windows)
                                     .arg(*figure, 0, 'g', 17)
                                     .arg(expected, 0, 'g', 17);
            if (w.layer == "plain_fp32") {
              QVERIFY2(*figure == 0.0, qPrintable(what));  // fp32 moments store what the step computed
            } else {
              QVERIFY2(expected > 1e-6, qPrintable(what));  // something was lost: the check can tell
              QVERIFY2(std::abs(*figure - expected) <= 1e-9 * expected, qPrintable(what));
            }
          }
        }
        sums.clear();
      }
      QCOMPARE(windows, 2);
    }
  }

  // Stores that do not quantize do not report a moment error: no 0 that was
  // not measured.
  void unsetWhereNotQuantized() {
    torch::manual_seed(5);
    for (const MomentPrecision moments : {MomentPrecision::Fp32, MomentPrecision::Bf16Stochastic}) {
      std::vector<TrainableParam> params = {makeParam({32, 256}, torch::kBFloat16, "a")};
      AdamWOptions options;
      options.moments = moments;
      UpdateStatsOptions stats;
      stats.window = 2;
      PrecisionAdamW opt(params, OptimizerMode::Bf16StochasticRounding, options, 3, stats);
      OptimizerStepStats out;
      for (int step = 0; step < 2; ++step) {
        params[0].param.mutable_grad() = torch::randn({32, 256}).to(torch::kBFloat16);
        out = opt.step(1e-3, false);
      }
      QCOMPARE(out.window.size(), size_t(1));
      QVERIFY(!out.window[0].momentError(0).has_value());
      QVERIFY(!totalOf(out.window).momentError(1).has_value());
    }
  }
};

PLAB_TEST_APPLESS_MAIN(MomentErrorTest)
}  // namespace test_moment_error
#include "test_moment_error.moc"
