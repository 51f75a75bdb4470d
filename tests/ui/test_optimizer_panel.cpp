// Optimizer panel: RunConfig -> widgets -> RunConfig keeps every field it
// owns, for every mode; edits in the widgets reach the config; the mode's
// description and the weight-decay warning follow the settings.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QtTest/QtTest>

#include "panels/optimizer_panel.h"
#include "support/test_registry.h"

namespace test_optimizer_panel {

using plab::ui::OptimizerPanel;

namespace {

plab::RunConfig unusualConfig(plab::OptimizerMode mode, int variant) {
  plab::RunConfig c;
  c.mode = mode;
  c.adamw.lr = 3.5e-4 * (variant + 1);
  c.adamw.beta1 = 0.85;
  c.adamw.beta2 = 0.975;
  c.adamw.eps = 1e-6;
  c.adamw.weight_decay = 0.05;
  c.adamw.moments = plab::allMomentPrecisions()[static_cast<size_t>(variant) % plab::allMomentPrecisions().size()];
  c.steps = 123 + variant;
  c.batch_size = 3;
  c.grad_accum = 4;
  c.seq_len = 48;
  c.lr_schedule = variant % 2 == 0 ? "constant" : "cosine";
  c.warmup_steps = 7;
  c.min_lr_ratio = 0.25;
  c.grad_clip = variant % 2 == 0 ? 0.0 : 2.5;
  c.eval_every = 11;
  c.layer_stats_every = 2;
  c.update_window = 7 + variant;
  c.seed = 42 + static_cast<uint64_t>(variant);
  c.device = variant % 2 == 0 ? "cpu" : "cuda:1";
  return c;
}

}  // namespace

class TestOptimizerPanel : public QObject {
  Q_OBJECT
 private slots:
  void offersEveryMode() {
    OptimizerPanel panel;
    // The six bf16 recipes, then fp16 and fp16-mixed.
    QCOMPARE(panel.modeCombo()->count(), int(plab::everyOptimizerMode().size()));
    QCOMPARE(panel.modeCombo()->count(), 8);
    for (int i = 0; i < panel.modeCombo()->count(); ++i)
      QCOMPARE(panel.modeCombo()->itemText(i),
               QString::fromStdString(plab::optimizerModeLabel(plab::everyOptimizerMode()[static_cast<size_t>(i)])));
  }

  void roundTripEveryMode() {
    int variant = 0;
    for (auto mode : plab::everyOptimizerMode()) {
      const plab::RunConfig in = unusualConfig(mode, variant++);
      OptimizerPanel panel;
      panel.setFrom(in);
      plab::RunConfig out;
      out.name = "untouched";
      panel.applyTo(out);
      QCOMPARE(out.mode, in.mode);
      QCOMPARE(out.adamw.lr, in.adamw.lr);
      QCOMPARE(out.adamw.beta1, in.adamw.beta1);
      QCOMPARE(out.adamw.beta2, in.adamw.beta2);
      QCOMPARE(out.adamw.eps, in.adamw.eps);
      QCOMPARE(out.adamw.weight_decay, in.adamw.weight_decay);
      QCOMPARE(out.adamw.moments, in.adamw.moments);
      QCOMPARE(out.update_window, in.update_window);
      QCOMPARE(out.steps, in.steps);
      QCOMPARE(out.batch_size, in.batch_size);
      QCOMPARE(out.grad_accum, in.grad_accum);
      QCOMPARE(out.seq_len, in.seq_len);
      QCOMPARE(out.lr_schedule, in.lr_schedule);
      QCOMPARE(out.warmup_steps, in.warmup_steps);
      QCOMPARE(out.min_lr_ratio, in.min_lr_ratio);
      QCOMPARE(out.grad_clip, in.grad_clip);
      QCOMPARE(out.eval_every, in.eval_every);
      QCOMPARE(out.layer_stats_every, in.layer_stats_every);
      QCOMPARE(out.seed, in.seed);
      QCOMPARE(out.device, in.device);
      QCOMPARE(out.name, std::string("untouched"));  // not the panel's field
      // The JSON form of everything the panel owns is identical too.
      plab::RunConfig expected = in;
      expected.name = out.name;
      QCOMPARE(QString::fromStdString(out.toJson().dump()), QString::fromStdString(expected.toJson().dump()));
    }
  }

  void widgetEditsReachTheConfig() {
    OptimizerPanel panel;
    panel.setFrom(plab::RunConfig{});
    auto* lr = panel.findChild<QLineEdit*>("learningRate");
    QVERIFY(lr);
    lr->setText("2e-5");
    panel.stepsSpin()->setValue(5);
    panel.findChild<QComboBox*>("moments")->setCurrentText("fp32");
    panel.findChild<QComboBox*>("lrSchedule")->setCurrentText("constant");
    QSignalSpy changed(&panel, &OptimizerPanel::settingsChanged);
    panel.setMode(plab::OptimizerMode::Bf16StochasticRounding);
    QVERIFY(changed.count() >= 1);
    plab::RunConfig c;
    panel.applyTo(c);
    QCOMPARE(c.adamw.lr, 2e-5);
    QCOMPARE(c.steps, int64_t(5));
    QCOMPARE(c.adamw.moments, plab::MomentPrecision::Fp32);
    QCOMPARE(c.lr_schedule, std::string("constant"));
    QCOMPARE(c.mode, plab::OptimizerMode::Bf16StochasticRounding);
  }

  void explainsTheModeAndWarnsWhenDecayVanishes() {
    OptimizerPanel panel;
    plab::RunConfig c;
    c.mode = plab::OptimizerMode::Bf16Plain;
    c.adamw.lr = 1e-3;
    c.adamw.weight_decay = 0.1;  // lr x wd = 1e-4 < 2^-9
    c.lr_schedule = "constant";
    c.warmup_steps = 0;
    panel.setFrom(c);
    auto* summary = panel.findChild<QLabel*>("modeSummary");
    auto* warning = panel.findChild<QLabel*>("decayWarning");
    QVERIFY(summary && warning);
    QVERIFY(summary->text().contains("torch::optim::AdamW on bf16"));
    QVERIFY(!warning->isHidden());
    QVERIFY(warning->text().contains("rounded away"));
    QVERIFY(warning->text().contains("effective 0 per step, asked 0.0001"));
    // torch's fused step rounds the decay with the update: the note says so,
    // and the choice reaches the config.
    QVERIFY(warning->text().contains("gradients do not bring it back"));
    auto* torchStep = panel.findChild<QComboBox*>("torchStep");
    QVERIFY(torchStep);
    torchStep->setCurrentText("fused");
    QVERIFY(!warning->text().contains("gradients do not bring it back"));
    QVERIFY(warning->text().contains("the decay is rounded with them"));
    plab::RunConfig fused;
    panel.applyTo(fused);
    QCOMPARE(fused.adamw.torchStep, plab::TorchStep::Fused);
    torchStep->setCurrentText("default");
    QVERIFY(!panel.findChild<QComboBox*>("moments")->isEnabled());  // torch's state follows the params
    panel.setMode(plab::OptimizerMode::Bf16Kahan);  // decay inside the compensated sum: it arrives
    QVERIFY(warning->isHidden());
    QVERIFY(summary->text().contains("not identical"));
    QVERIFY(panel.findChild<QComboBox*>("moments")->isEnabled());
    QCOMPARE(panel.findChild<QComboBox*>("moments")->itemText(0), QString("default (bf16-sr)"));
    panel.setMode(plab::OptimizerMode::Bf16Plain);
    panel.findChild<QLineEdit*>("learningRate")->setText("0.1");  // lr x wd = 0.01: survives
    QVERIFY(warning->isHidden());
    panel.findChild<QLineEdit*>("learningRate")->setText("0.02");  // 0.002: 96 % of weights keep their value
    QVERIFY(!warning->isHidden());
    QVERIFY(warning->text().contains("96 % of the weights never decay"));
  }

  // The warning covers the whole lr schedule: a cosine whose peak decays
  // fine crosses 2^-8 and 2^-9 on its way down.
  void warnsForTheScheduleNotOnlyThePeak() {
    OptimizerPanel panel;
    plab::RunConfig c;
    c.mode = plab::OptimizerMode::Bf16Plain;
    c.adamw.lr = 0.1;
    c.adamw.weight_decay = 0.1;  // lr x wd = 0.01 at the peak
    c.lr_schedule = "constant";
    c.warmup_steps = 0;
    c.steps = 200;
    panel.setFrom(c);
    auto* warning = panel.findChild<QLabel*>("decayWarning");
    QVERIFY(warning->isHidden());
    panel.findChild<QComboBox*>("lrSchedule")->setCurrentText("cosine");  // floor 0.1 x lr: 0.001
    QVERIFY(!warning->isHidden());
    QVERIFY(warning->text().contains("from step"));
    // Kahan's bf16 buffer loses decay at fine-tuning settings (lr x wd = 1e-6); SR keeps it.
    panel.findChild<QComboBox*>("lrSchedule")->setCurrentText("constant");
    panel.setMode(plab::OptimizerMode::Bf16Kahan);
    panel.findChild<QLineEdit*>("learningRate")->setText("1e-4");
    panel.findChild<QDoubleSpinBox*>("weightDecay")->setValue(0.01);
    QVERIFY(!warning->isHidden());
    panel.setMode(plab::OptimizerMode::Bf16StochasticRounding);
    QVERIFY(warning->isHidden());
  }
};

PLAB_TEST_MAIN(TestOptimizerPanel)
}  // namespace test_optimizer_panel
#include "test_optimizer_panel.moc"
