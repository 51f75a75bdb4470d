// The layer tree: rows from a hand-made ModuleNode tree, presets, subtree
// overrides, bf16 share and the predicted memory of a plan.
#include <QCheckBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QTreeWidget>
#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <memory>

#include "panels/layer_measurements.h"
#include "panels/layer_tree_panel.h"
#include "support/module_trees.h"
#include "support/test_registry.h"

namespace test_layer_tree {

using plab::LayerPrecision;
using plab::ModuleNode;
using plab::ui::LayerTreePanel;

namespace {

ModuleNode leaf(const std::string& path, const std::string& type, int64_t params) {
  return plab::test::leafModule(path, type, params);
}

ModuleNode group(const std::string& path, const std::string& type, std::vector<ModuleNode> children) {
  return plab::test::groupModule(path, type, std::move(children));
}

// GPT-2 shaped: embedding 100, one block (ln 8, attn 40+20, mlp 30), ln_f 8,
// tied lm_head without own parameters. Total 206.
ModuleNode tinyTree() {
  ModuleNode block = group("transformer.h.0", "GPT2Block",
                           {leaf("transformer.h.0.ln_1", "LayerNorm", 8),
                            group("transformer.h.0.attn", "GPT2Attention",
                                  {leaf("transformer.h.0.attn.c_attn", "Conv1D", 40),
                                   leaf("transformer.h.0.attn.c_proj", "Conv1D", 20)}),
                            group("transformer.h.0.mlp", "GPT2MLP", {leaf("transformer.h.0.mlp.c_fc", "Linear", 30)})});
  ModuleNode transformer = group("transformer", "GPT2Model",
                                 {leaf("transformer.wte", "Embedding", 100), group("transformer.h", "ModuleList", {block}),
                                  leaf("transformer.ln_f", "LayerNorm", 8)});
  ModuleNode root = group("", "GPT2LMHeadModel", {transformer});
  plab::addTiedHead(root, "transformer.wte");
  return root;
}

// The ticked entries of a row menu's section ("Precision of …", "GEMM
// format of …", "Recipe of …"), by their text.
QStringList ticked(QMenu& menu, const QString& sectionStart) {
  QStringList out;
  bool inside = false;
  for (QAction* a : menu.actions()) {
    if (a->isSeparator()) {
      inside = a->text().startsWith(sectionStart);
      continue;
    }
    if (inside && a->isChecked()) out << a->text();
  }
  return out;
}

int countItems(QTreeWidgetItem* item) {
  int n = 1;
  for (int i = 0; i < item->childCount(); ++i) n += countItems(item->child(i));
  return n;
}

Qt::CheckState state(LayerTreePanel& panel, const std::string& path) {
  QTreeWidgetItem* item = panel.itemForPath(path);
  if (!item) qFatal("no row for %s", path.c_str());
  return item->checkState(LayerTreePanel::NameColumn);
}

}  // namespace

class TestLayerTree : public QObject {
  Q_OBJECT
 private slots:
  void rowsMirrorTheTree() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    QCOMPARE(panel.tree()->topLevelItemCount(), 1);
    QCOMPARE(countItems(panel.tree()->topLevelItem(0)), 13);  // every module, lm_head included
    QTreeWidgetItem* attn = panel.itemForPath("transformer.h.0.attn");
    QVERIFY(attn);
    QCOMPARE(attn->childCount(), 2);
    QCOMPARE(attn->text(LayerTreePanel::TypeColumn), QString("GPT2Attention"));
    QCOMPARE(attn->text(LayerTreePanel::ParamsColumn), QString("0 / 60"));
    QCOMPARE(panel.itemForPath("transformer.wte")->text(LayerTreePanel::ParamsColumn), QString("100 / 100"));
    QCOMPARE(panel.totalParameters(), int64_t(206));
    // The tied head has no checkbox of its own and says whose weight it uses.
    QTreeWidgetItem* head = panel.itemForPath("lm_head");
    QVERIFY(!(head->flags() & Qt::ItemIsUserCheckable));
    QCOMPARE(head->text(LayerTreePanel::TypeColumn), QString("Linear (tied)"));
    QCOMPARE(head->text(LayerTreePanel::ParamsColumn), QString("shares transformer.wte"));
  }

  // The head's matrix product runs in its owner's precision, and the row says so.
  void tiedHeadFollowsTheEmbedding() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.presetButton(plab::PlanPreset::LinearBf16)->click();
    QTreeWidgetItem* head = panel.itemForPath("lm_head");
    QCOMPARE(head->text(LayerTreePanel::PrecisionColumn), QString("fp32 (as wte)"));
    panel.embeddingsCheckBox()->setChecked(true);
    QCOMPARE(head->text(LayerTreePanel::PrecisionColumn), QString("bf16 (as wte)"));
    panel.presetButton(plab::PlanPreset::AllFp32)->click();
    QCOMPARE(head->text(LayerTreePanel::PrecisionColumn), QString("fp32 (as wte)"));
  }

  // After a run, each layer shows what the run measured beside its precision:
  // the mean update lost over windows and the mean rounded-away share.
  void measuredSharesSitBesideEachLayer() {
    plab::RunRecord run;
    run.config.name = "bf16-run";
    for (int step = 1; step <= 2; ++step) {
      plab::StepMetrics m;
      m.step = step;
      m.layers.push_back({"transformer.h.0.attn.c_attn", step == 1 ? 0.8 : 0.9, 0.1});
      m.windowLayers.push_back({"transformer.h.0.attn.c_attn", step == 1 ? 0.85 : 0.95, 0.9});
      run.steps.push_back(m);
    }
    const auto measured = plab::ui::layerMeasurements(run);
    QCOMPARE(measured.at("transformer.h.0.attn.c_attn").roundedAway, 0.85);
    QCOMPARE(measured.at("transformer.h.0.attn.c_attn").updateLost, 0.9);

    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.setMeasurements("bf16-run", measured);
    QTreeWidgetItem* attn = panel.itemForPath("transformer.h.0.attn.c_attn");
    QCOMPARE(attn->text(LayerTreePanel::UpdateLostColumn), QString("90.0 %"));
    QCOMPARE(attn->text(LayerTreePanel::RoundedAwayColumn), QString("85.0 %"));
    QCOMPARE(panel.itemForPath("transformer.wte")->text(LayerTreePanel::UpdateLostColumn), QString());
    QVERIFY(panel.tree()->headerItem()->text(LayerTreePanel::UpdateLostColumn).contains("bf16-run"));
    // Right after the two choices (precision, GEMM format), so it stays on screen with them.
    QCOMPARE(panel.tree()->header()->visualIndex(LayerTreePanel::GemmFormatColumn), 2);
    QCOMPARE(panel.tree()->header()->visualIndex(LayerTreePanel::UpdateLostColumn), 3);
    // Another model: the old measurements do not belong to it.
    panel.setModules(tinyTree());
    QCOMPARE(panel.itemForPath("transformer.h.0.attn.c_attn")->text(LayerTreePanel::UpdateLostColumn), QString());
  }

  // Quantized moments: the moment error of m and v, mean over the windows
  // that measured it, in its own column; empty where not measured.
  void momentErrorSitsBesideEachLayer() {
    plab::RunRecord run;
    for (int step = 20; step <= 40; step += 20) {
      plab::StepMetrics m;
      m.step = step;
      plab::LayerWindowMetrics attn{"transformer.h.0.attn.c_attn", 0.0, 0.1};
      attn.momentErrorM = step == 20 ? 0.01 : 0.03;
      attn.momentErrorV = 0.004;
      m.windowLayers = {attn, plab::LayerWindowMetrics{"transformer.wte", 0.0, 0.1}};
      run.steps.push_back(m);
    }
    const auto measured = plab::ui::layerMeasurements(run);
    QCOMPARE(*measured.at("transformer.h.0.attn.c_attn").momentErrorM, 0.02);
    QVERIFY(!measured.at("transformer.wte").momentErrorM.has_value());
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.setMeasurements("8bit-run", measured);
    QTreeWidgetItem* attn = panel.itemForPath("transformer.h.0.attn.c_attn");
    QCOMPARE(attn->text(LayerTreePanel::MomentErrorColumn), QString("m 2 % / v 0.4 %"));
    QVERIFY(attn->toolTip(LayerTreePanel::MomentErrorColumn).contains("2 window(s)"));
    QCOMPARE(panel.itemForPath("transformer.wte")->text(LayerTreePanel::MomentErrorColumn), QString());
  }

  // With uncertainties recorded: a layer whose mean's se is small shows
  // "x ± y %"; a small norm layer whose se exceeds the rule shows "no
  // evidence" in grey with the reason; a negative figure is shown, not hidden.
  void updateLostShowsItsUncertaintyAndEvidence() {
    plab::RunRecord run;
    for (int step = 5; step <= 10; step += 5) {
      plab::StepMetrics m;
      m.step = step;
      plab::LayerWindowMetrics attn{"transformer.h.0.attn.c_attn", 0.9, 0.95, 0.004, std::nullopt, 12480};
      plab::LayerWindowMetrics norm{"transformer.h.0.ln_1", step == 5 ? -0.4 : 0.5, 1.2, 0.35, std::nullopt, 64};
      plab::LayerWindowMetrics wte{"transformer.wte", -0.002, 0.01, 0.001, 0.4, 16448};
      plab::LayerWindowMetrics lnf{"transformer.ln_f", -0.0004, 0.01, 0.001, std::nullopt, 8192};
      m.windowLayers = {attn, norm, wte, lnf};
      run.steps.push_back(m);
    }
    const auto measured = plab::ui::layerMeasurements(run);
    const auto& n = measured.at("transformer.h.0.ln_1");
    QVERIFY(!n.enoughEvidence);
    QVERIFY(qAbs(*n.updateLostStdError - std::sqrt(2 * 0.35 * 0.35) / 2) < 1e-12);  // the mean of 2 windows
    QVERIFY(measured.at("transformer.h.0.attn.c_attn").enoughEvidence);

    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.setMeasurements("sr-run", measured);
    QTreeWidgetItem* attn = panel.itemForPath("transformer.h.0.attn.c_attn");
    QCOMPARE(attn->text(LayerTreePanel::UpdateLostColumn), QString("90.0 ± 0.3 %"));
    QTreeWidgetItem* norm = panel.itemForPath("transformer.h.0.ln_1");
    QVERIFY(norm);
    QVERIFY(norm->text(LayerTreePanel::UpdateLostColumn).startsWith("no evidence"));
    QVERIFY(norm->text(LayerTreePanel::UpdateLostColumn).contains("±24.7 %"));
    QVERIFY(norm->toolTip(LayerTreePanel::UpdateLostColumn).contains("not enough evidence"));
    QVERIFY(norm->toolTip(LayerTreePanel::UpdateLostColumn).contains("64 elements"));
    QCOMPARE(norm->foreground(LayerTreePanel::UpdateLostColumn).color(), QColor(140, 140, 140));
    QTreeWidgetItem* wte = panel.itemForPath("transformer.wte");
    QCOMPARE(wte->text(LayerTreePanel::UpdateLostColumn), QString("-0.2 ± 0.1 %"));
    QVERIFY(wte->toolTip(LayerTreePanel::UpdateLostColumn).contains("pending in the Kahan buffer or master copy"));
    QCOMPARE(panel.itemForPath("transformer.ln_f")->text(LayerTreePanel::UpdateLostColumn), QString("0.0 ± 0.1 %"));  // not -0.0
  }

  void presetsCheckTheRightRows() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.presetButton(plab::PlanPreset::LinearBf16)->click();
    QCOMPARE(panel.plan().preset, plab::PlanPreset::LinearBf16);
    QCOMPARE(state(panel, "transformer.h.0.attn.c_attn"), Qt::Checked);
    QCOMPARE(state(panel, "transformer.h.0.mlp.c_fc"), Qt::Checked);
    QCOMPARE(state(panel, "transformer.h.0.attn"), Qt::Checked);
    QCOMPARE(state(panel, "transformer.h.0.ln_1"), Qt::Unchecked);
    QCOMPARE(state(panel, "transformer.wte"), Qt::Unchecked);
    QCOMPARE(state(panel, "transformer.h.0"), Qt::PartiallyChecked);
    QCOMPARE(state(panel, ""), Qt::PartiallyChecked);
    QCOMPARE(panel.bf16Parameters(), int64_t(90));

    panel.normsCheckBox()->setChecked(true);
    QCOMPARE(state(panel, "transformer.h.0.ln_1"), Qt::Checked);
    QCOMPARE(state(panel, "transformer.ln_f"), Qt::Checked);
    QCOMPARE(state(panel, "transformer.h.0"), Qt::Checked);
    QCOMPARE(panel.bf16Parameters(), int64_t(106));
    panel.embeddingsCheckBox()->setChecked(true);
    QCOMPARE(state(panel, ""), Qt::Checked);

    panel.presetButton(plab::PlanPreset::AllFp32)->click();
    QCOMPARE(state(panel, ""), Qt::Unchecked);
    QCOMPARE(panel.bf16Parameters(), int64_t(0));
    QVERIFY(!panel.normsCheckBox()->isEnabled());  // flags only matter for Linear → bf16

    panel.presetButton(plab::PlanPreset::AllBf16)->click();
    QCOMPARE(state(panel, "transformer.wte"), Qt::Checked);
    QCOMPARE(panel.bf16Parameters(), int64_t(206));
  }

  void subtreeToggleWritesOverrides() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.applyPreset(plab::PlanPreset::LinearBf16);
    QSignalSpy changed(&panel, &LayerTreePanel::planChanged);

    // Unticking a parent turns its whole subtree fp32: one override.
    panel.itemForPath("transformer.h.0.attn")->setCheckState(LayerTreePanel::NameColumn, Qt::Unchecked);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(panel.plan().overrides.size(), size_t(1));
    QCOMPARE(panel.plan().overrides.at("transformer.h.0.attn"), LayerPrecision::Fp32);
    QCOMPARE(state(panel, "transformer.h.0.attn.c_attn"), Qt::Unchecked);
    QCOMPARE(state(panel, "transformer.h.0.attn.c_proj"), Qt::Unchecked);
    QCOMPARE(state(panel, "transformer.h.0.mlp.c_fc"), Qt::Checked);
    QCOMPARE(panel.bf16Parameters(), int64_t(30));

    // A deeper override inside it...
    panel.itemForPath("transformer.h.0.attn.c_proj")->setCheckState(LayerTreePanel::NameColumn, Qt::Checked);
    QCOMPARE(panel.plan().overrides.at("transformer.h.0.attn.c_proj"), LayerPrecision::Bf16);
    QCOMPARE(state(panel, "transformer.h.0.attn"), Qt::PartiallyChecked);
    QCOMPARE(panel.bf16Parameters(), int64_t(50));

    // ...is replaced when an ancestor is toggled: the whole block becomes bf16.
    panel.itemForPath("transformer.h.0")->setCheckState(LayerTreePanel::NameColumn, Qt::Checked);
    const auto& o = panel.plan().overrides;
    QCOMPARE(o.size(), size_t(1));
    QCOMPARE(o.at("transformer.h.0"), LayerPrecision::Bf16);
    QCOMPARE(state(panel, "transformer.h.0.ln_1"), Qt::Checked);
    QCOMPARE(panel.bf16Parameters(), int64_t(98));

    const auto resolved = panel.resolved();
    QCOMPARE(resolved.at("transformer.h.0.ln_1"), LayerPrecision::Bf16);
    QCOMPARE(resolved.at("transformer.ln_f"), LayerPrecision::Fp32);
    QCOMPARE(resolved.at("transformer.wte"), LayerPrecision::Fp32);

    // The root row switches presets instead of adding a root override.
    panel.itemForPath("")->setCheckState(LayerTreePanel::NameColumn, Qt::Unchecked);
    QCOMPARE(panel.plan().preset, plab::PlanPreset::AllFp32);
    QVERIFY(panel.plan().overrides.empty());
  }

  void shareAndPredictedMemory() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.applyPreset(plab::PlanPreset::LinearBf16);
    plab::AdamWOptions adamw;
    adamw.moments = plab::MomentPrecision::Bf16Nearest;

    // 90 bf16 elements, 116 fp32 elements; per element bytes from the rules
    // in memory_estimate.h, computed here by hand.
    panel.setOptimizer(plab::OptimizerMode::Bf16Kahan, adamw);
    QCOMPARE(panel.predictedMemory().total(), int64_t(90 * (2 + 2 + 4 + 2) + 116 * 16));
    QCOMPARE(panel.predictedMemory().kahan, int64_t(90 * 2));
    panel.setOptimizer(plab::OptimizerMode::Fp32MasterWeights, adamw);
    QCOMPARE(panel.predictedMemory().master, int64_t(90 * 4));
    QCOMPARE(panel.predictedMemory().kahan, int64_t(0));
    QCOMPARE(panel.predictedMemory().moments, int64_t(206 * 8));  // mixed keeps fp32 moments
    adamw.moments = plab::MomentPrecision::Fp32;
    panel.setOptimizer(plab::OptimizerMode::Bf16Kahan, adamw);
    QCOMPARE(panel.predictedMemory().total(), int64_t(90 * (2 + 2 + 8 + 2) + 116 * 16));
    panel.setOptimizer(plab::OptimizerMode::Bf16Plain, adamw);  // torch: moments follow the params
    QCOMPARE(panel.predictedMemory().total(), int64_t(90 * (2 + 2 + 4) + 116 * 16));
    panel.setOptimizer(plab::OptimizerMode::Fp32AdamW, adamw);
    QCOMPARE(panel.predictedMemory().total(), panel.fp32Memory().total());
    QCOMPARE(panel.fp32Memory().total(), int64_t(206 * 16));

    QVERIFY(panel.summaryLabel()->text().contains("90"));
    QVERIFY(panel.summaryLabel()->text().contains("43.7 %"));  // 90 / 206
  }

  // Issue 11: names were cut at 150 px and the precision column was off-screen.
  void namesFitAndPrecisionComesRightAfterThem() {
    LayerTreePanel panel;
    ModuleNode tree = tinyTree();
    tree.children[0].children[1].children[0].children[1].name = "a_rather_long_module_name_for_fitting";  // the attention
    panel.setModules(tree);
    QTreeWidget* t = panel.tree();
    QCOMPARE(t->header()->visualIndex(LayerTreePanel::PrecisionColumn), 1);
    QTreeWidgetItem* longRow = panel.itemForPath("transformer.h.0.attn");
    QVERIFY(longRow);
    QCOMPARE(longRow->text(LayerTreePanel::NameColumn), QString("a_rather_long_module_name_for_fitting"));
    const int textWidth = t->fontMetrics().horizontalAdvance(longRow->text(LayerTreePanel::NameColumn));
    QVERIFY2(t->columnWidth(LayerTreePanel::NameColumn) > textWidth + 4 * t->indentation(),
             qPrintable(QString("name column %1 px").arg(t->columnWidth(LayerTreePanel::NameColumn))));
    QCOMPARE(longRow->text(LayerTreePanel::PrecisionColumn), QString("bf16"));

    // Rows shown by expanding later widen the column too.
    const int before = t->columnWidth(LayerTreePanel::NameColumn);
    QTreeWidgetItem* deep = longRow->child(0);
    deep->setText(LayerTreePanel::NameColumn, "an_even_longer_module_name_that_is_shown_only_when_expanded");
    longRow->setExpanded(true);
    QVERIFY(t->columnWidth(LayerTreePanel::NameColumn) > before);
  }

  void showsThePlanNameOrCustom() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.applyPreset(plab::PlanPreset::AllBf16);
    QCOMPARE(panel.planName(), QString("All bf16"));
    QVERIFY(panel.planLabel()->text().contains("All bf16"));
    panel.applyPreset(plab::PlanPreset::LinearBf16);
    panel.normsCheckBox()->setChecked(true);
    QCOMPARE(panel.planName(), QString("Linear → bf16 + norms"));
    panel.setSubtreeBf16("transformer.wte", true);
    QCOMPARE(panel.planName(), QString("custom"));
    QVERIFY(panel.planLabel()->text().contains("custom"));
    QVERIFY(panel.planLabel()->text().contains("1 row override)"));
    panel.presetButton(plab::PlanPreset::AllFp32)->click();  // a preset clears the overrides
    QCOMPARE(panel.planName(), QString("All fp32"));
  }

  // Issue 22.3: the GEMM format column, the plan-wide combo and subtree choices.
  void gemmFormatsPerSubtree() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    const auto gemm = [&panel](const std::string& path) {
      return panel.itemForPath(path)->text(LayerTreePanel::GemmFormatColumn);
    };
    QCOMPARE(gemm("transformer.h.0.attn.c_attn"), QString("bf16"));
    QCOMPARE(gemm("transformer.h.0.mlp.c_fc"), QString("bf16"));
    QCOMPARE(gemm("lm_head"), QString("bf16"));  // the tied head's product has a format of its own
    QCOMPARE(gemm("transformer.wte"), QString("–"));
    QCOMPARE(gemm("transformer.h.0.ln_1"), QString("–"));
    QSignalSpy changed(&panel, &LayerTreePanel::planChanged);
    panel.gemmFormatCombo()->setCurrentIndex(panel.gemmFormatCombo()->findText("mxfp8"));
    QCOMPARE(changed.count(), 1);
    QVERIFY(panel.plan().gemm_format == plab::GemmFormat::Mxfp8);
    QCOMPARE(gemm("transformer.h.0.mlp.c_fc"), QString("mxfp8"));
    QVERIFY(panel.summaryLabel()->text().contains("simulated"));
    panel.setSubtreeGemmFormat("transformer.h.0.attn", plab::GemmFormat::Nvfp4);
    QCOMPARE(gemm("transformer.h.0.attn.c_proj"), QString("nvfp4"));
    QCOMPARE(gemm("transformer.h.0"), QString("mixed (mxfp8, nvfp4)"));
    // A subtree choice replaces deeper ones; removing it restores the plan-wide format.
    panel.setSubtreeGemmFormat("transformer.h.0.attn.c_attn", plab::GemmFormat::Fp8E4m3);
    panel.setSubtreeGemmFormat("transformer.h.0", plab::GemmFormat::Mxfp4);
    QCOMPARE(panel.plan().gemm_formats.size(), size_t(1));
    QCOMPARE(gemm("transformer.h.0.attn.c_attn"), QString("mxfp4"));
    panel.setSubtreeGemmFormat("transformer.h.0", std::nullopt);
    QCOMPARE(gemm("transformer.h.0.attn.c_attn"), QString("mxfp8"));
    // The JSON a run takes carries both, and reads back to the same column.
    panel.setSubtreeGemmFormat("lm_head", plab::GemmFormat::Bf16);
    const nlohmann::json j = plab::toJson(panel.plan());
    QCOMPARE(j.at("gemm_format").get<std::string>(), std::string("mxfp8"));
    QCOMPARE(j.at("gemm_formats").at("lm_head").get<std::string>(), std::string("bf16"));
    LayerTreePanel other;
    other.setModules(tinyTree());
    other.setPlan(plab::precisionPlanFromJson(j));
    QCOMPARE(other.itemForPath("")->text(LayerTreePanel::GemmFormatColumn), QString("mixed (bf16, mxfp8)"));
    // The root row sets the plan-wide format and clears the rows' choices.
    panel.setSubtreeGemmFormat("", plab::GemmFormat::Bf16);
    QVERIFY(panel.plan().gemm_formats.empty());
    QVERIFY(!panel.plan().usesLowPrecisionGemms());
    QCOMPARE(panel.gemmFormatCombo()->currentText(), QString("bf16"));
  }

  // A row's own recipe (plan.recipes): the Precision cell says it, the
  // predicted memory counts its state, the root clears them, and an fp16
  // mode is told it refuses such a plan.
  void recipesPerSubtree() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.setOptimizer(plab::OptimizerMode::Bf16Nearest, plab::AdamWOptions{});
    panel.applyPreset(plab::PlanPreset::AllBf16);
    const auto precision = [&panel](const std::string& path) {
      return panel.itemForPath(path)->text(LayerTreePanel::PrecisionColumn);
    };
    QCOMPARE(precision("transformer.wte"), QString("bf16"));
    const int64_t before = panel.predictedMemory().total();
    QSignalSpy changed(&panel, &LayerTreePanel::planChanged);
    panel.setSubtreeRecipe("transformer.wte", plab::OptimizerMode::Bf16Kahan);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(precision("transformer.wte"), QString("bf16 · bf16-kahan"));
    QCOMPARE(precision("transformer.h.0"), QString("bf16"));
    QCOMPARE(precision(""), QString("bf16 · 2 recipes"));
    QCOMPARE(panel.predictedMemory().total() - before, int64_t(100 * 2));  // Kahan's bf16 buffer on wte only
    QVERIFY(panel.planLabel()->text().contains("1 row recipe"));
    QVERIFY(panel.resolvedRecipes().at("transformer.wte") == plab::OptimizerMode::Bf16Kahan);
    // Under the same recipe as the run's mode the cell says nothing more.
    panel.setOptimizer(plab::OptimizerMode::Bf16Kahan, plab::AdamWOptions{});
    QCOMPARE(precision("transformer.wte"), QString("bf16"));
    panel.setOptimizer(plab::OptimizerMode::Fp16Mixed, plab::AdamWOptions{});
    QVERIFY(panel.summaryLabel()->text().contains("fp16 mode refuses"));
    panel.setOptimizer(plab::OptimizerMode::Bf16Nearest, plab::AdamWOptions{});
    panel.setSubtreeRecipe("transformer.h.0.attn", plab::OptimizerMode::Bf16StochasticRounding);
    QCOMPARE(precision("transformer.h.0.attn.c_proj"), QString("bf16 · bf16-sr"));
    QCOMPARE(plab::toJson(panel.plan()).at("recipes").size(), size_t(2));
    panel.setSubtreeRecipe("", std::nullopt);
    QVERIFY(panel.plan().recipes.empty());
    QCOMPARE(panel.predictedMemory().total(), before);
  }

  // A plan file's per-row moment stores (plan.moments): read-only here; the
  // predicted memory counts each row under its store and the summary lists them.
  void momentStoresFromAPlanFile() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.setOptimizer(plab::OptimizerMode::Bf16Nearest, plab::AdamWOptions{});  // bf16 moments
    panel.applyPreset(plab::PlanPreset::AllBf16);
    const int64_t before = panel.predictedMemory().total();
    plab::PrecisionPlan plan = panel.plan();
    plan.setMomentSubtree("transformer.wte", plab::MomentPrecision::Fp32);
    panel.setPlan(plan);
    QCOMPARE(panel.predictedMemory().total() - before, int64_t(100 * 2 * 2));  // m and v: 4 bytes instead of 2
    QVERIFY(panel.planLabel()->text().contains("1 row moment store"));
    QVERIFY2(panel.summaryLabel()->text().contains("transformer.wte fp32"), qPrintable(panel.summaryLabel()->text()));
    panel.setOptimizer(plab::OptimizerMode::Fp16Mixed, plab::AdamWOptions{});
    QVERIFY(panel.summaryLabel()->text().contains("refuses it"));
  }

  // Issue 35.5: a row's right-click menu ticks its current precision, GEMM
  // format and recipe; none where its subtree mixes several.
  void rowMenusTickTheCurrentChoice() {
    LayerTreePanel panel;
    panel.setModules(tinyTree());
    panel.setOptimizer(plab::OptimizerMode::Bf16Nearest, plab::AdamWOptions{});
    panel.applyPreset(plab::PlanPreset::AllFp32);
    const auto menu = [&panel](const std::string& path) {
      std::unique_ptr<QMenu> m = panel.rowMenu(path);
      if (!m) qFatal("no menu for %s", path.c_str());
      return m;
    };
    auto root = menu("");
    QCOMPARE(ticked(*root, "Precision"), QStringList{"fp32"});
    QCOMPARE(ticked(*root, "GEMM format"), QStringList{"bf16"});
    QCOMPARE(ticked(*root, "Recipe").size(), 1);
    QVERIFY(ticked(*root, "Recipe").front().startsWith("bf16-nearest "));

    panel.setSubtreeBf16("transformer.h.0.attn", true);
    panel.setSubtreeGemmFormat("transformer.h.0.mlp", plab::GemmFormat::Mxfp8);
    panel.setSubtreeRecipe("transformer.h.0.attn.c_proj", plab::OptimizerMode::Bf16StochasticRounding);
    auto attn = menu("transformer.h.0.attn");
    QCOMPARE(ticked(*attn, "Precision"), QStringList{"bf16"});
    QCOMPARE(ticked(*attn, "GEMM format"), QStringList{"bf16"});
    QVERIFY(ticked(*attn, "Recipe").isEmpty());  // c_attn nearest, c_proj stochastic
    auto cProj = menu("transformer.h.0.attn.c_proj");
    QCOMPARE(ticked(*cProj, "Recipe").size(), 1);
    QVERIFY(ticked(*cProj, "Recipe").front().startsWith("bf16-sr"));
    auto mlp = menu("transformer.h.0.mlp");
    QCOMPARE(ticked(*mlp, "Precision"), QStringList{"fp32"});
    QCOMPARE(ticked(*mlp, "GEMM format"), QStringList{"mxfp8"});
    QVERIFY(ticked(*mlp, "Recipe").front().startsWith("bf16-nearest"));  // what ticking it would give
    auto block = menu("transformer.h.0");
    QVERIFY(ticked(*block, "Precision").isEmpty());    // attn bf16, the rest fp32
    QVERIFY(ticked(*block, "GEMM format").isEmpty());  // bf16 and mxfp8
    // Every choice is checkable, so the tick shows as one.
    for (QAction* a : block->actions())
      if (!a->isSeparator() && !a->text().startsWith("as the")) QVERIFY2(a->isCheckable(), qPrintable(a->text()));
    // The ticked entry does what it says: choosing another moves the tick.
    for (QAction* a : mlp->actions())
      if (a->text() == "nvfp4") a->trigger();
    QCOMPARE(ticked(*menu("transformer.h.0.mlp"), "GEMM format"), QStringList{"nvfp4"});
    auto again = menu("transformer.h.0.mlp");
    const QList<QAction*> entries = again->actions();
    const auto bf16 = std::find_if(entries.begin(), entries.end(), [](QAction* a) { return a->text() == "bf16"; });
    QVERIFY(bf16 != entries.end());  // the Precision section's, which comes first
    (*bf16)->trigger();
    QCOMPARE(ticked(*menu("transformer.h.0.mlp"), "Precision"), QStringList{"bf16"});
    QCOMPARE(ticked(*menu("transformer.h.0.mlp"), "GEMM format"), QStringList{"nvfp4"});
    // Nothing to choose, no menu.
    QVERIFY(!panel.rowMenu("no.such.module"));
  }
};

PLAB_TEST_MAIN(TestLayerTree)
}  // namespace test_layer_tree
#include "test_layer_tree.moc"
