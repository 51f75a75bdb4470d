// "Suggest a plan" (issue 21.4): the advisor dialog shows an Advice (the
// frontier with the chosen plan marked, every candidate's verdict, the shadow
// figures per layer), Apply sets the selected candidate's mode and plan in
// the window, and a real advisor run on the embedded model goes through the
// dialog on its own thread with progress, and stops when asked.
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest/QtTest>
#include <algorithm>

#include "advisor/advice_report.h"
#include "advisor/advisor_dialog.h"
#include "advisor/moment_stores.h"
#include "advisor/frontier_chart.h"
#include "main_window.h"
#include "window_waits.h"
#include "support/test_registry.h"
#include "util/json_file.h"
#include "ui/window_helpers.h"
#include "panels/layer_tree_panel.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"

namespace test_advisor_dialog {

using namespace plab;
using namespace plab::ui;

namespace {

AdvisorCandidate candidate(const std::string& name, OptimizerMode mode, double saved, std::optional<double> loss,
                           const std::string& rejected) {
  AdvisorCandidate c;
  c.name = name;
  c.config = defaultRunConfig();
  c.config.mode = mode;
  c.memorySaved = saved;
  c.lossVsFp32 = loss;
  if (loss) {
    c.ciLow = *loss - 0.001;
    c.ciHigh = *loss + 0.001;
    c.valLoss = {2.0 + *loss, 2.1 + *loss};
  }
  c.rejected = rejected;
  return c;
}

// Three confirmed candidates (the middle one chosen) and one not run.
Advice handMadeAdvice() {
  Advice a;
  a.completed = true;
  a.seeds = {1, 2};
  a.tolerance = 0.005;
  a.toleranceSource = "floor";
  a.fp32ValLoss = {2.0, 2.1};
  a.fp32Spread = 0.001;
  a.candidates.push_back(candidate("bf16-nearest", OptimizerMode::Bf16Nearest, 0.5, 0.05, "over tolerance by 0.045 nats"));
  a.candidates.push_back(candidate("bf16-sr", OptimizerMode::Bf16StochasticRounding, 0.5, 0.0002, ""));
  a.candidates.back().config.plan.setSubtree("transformer.h.0.mlp", LayerPrecision::Fp32);
  a.candidates.push_back(candidate("bf16-kahan", OptimizerMode::Bf16Kahan, 0.375, 0.0001, "more memory than the chosen"));
  a.candidates.push_back(candidate("mixed", OptimizerMode::Fp32MasterWeights, 0.0, std::nullopt, ""));
  a.chosen = 1;
  LayerShadowFigures l;
  l.layer = "transformer.h.0.mlp.c_fc";
  l.elements = 4096;
  l.lostNearest = 0.9;
  l.lostNearestSe = 0.01;
  l.belowHalfUlp = 0.8;
  a.layers.push_back(l);
  return a;
}

// The moment-store stage of an advice as the advisor builds it
// (momentStoreVerdicts, the core's own words): 8bit confirmed within the
// tolerance and chosen, 4bit confirmed over it, fp8 not tried.
Advice adviceWithMomentStores() {
  Advice a = handMadeAdvice();
  const AdvisorCandidate plan = a.candidates[1];
  auto variant = [&](MomentPrecision store, int64_t bytes, double saved) {
    AdvisorCandidate v = plan;
    v.name = plan.name + " + " + momentPrecisionId(store) + " moments";
    v.config.adamw.moments = store;
    v.stateBytes = bytes;
    v.memorySaved = saved;
    v.valLoss.clear();
    v.lossVsFp32.reset();
    v.rejected.clear();
    return v;
  };
  AdvisorCandidate m8 = variant(MomentPrecision::Dynamic8bit, 790000, 0.605);
  m8.valLoss = {2.0001, 2.1001};
  m8.lossVsFp32 = 0.0001;
  m8.ciLow = -0.0004;
  m8.ciHigh = 0.0006;
  m8.momentErrorM = 0.0102;
  m8.momentErrorV = 0.0021;
  AdvisorCandidate m4 = variant(MomentPrecision::Dynamic4bit, 690000, 0.657);
  m4.valLoss = {2.0046, 2.1046};
  m4.lossVsFp32 = 0.0046 + 0.005;  // over the tolerance
  m4.ciLow = 0.0091;
  m4.ciHigh = 0.0101;
  m4.momentErrorM = 0.095;
  m4.momentErrorV = 0.0065;
  m4.rejected = "over the tolerance";
  AdvisorCandidate f8 = variant(MomentPrecision::Fp8, 790000, 0.605);
  f8.rejected = "not tried: 8bit moments are within the tolerance and store at most as many bytes";
  a.candidates.insert(a.candidates.begin(), {m4, m8});
  a.chosen = 1;  // m8
  a.momentStores = momentStoreVerdicts(plan, {m4, m8, f8}, a.candidates, a.chosen, a.tolerance);
  return a;
}

// The advice as advice.json holds it: written by the advisor's writer and
// read back by the reader the app uses (advisor.h, torch-free).
Advice throughAdviceJson(const Advice& advice, const QString& dir) {
  writeAdviceFiles(dir.toStdString(), advice, defaultRunConfig());
  const JsonFile read = readJsonFile(QDir(dir).filePath("advice.json").toStdString());
  if (!read.ok()) qFatal("advice.json: %s", read.problem.c_str());
  return adviceFromJson(read.value);
}

// Every row of the dialog's moment-store table says what its verdict says,
// and a store not run shows no figure as measured.
void checkMomentStoreRows(AdvisorDialog& dialog, const Advice& advice) {
  QTableWidget* t = dialog.momentStoresTable();
  QCOMPARE(t->rowCount(), static_cast<int>(advice.momentStores.size()));
  for (int row = 0; row < t->rowCount(); ++row) {
    const MomentStoreVerdict& v = advice.momentStores[static_cast<size_t>(row)];
    const QString what = QString::fromStdString(v.reason);
    QCOMPARE(t->item(row, 0)->text(), QString::fromStdString(momentPrecisionId(v.store)));
    QCOMPARE(t->item(row, 1)->text(), QString(v.inPlan ? "in the plan" : v.confirmed ? "left out" : "not run"));
    QCOMPARE(t->item(row, 5)->text(), what);
    QCOMPARE(t->item(row, 5)->toolTip(), what);
    if (!v.confirmed) {
      QCOMPARE(t->item(row, 3)->text(), QString("not run"));
      QCOMPARE(t->item(row, 4)->text(), QString("not run"));
      QVERIFY2(t->item(row, 2)->text() == "–" || t->item(row, 2)->text().endsWith("(estimate)"), qPrintable(what));
    } else {
      QVERIFY2(v.lossVsFp32 && t->item(row, 3)->text() != "not run", qPrintable(what));
      QVERIFY2(t->item(row, 4)->text() != "not run", qPrintable(what));
      QVERIFY2(!t->item(row, 2)->text().contains("estimate"), qPrintable(what));
    }
    QCOMPARE(t->item(row, 0)->font().bold(), v.inPlan);
  }
}

// The advisor's runs small: a few steps of batch 2 x 16.
void makeRunsTiny(MainWindow& w) {
  RunConfig c = w.currentConfig();
  c.batch_size = 2;
  c.seq_len = 16;
  c.warmup_steps = 0;
  c.eval_every = 0;
  c.eval_batches = 1;
  c.update_window = 2;
  c.layer_stats_every = 1;
  c.device = "cpu";
  w.optimizerPanel()->setFrom(c);
}

}  // namespace

class TestAdvisorDialog : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void showsTheFrontierTheVerdictsAndTheShadowFigures() {
    AdvisorDialog dialog(defaultRunConfig());
    dialog.showAdvice(handMadeAdvice());
    QCOMPARE(dialog.frontierChart()->pointCount(), 3 + 1);  // three confirmed, the chosen drawn again on top
    QCOMPARE(dialog.frontierChart()->chosenGraph()->dataCount(), 1);
    QCOMPARE(dialog.frontierChart()->chosenGraph()->data()->at(0)->key, 50.0);
    QCOMPARE(dialog.frontierChart()->chosenGraph()->data()->at(0)->value, 0.0002);
    QVERIFY(dialog.frontierChart()->toleranceLine()->visible());
    QTableWidget* t = dialog.candidatesTable();
    QCOMPARE(t->rowCount(), 4);
    QVERIFY(t->item(1, 3)->text().startsWith("chosen"));
    QCOMPARE(t->item(0, 3)->text(), QString("over tolerance by 0.045 nats"));
    QCOMPARE(t->item(3, 2)->text(), QString("not run"));
    QCOMPARE(t->item(1, 1)->text(), QString("50.0 %"));
    QCOMPARE(t->currentRow(), 1);  // the chosen plan is selected for Apply
    QVERIFY(dialog.applyButton()->isEnabled());
    QVERIFY(dialog.verdictLabel()->text().contains("Chosen: bf16-sr"));
    QCOMPARE(dialog.layersTable()->rowCount(), 1);
    QCOMPARE(dialog.layersTable()->item(0, 2)->text(), QString("90.0 % ± 1.0 %"));
    QCOMPARE(dialog.layersTable()->item(0, 5)->text(), QString("80.0 %"));
    // No plan within the tolerance: said so, nothing marked.
    Advice none = handMadeAdvice();
    none.chosen = -1;
    dialog.showAdvice(none);
    QCOMPARE(dialog.frontierChart()->chosenGraph()->dataCount(), 0);
    QVERIFY(dialog.verdictLabel()->text().contains("No candidate stayed within the tolerance"));
  }

  // Issue 40.5 in the app: the moment stores' verdicts from advice.json,
  // in report.html's words; a store not run shows "not run" and why.
  void momentStoresFromAdviceJson() {
    QTemporaryDir dir;
    const Advice advice = throughAdviceJson(adviceWithMomentStores(), dir.path());
    QCOMPARE(advice.momentStores.size(), size_t(3));
    AdvisorDialog dialog(defaultRunConfig());
    dialog.showAdvice(advice);
    checkMomentStoreRows(dialog, advice);
    QTableWidget* t = dialog.momentStoresTable();
    // 4bit: run, over the tolerance, its gap beyond seed noise.
    QCOMPARE(t->item(0, 0)->text(), QString("4bit"));
    QCOMPARE(t->item(0, 1)->text(), QString("left out"));
    QCOMPARE(t->item(0, 2)->text(), QString("65.7 %"));
    QCOMPARE(t->item(0, 3)->text(), QString("+0.00960 (+0.00910 to +0.0101)\nbeyond seed noise"));
    QCOMPARE(t->item(0, 4)->text(), QString("m 9.50 %, v 0.65 %"));
    QVERIFY(t->item(0, 5)->text().startsWith("left out: loss "));
    // 8bit: in the plan, within seed noise.
    QCOMPARE(t->item(1, 1)->text(), QString("in the plan"));
    QCOMPARE(t->item(1, 3)->text(), QString("+0.000100 (-0.000400 to +0.000600)\nwithin seed noise"));
    QCOMPARE(t->item(1, 4)->text(), QString("m 1.02 %, v 0.21 %"));
    QVERIFY(t->item(1, 0)->font().bold());
    // fp8: not run; the estimate said to be one.
    QCOMPARE(t->item(2, 1)->text(), QString("not run"));
    QCOMPARE(t->item(2, 2)->text(), QString("60.5 % (estimate)"));
    QCOMPARE(t->item(2, 3)->text(), QString("not run"));
    QCOMPARE(t->item(2, 4)->text(), QString("not run"));
    QVERIFY(t->item(2, 5)->text().startsWith("not tried: "));
    QVERIFY(dialog.verdictLabel()->text().contains("4bit left out, 8bit in the plan, fp8 not run"));
    QVERIFY(t->item(2, 2)->toolTip().contains("module-tree estimate"));
    // A store on part of the model, not run: its layers named, its estimate said to be the scaled saving.
    Advice part = advice;
    part.momentStores[2].layers = {"transformer.h.0.mlp.c_fc", "transformer.wte"};
    dialog.showAdvice(part);
    QCOMPARE(t->item(2, 0)->text(), QString("fp8 (2 layers)"));
    QVERIFY(t->item(2, 0)->toolTip().contains("transformer.h.0.mlp.c_fc, transformer.wte"));
    QVERIFY(t->item(2, 2)->toolTip().contains("scaled by these layers' share"));
    QVERIFY(!t->item(2, 2)->toolTip().contains("module-tree"));
    // An advice without the stage (written before it): an empty table, no sentence.
    Advice before = advice;
    before.momentStores.clear();
    dialog.showAdvice(before);
    QCOMPARE(t->rowCount(), 0);
    QVERIFY(!dialog.verdictLabel()->text().contains("Moment stores"));
  }

  // The stores ticked are the advisor's --moment-stores; none ticked is none.
  void momentStoreChoiceGoesToTheAdvisor() {
    AdvisorDialog dialog(defaultRunConfig());
    QCOMPARE(dialog.options().momentStores, AdvisorOptions{}.momentStores);  // 8bit, 4bit, fp8
    dialog.momentStoreCheck(MomentPrecision::Dynamic4bit)->setChecked(false);
    QCOMPARE(dialog.options().momentStores,
             (std::vector<MomentPrecision>{MomentPrecision::Dynamic8bit, MomentPrecision::Fp8}));
    for (MomentPrecision s : AdvisorOptions{}.momentStores) dialog.momentStoreCheck(s)->setChecked(false);
    QVERIFY(dialog.options().momentStores.empty());
    QVERIFY(dialog.momentStoreCheck(MomentPrecision::Fp32) == nullptr);
  }

  void applySetsTheSelectedModeAndPlan() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(plab::test::shownWithModel(w));
    QTest::mouseClick(w.layerPanel()->suggestButton(), Qt::LeftButton);
    AdvisorDialog* dialog = w.advisorDialog();
    QVERIFY(dialog && dialog->isVisible());
    dialog->showAdvice(handMadeAdvice());
    QTest::mouseClick(dialog->applyButton(), Qt::LeftButton);
    QVERIFY(w.currentConfig().mode == OptimizerMode::Bf16StochasticRounding);
    QVERIFY(w.currentConfig().plan.overrides.count("transformer.h.0.mlp"));
    QCOMPARE(w.layerPanel()->planName(), QString("custom"));
    // Another row: that candidate.
    dialog->candidatesTable()->selectRow(2);
    QTest::mouseClick(dialog->applyButton(), Qt::LeftButton);
    QVERIFY(w.currentConfig().mode == OptimizerMode::Bf16Kahan);
    QVERIFY(w.currentConfig().plan.overrides.empty());
  }

  // The real advisor on the embedded model, 4 steps x 2 seeds, on the
  // dialog's thread: progress moves, the window stays responsive, the advice
  // arrives with every candidate judged, and Apply takes the chosen one.
  void realAdvisorRunEndToEnd() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    w.resize(1600, 1000);
    QVERIFY(plab::test::shownWithModel(w));
    makeRunsTiny(w);
    w.openAdvisor();
    AdvisorDialog* dialog = w.advisorDialog();
    QVERIFY(dialog);
    dialog->stepsSpin()->setValue(4);
    dialog->seedsSpin()->setValue(2);
    dialog->momentStoreCheck(MomentPrecision::Dynamic4bit)->setChecked(false);  // 8bit and fp8 only
    QSignalSpy applied(dialog, &AdvisorDialog::planApplied);
    QTest::mouseClick(dialog->startButton(), Qt::LeftButton);
    QVERIFY(dialog->running());
    QVERIFY(!dialog->startButton()->isEnabled());
    QVERIFY(dialog->stopButton()->isEnabled());
    QVERIFY(!dialog->momentStoreCheck(MomentPrecision::Dynamic8bit)->isEnabled());
    int maxProgress = 0;
    QVERIFY(QTest::qWaitFor([&] {
      maxProgress = std::max(maxProgress, dialog->progressBar()->value());
      return !dialog->running();
    }, 300000));
    const Advice& advice = dialog->advice();
    QVERIFY2(advice.completed, advice.message.c_str());
    QVERIFY(maxProgress > 0);
    QCOMPARE(dialog->progressBar()->value(), dialog->progressBar()->maximum());
    QVERIFY(advice.candidates.size() >= 2);
    QCOMPARE(dialog->candidatesTable()->rowCount(), static_cast<int>(advice.candidates.size()));
    QVERIFY(!advice.layers.empty());
    QCOMPARE(advice.seeds.size(), size_t(2));
    // The stores ticked, and no other, were judged; the table shows each,
    // and so does a dialog given the advice.json written from it.
    std::vector<MomentPrecision> judged;
    for (const MomentStoreVerdict& v : advice.momentStores) judged.push_back(v.store);
    std::sort(judged.begin(), judged.end());
    QCOMPARE(judged, (std::vector<MomentPrecision>{MomentPrecision::Dynamic8bit, MomentPrecision::Fp8}));
    checkMomentStoreRows(*dialog, advice);
    // With a plan within the tolerance the cheapest store is run (on the
    // embedded model: 8bit, in the plan, and fp8 not run as it saves no more).
    if (advice.chosen >= 0)
      QVERIFY(std::any_of(advice.momentStores.begin(), advice.momentStores.end(),
                          [](const MomentStoreVerdict& v) { return v.confirmed; }));
    {
      QTemporaryDir dir;
      const Advice read = throughAdviceJson(advice, dir.path());
      AdvisorDialog again(defaultRunConfig());
      again.showAdvice(read);
      checkMomentStoreRows(again, read);
      for (int row = 0; row < again.momentStoresTable()->rowCount(); ++row)
        for (int col = 0; col < again.momentStoresTable()->columnCount(); ++col)
          QCOMPARE(again.momentStoresTable()->item(row, col)->text(), dialog->momentStoresTable()->item(row, col)->text());
    }
    QVERIFY(dialog->momentStoreCheck(MomentPrecision::Dynamic8bit)->isEnabled());
    for (size_t i = 0; i < advice.candidates.size(); ++i)
      if (static_cast<int>(i) != advice.chosen)
        QVERIFY2(!advice.candidates[i].rejected.empty(), advice.candidates[i].name.c_str());
    // Every reason is true of the figures: "saves less" only when it does;
    // an equally cheap plan within tolerance has a higher loss, or (at an
    // equal loss) more layers at risk in the shadow, or compensates more
    // elements, or loses more of the update (at
    // 4 steps nearest and SR both stay within tolerance).
    if (advice.chosen >= 0) {
      const AdvisorCandidate& chosen = advice.candidates[static_cast<size_t>(advice.chosen)];
      for (const AdvisorCandidate& c : advice.candidates) {
        if (c.rejected.find("saves less") != std::string::npos) QVERIFY2(c.memorySaved < chosen.memorySaved, c.name.c_str());
        if (c.rejected.find("as cheap as") != std::string::npos) {
          QCOMPARE(c.stateBytes, chosen.stateBytes);
          if (c.rejected.find("its loss is higher") != std::string::npos)
            QVERIFY2(*c.lossVsFp32 > *chosen.lossVsFp32, c.name.c_str());
          else if (c.rejected.find("at risk") != std::string::npos || c.rejected.find("risk threshold") != std::string::npos)
            QVERIFY2(c.layersAtRisk > chosen.layersAtRisk, c.name.c_str());
          else if (c.rejected.find("compensates") != std::string::npos)
            QVERIFY2(c.layersAtRisk == chosen.layersAtRisk && c.compensatedElements > chosen.compensatedElements,
                     c.name.c_str());
          else
            QVERIFY2(c.predictedUpdateLost && chosen.predictedUpdateLost &&
                         *c.predictedUpdateLost >= *chosen.predictedUpdateLost,
                     c.name.c_str());
        }
      }
    }
    if (advice.chosen >= 0) {
      QCOMPARE(dialog->frontierChart()->chosenGraph()->dataCount(), 1);
      QTest::mouseClick(dialog->applyButton(), Qt::LeftButton);
      QCOMPARE(applied.count(), 1);
      QVERIFY(w.currentConfig().mode == advice.candidates[static_cast<size_t>(advice.chosen)].config.mode);
      QVERIFY(w.currentConfig().plan.recipes == advice.candidates[static_cast<size_t>(advice.chosen)].config.plan.recipes);
      // The GEMM formats tried on the chosen plan, and the suggested one applied.
      QCOMPARE(advice.gemmCandidates.size(), AdvisorOptions{}.gemmFormats.size());
      QVERIFY(dialog->verdictLabel()->text().contains("GEMM formats"));
      QCOMPARE(dialog->applyGemmButton()->isEnabled(), advice.gemmChosen >= 0);
      if (advice.gemmChosen >= 0) {
        const GemmFormat suggested = advice.gemmCandidates[static_cast<size_t>(advice.gemmChosen)].config.plan.gemm_format;
        QTest::mouseClick(dialog->applyGemmButton(), Qt::LeftButton);
        QCOMPARE(applied.count(), 2);
        QVERIFY(w.currentConfig().plan.gemm_format == suggested);
        QCOMPARE(w.layerPanel()->itemForPath("transformer.h.0.mlp.c_fc")->text(LayerTreePanel::GemmFormatColumn),
                 QString::fromStdString(gemmFormatId(suggested)));
      }
    }
    if (!qEnvironmentVariableIsEmpty("PLAB_SCREENSHOT")) dialog->move(w.geometry().topLeft() + QPoint(300, 60));
    QVERIFY(plab::test::saveScreenIfAsked(1000));
  }

  // Issue 21's "a model built from a config": a random-init Llama from a
  // config.json (bytes tokenizer) through the model picker, the real
  // advisor on it in the dialog, and Apply fills the tree with Llama paths.
  void realAdvisorOnAModelBuiltFromAConfig() {
    QTemporaryDir workspace, modelDir;
    QFile config(modelDir.filePath("config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(R"({"model_type": "llama", "vocab_size": 260, "hidden_size": 32, "intermediate_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "max_position_embeddings": 64, "tie_word_embeddings": false})");
    config.close();
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(plab::test::shownWithModel(w));
    ModelSpec spec;
    spec.source = "config";
    spec.path = config.fileName().toStdString();
    spec.tokenizer = "bytes";
    w.modelPicker()->setModelSpec(spec);
    QTRY_VERIFY_WITH_TIMEOUT(!w.modelPicker()->isInspecting(), 60000);
    QVERIFY2(w.modelPicker()->errorText().isEmpty(), qPrintable(w.modelPicker()->errorText()));
    QVERIFY(w.modelPicker()->hasOverview());
    QVERIFY(w.layerPanel()->itemForPath("model.layers.1.mlp.down_proj") != nullptr);
    makeRunsTiny(w);
    w.openAdvisor();
    AdvisorDialog* dialog = w.advisorDialog();
    QVERIFY(dialog);
    dialog->stepsSpin()->setValue(4);
    dialog->seedsSpin()->setValue(2);
    QTest::mouseClick(dialog->startButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return !dialog->running(); }, 300000));
    const Advice& advice = dialog->advice();
    QVERIFY2(advice.completed, advice.message.c_str());
    QCOMPARE(advice.candidates.front().config.model.source, std::string("config"));
    bool sawLlamaLayer = false;
    for (const LayerShadowFigures& l : advice.layers) sawLlamaLayer |= l.layer.rfind("model.layers.", 0) == 0;
    QVERIFY(sawLlamaLayer);
    QVERIFY2(advice.chosen >= 0, advice.message.c_str());
    QTest::mouseClick(dialog->applyButton(), Qt::LeftButton);
    const RunConfig& chosen = advice.candidates[static_cast<size_t>(advice.chosen)].config;
    QVERIFY(w.currentConfig().mode == chosen.mode);
    QVERIFY(w.currentConfig().plan.recipes == chosen.plan.recipes);
    QCOMPARE(w.currentConfig().model.source, std::string("config"));
  }

  void stopEndsTheAdvisorEarly() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(plab::test::shownWithModel(w));
    makeRunsTiny(w);
    w.openAdvisor();
    AdvisorDialog* dialog = w.advisorDialog();
    dialog->stepsSpin()->setValue(100000);  // would run for hours
    QTest::mouseClick(dialog->startButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return dialog->progressBar()->maximum() > 0; }, 60000));
    QTest::mouseClick(dialog->stopButton(), Qt::LeftButton);
    QVERIFY(QTest::qWaitFor([&] { return !dialog->running(); }, 60000));
    QVERIFY(!dialog->advice().completed);
    QVERIFY(dialog->startButton()->isEnabled());
  }
};

PLAB_TEST_MAIN(TestAdvisorDialog)
}  // namespace test_advisor_dialog
#include "test_advisor_dialog.moc"
