// The five optimizer modes: fp32 equals torch::optim::AdamW, and on a task
// whose updates are far below bf16's resolution plain bf16 stalls while Kahan
// summation, stochastic rounding and fp32 master weights train like fp32.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <cmath>

#include "precision/precision_adamw.h"
#include "util/errors.h"

using namespace plab;

namespace {

struct MlpImpl : torch::nn::Module {
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::Tensor scale;  // a bare parameter on the root module
  torch::Tensor sometimes;  // gets a gradient on even steps only
  MlpImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(6, 12));
    fc2 = register_module("fc2", torch::nn::Linear(12, 3));
    scale = register_parameter("scale", torch::ones({3}));
    sometimes = register_parameter("sometimes", torch::randn({2, 5}));
  }
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::tanh(fc1(x))) * scale; }
};
TORCH_MODULE(Mlp);

void copyParams(Mlp& from, Mlp& to) {
  torch::NoGradGuard g;
  auto src = from->named_parameters();
  for (auto& p : to->named_parameters()) p.value().copy_(src[p.key()]);
}

std::vector<TrainableParam> listParams(Mlp& net) {
  std::vector<TrainableParam> out;
  for (auto& p : net->named_parameters()) {
    const std::string name = p.key();
    const auto dot = name.rfind('.');
    out.push_back({name, dot == std::string::npos ? "" : name.substr(0, dot), p.value(), {}});
  }
  return out;
}

// The regression task of the physics tests: y = W* x + noise with |W| in
// [1, 4]. Adam moves each weight by about lr per step, well under half a bf16
// ulp there (1/256 .. 1/64), so plain bf16 cannot follow.
struct Task {
  static constexpr int64_t dim = 32, batch = 64, steps = 300;
  static constexpr double lr = 2e-3, noise = 0.2;
  torch::Tensor w0, target, evalX, evalY;
  std::vector<torch::Tensor> xs, ys;
  Task() {
    torch::manual_seed(123);
    const torch::Tensor sign = torch::randint(0, 2, {dim, dim}).mul(2).sub(1).to(torch::kFloat32);
    w0 = sign * torch::empty({dim, dim}).uniform_(1, 4);
    target = w0 + torch::empty({dim, dim}).uniform_(-0.2, 0.2);
    for (int64_t i = 0; i < steps; ++i) {
      xs.push_back(torch::randn({batch, dim}));
      ys.push_back(xs.back().matmul(target.t()) + noise * torch::randn({batch, dim}));
    }
    evalX = torch::randn({2048, dim});
    evalY = evalX.matmul(target.t()) + noise * torch::randn({2048, dim});
  }
};

const Task& task() {
  static const Task t;
  return t;
}

struct RunResult {
  double finalLoss = 0;
  double roundedAwayFraction = 0;  // over all steps
  torch::Tensor weight;            // final stored weight, fp32
};

RunResult runTask(OptimizerMode mode, uint64_t seed = 0) {
  const Task& t = task();
  torch::nn::Linear model(torch::nn::LinearOptions(Task::dim, Task::dim).bias(false));
  {
    torch::NoGradGuard g;
    model->weight.copy_(t.w0);
  }
  auto params = applyPrecisionPlan(*model, PrecisionPlan{}, mode);
  AdamWOptions options;
  options.weight_decay = 0;
  PrecisionAdamW opt(params, mode, options, seed);
  int64_t intended = 0, roundedAway = 0;
  for (int64_t i = 0; i < Task::steps; ++i) {
    opt.zeroGrad();
    const torch::Tensor pred = t.xs[i].matmul(model->weight.to(torch::kFloat32).t());
    torch::mse_loss(pred, t.ys[i]).backward();
    for (const auto& s : opt.step(Task::lr, true)) {
      intended += s.intendedNonZero;
      roundedAway += s.roundedAway;
    }
  }
  torch::NoGradGuard g;
  RunResult r;
  r.weight = model->weight.to(torch::kFloat32);
  r.finalLoss = torch::mse_loss(t.evalX.matmul(r.weight.t()), t.evalY).item<double>();
  r.roundedAwayFraction = double(roundedAway) / double(std::max<int64_t>(intended, 1));
  return r;
}

double initialLoss() {
  const Task& t = task();
  return torch::mse_loss(t.evalX.matmul(t.w0.to(torch::kBFloat16).to(torch::kFloat32).t()), t.evalY).item<double>();
}

// One bf16 param with weights at `value` and a constant gradient of 1: Adam's
// bias-corrected update is then exactly -lr per step (weight decay off).
struct ConstantGradient {
  torch::Tensor param;
  std::unique_ptr<PrecisionAdamW> opt;
  ConstantGradient(OptimizerMode mode, float value, int64_t n = 64) {
    param = torch::full({n}, value, torch::kBFloat16).set_requires_grad(true);
    AdamWOptions o;
    o.weight_decay = 0;
    opt = std::make_unique<PrecisionAdamW>(std::vector<TrainableParam>{{"w", "layer", param, {}}}, mode, o, 9);
  }
  std::vector<LayerUpdateStats> step(double lr) {
    param.mutable_grad() = torch::ones_like(param);
    return opt->step(lr, true);
  }
};

}  // namespace

class OptimizerModesTest : public QObject {
  Q_OBJECT
 private slots:
  void modeIdsAndLabels() {
    QCOMPARE(int(allOptimizerModes().size()), 5);
    QStringList ids;
    for (OptimizerMode m : allOptimizerModes()) {
      QVERIFY(optimizerModeFromId(optimizerModeId(m)) == m);
      QVERIFY(!optimizerModeLabel(m).empty());
      ids << QString::fromStdString(optimizerModeId(m));
    }
    QCOMPARE(ids, QStringList({"fp32", "bf16", "bf16-kahan", "bf16-sr", "mixed"}));
    QCOMPARE(QString::fromStdString(optimizerModeLabel(OptimizerMode::Bf16Kahan)), QString("bf16 + Kahan summation"));
    try {
      optimizerModeFromId("fp16");
      QFAIL("no exception");
    } catch (const ConfigError& e) {
      QVERIFY2(QString(e.what()).contains("fp16") && QString(e.what()).contains("bf16-kahan"), e.what());
    }
  }

  void adamWOptionsJson() {
    AdamWOptions o;
    o.lr = 3e-4;
    o.beta2 = 0.95;
    o.weight_decay = 0.1;
    o.bf16_moments = false;
    const AdamWOptions back = adamWOptionsFromJson(nlohmann::json::parse(toJson(o).dump()));
    QCOMPARE(back.lr, o.lr);
    QCOMPARE(back.beta1, o.beta1);
    QCOMPARE(back.beta2, o.beta2);
    QCOMPARE(back.eps, o.eps);
    QCOMPARE(back.weight_decay, o.weight_decay);
    QCOMPARE(back.bf16_moments, o.bf16_moments);
    QCOMPARE(adamWOptionsFromJson(nlohmann::json::parse(R"({"lr": 0.5})")).lr, 0.5);
    const std::pair<const char*, const char*> bad[] = {
        {R"({"learning_rate": 0.1})", "learning_rate"}, {R"({"lr": "0.1"})", "lr"},
        {R"({"bf16_moments": 1})", "bf16_moments"},     {R"({"beta2": 1.0})", "beta2"},
        {R"({"eps": 0})", "eps"},                       {R"([1])", "adamw"}};
    for (const auto& [json, key] : bad) {
      try {
        adamWOptionsFromJson(nlohmann::json::parse(json));
        QFAIL(json);
      } catch (const ConfigError& e) {
        QVERIFY2(QString(e.what()).contains(key), e.what());
      }
    }
  }

  void fp32MatchesTorchAdamW_data() {
    QTest::addColumn<double>("weightDecay");
    QTest::newRow("weight decay 0.1") << 0.1;
    QTest::newRow("no weight decay") << 0.0;
  }
  void fp32MatchesTorchAdamW() {
    QFETCH(double, weightDecay);
    torch::manual_seed(7);
    Mlp reference, ours;
    copyParams(reference, ours);
    const double lr = 1e-2;
    torch::optim::AdamW torchOpt(reference->parameters(),
                                 torch::optim::AdamWOptions(lr).betas({0.9, 0.99}).eps(1e-8).weight_decay(weightDecay));
    AdamWOptions options;
    options.lr = lr;
    options.beta2 = 0.99;
    options.weight_decay = weightDecay;
    PrecisionAdamW opt(listParams(ours), OptimizerMode::Fp32AdamW, options, 0);
    for (int step = 0; step < 100; ++step) {
      torchOpt.zero_grad();
      const torch::Tensor x = torch::randn({16, 6});
      const torch::Tensor y = torch::randn({16, 3});
      torch::mse_loss(reference->forward(x), y).backward();
      // The same gradients for both; "sometimes" only on even steps (per-param step counts).
      reference->sometimes.mutable_grad() = step % 2 == 0 ? torch::randn({2, 5}) : torch::Tensor();
      auto theirs = reference->named_parameters();
      for (auto& p : ours->named_parameters()) {
        const torch::Tensor& g = theirs[p.key()].grad();
        p.value().mutable_grad() = g.defined() ? g.clone() : torch::Tensor();
      }
      torchOpt.step();
      opt.step(lr, step % 10 == 0);  // stats must not disturb the arithmetic
    }
    auto theirs = reference->named_parameters();
    double maxDiff = 0;
    bool bitExact = true;
    for (auto& p : ours->named_parameters()) {
      maxDiff = std::max(maxDiff, (p.value() - theirs[p.key()]).abs().max().item<double>());
      bitExact = bitExact && torch::equal(p.value(), theirs[p.key()]);
    }
    qInfo("max |ours - torch::optim::AdamW| after 100 steps: %g (bit-exact: %s)", maxDiff, bitExact ? "yes" : "no");
    QVERIFY(bitExact);
  }

  void paramsWithoutGradAreSkipped() {
    torch::Tensor used = torch::full({4}, 1.0f).set_requires_grad(true);
    torch::Tensor idle = torch::full({4}, 1.0f).set_requires_grad(true);
    AdamWOptions o;
    o.weight_decay = 0.5;  // would move idle if it were touched
    PrecisionAdamW opt({{"used", "a", used, {}}, {"idle", "b", idle, {}}}, OptimizerMode::Fp32AdamW, o, 0);
    for (int i = 0; i < 5; ++i) {
      used.mutable_grad() = torch::ones({4});
      const auto stats = opt.step(1e-2, true);
      QCOMPARE(int(stats.size()), 1);  // no stats for a layer that did not step
      QCOMPARE(QString::fromStdString(stats[0].layer), QString("a"));
    }
    QVERIFY(torch::equal(idle, torch::full({4}, 1.0f)));
    // Its first real step is a first AdamW step (own bias correction): -lr*(1+wd... ) exactly like a fresh one.
    idle.mutable_grad() = torch::ones({4});
    used.mutable_grad() = torch::Tensor();
    opt.step(1e-2, false);
    torch::Tensor fresh = torch::full({4}, 1.0f).set_requires_grad(true);
    PrecisionAdamW freshOpt({{"fresh", "c", fresh, {}}}, OptimizerMode::Fp32AdamW, o, 0);
    fresh.mutable_grad() = torch::ones({4});
    freshOpt.step(1e-2, false);
    QVERIFY(torch::equal(idle, fresh));
    QCOMPARE(opt.stepCount(), int64_t(6));
  }

  void statsOfHandConstructedUpdates() {
    // Update 1e-4 on weights at 1.0: far below half a bf16 ulp (2^-9) -> all rounded away.
    ConstantGradient tiny(OptimizerMode::Bf16Plain, 1.0f);
    auto s = tiny.step(1e-4);
    QCOMPARE(int(s.size()), 1);
    QCOMPARE(s[0].numel, int64_t(64));
    QCOMPARE(s[0].intendedNonZero, int64_t(64));
    QCOMPARE(s[0].roundedAway, int64_t(64));
    QCOMPARE(s[0].effectiveNormSq, 0.0);
    QVERIFY(std::abs(s[0].intendedNormSq - 64 * 1e-8) < 64 * 1e-8 * 1e-4);
    QVERIFY(torch::equal(tiny.param, torch::full({64}, 1.0f, torch::kBFloat16)));
    // Update 0.1: every weight moves to the bf16 value nearest 0.9.
    ConstantGradient big(OptimizerMode::Bf16Plain, 1.0f);
    s = big.step(0.1);
    QCOMPARE(s[0].intendedNonZero, int64_t(64));
    QCOMPARE(s[0].roundedAway, int64_t(0));
    const double stored = big.param[0].item<float>();
    QCOMPARE(stored, double(torch::tensor(0.9f).to(torch::kBFloat16).item<float>()));
    QVERIFY(std::abs(s[0].effectiveNormSq - 64 * (1 - stored) * (1 - stored)) < 1e-9);
    // Zero gradient on half the elements: those have no intended update.
    torch::Tensor w = torch::full({8}, 1.0f, torch::kBFloat16).set_requires_grad(true);
    AdamWOptions o;
    o.weight_decay = 0;
    PrecisionAdamW opt({{"w", "half", w, {}}}, OptimizerMode::Bf16Plain, o, 0);
    w.mutable_grad() = torch::tensor({1, 1, 1, 1, 0, 0, 0, 0}, torch::kBFloat16);
    s = opt.step(0.1, true);
    QCOMPARE(s[0].intendedNonZero, int64_t(4));
    QCOMPARE(s[0].roundedAway, int64_t(0));
  }

  void kahanBufferCarriesTheLostUpdate() {
    // 200 steps of -1e-4 from 1.0: the ideal weight is 0.98 exactly in fp64.
    const double lr = 1e-4;
    ConstantGradient plain(OptimizerMode::Bf16Plain, 1.0f), kahan(OptimizerMode::Bf16Kahan, 1.0f);
    double worst = 0;
    for (int k = 1; k <= 200; ++k) {
      plain.step(lr);
      kahan.step(lr);
      const double ideal = 1.0 - k * lr;
      const torch::Tensor sum = kahan.param.to(torch::kFloat64) + kahan.opt->kahanCompensation("w").to(torch::kFloat64);
      worst = std::max(worst, (sum - ideal).abs().max().item<double>());
    }
    const double stored = kahan.param[0].item<float>();
    const double ulp = 1.0 / 256;  // bf16 spacing in [0.5, 1)
    qInfo("Kahan: stored %.6f, ideal 0.98, max |p + comp - ideal| over 200 steps %.3g (ulp %.3g)", stored, worst, ulp);
    QVERIFY(worst < 0.15 * ulp);  // analytic worst case: 200 steps x 2^-17 bf16 rounding of the buffer = 0.39 ulp
    QVERIFY(std::abs(stored - 0.98) <= ulp);
    QCOMPARE(plain.param[0].item<float>(), 1.0f);  // plain never moved
    QVERIFY(!plain.opt->kahanCompensation("w").defined());
  }

  void physicsPlainStallsOthersTrain() {
    const double start = initialLoss();
    const RunResult fp32 = runTask(OptimizerMode::Fp32AdamW);
    const RunResult plain = runTask(OptimizerMode::Bf16Plain);
    const RunResult kahan = runTask(OptimizerMode::Bf16Kahan);
    const RunResult sr = runTask(OptimizerMode::Bf16StochasticRounding);
    const RunResult mixed = runTask(OptimizerMode::Fp32MasterWeights);
    qInfo("eval loss: start %.4f | fp32 %.4f | bf16 plain %.4f (%.1fx fp32, %.0f%% rounded away) | kahan %.4f "
          "(%.0f%%) | sr %.4f (%.0f%%) | mixed %.4f",
          start, fp32.finalLoss, plain.finalLoss, plain.finalLoss / fp32.finalLoss, 100 * plain.roundedAwayFraction,
          kahan.finalLoss, 100 * kahan.roundedAwayFraction, sr.finalLoss, 100 * sr.roundedAwayFraction,
          mixed.finalLoss);
    QVERIFY(fp32.finalLoss < 0.5 * start);
    QVERIFY(plain.roundedAwayFraction > 0.9);
    QVERIFY(plain.finalLoss > 3 * fp32.finalLoss);
    QVERIFY(std::abs(kahan.finalLoss / fp32.finalLoss - 1) < 0.1);
    QVERIFY(std::abs(sr.finalLoss / fp32.finalLoss - 1) < 0.1);
    QVERIFY(std::abs(mixed.finalLoss / fp32.finalLoss - 1) < 0.05);  // evaluated with bf16 compute weights
  }

  void stochasticRoundingIsSeeded() {
    const RunResult a = runTask(OptimizerMode::Bf16StochasticRounding, 1);
    const RunResult b = runTask(OptimizerMode::Bf16StochasticRounding, 1);
    const RunResult c = runTask(OptimizerMode::Bf16StochasticRounding, 2);
    QVERIFY(torch::equal(a.weight, b.weight));
    QVERIFY(!torch::equal(a.weight, c.weight));
  }

  void mixedMasterStaysFp32ComputeCopyIsNearest() {
    ConstantGradient mixed(OptimizerMode::Fp32MasterWeights, 1.0f);
    for (int i = 0; i < 50; ++i) mixed.step(1e-4);
    const torch::Tensor master = mixed.opt->masterWeight("w");
    QCOMPARE(master.scalar_type(), torch::kFloat32);
    QVERIFY(std::abs(master[0].item<float>() - (1.0 - 50 * 1e-4)) < 1e-6);
    QVERIFY(torch::equal(mixed.param, master.to(torch::kBFloat16)));
  }

  void bf16MomentsFollowOptions() {
    torch::Tensor w = torch::ones({4}, torch::kBFloat16).set_requires_grad(true);
    AdamWOptions o;
    o.bf16_moments = false;
    PrecisionAdamW fp32Moments({{"w", "l", w, {}}}, OptimizerMode::Bf16Plain, o, 0);
    QCOMPARE(fp32Moments.measuredMemory().moments, int64_t(2 * 4 * 4));
    o.bf16_moments = true;
    PrecisionAdamW bf16Moments({{"w", "l", w, {}}}, OptimizerMode::Bf16Plain, o, 0);
    QCOMPARE(bf16Moments.measuredMemory().moments, int64_t(2 * 4 * 2));
  }

  void rejectsUnsupportedDtype() {
    torch::Tensor half = torch::ones({4}, torch::kFloat16).set_requires_grad(true);
    try {
      PrecisionAdamW({{"embed.weight", "embed", half, {}}}, OptimizerMode::Bf16Plain, AdamWOptions{}, 0);
      QFAIL("no exception");
    } catch (const ConfigError& e) {
      QVERIFY2(QString(e.what()).contains("embed.weight"), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(OptimizerModesTest)
#include "test_optimizer_modes.moc"
