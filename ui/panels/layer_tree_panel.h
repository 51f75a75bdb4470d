#pragma once
// The model's module tree with one bf16 checkbox per row. A plan is a preset
// plus subtree overrides: ticking a row sets an override for its subtree
// (clearing deeper ones); parents show the tri-state of their subtree.
#include <QWidget>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "model/module_tree.h"
#include "precision/memory_breakdown.h"
#include "precision/optimizer_mode.h"
#include "precision/precision_plan.h"
#include "panels/layer_measurements.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QMenu;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace plab::ui {

class LayerTreePanel : public QWidget {
  Q_OBJECT
 public:
  // Precision right after the name: it is what the user is deciding, and it
  // must stay on screen in a narrow setup panel.
  // After a run, what it measured per layer sits beside the precision chosen.
  // The GEMM format (formats/gemm_format_id.h) each matrix product of the
  // subtree is simulated in: set plan-wide above the tree, per subtree from
  // a row's context menu.
  // The two choices first (precision, GEMM format: short texts), then what
  // a run measured, so all of it stays on screen in the narrow setup panel.
  enum Column {
    NameColumn = 0,
    PrecisionColumn,
    GemmFormatColumn,
    UpdateLostColumn,
    RoundedAwayColumn,
    MomentErrorColumn,  // quantized moment stores: what storing m and v lost
    ParamsColumn,
    TypeColumn
  };
  static constexpr int PathRole = Qt::UserRole + 1;

  explicit LayerTreePanel(QWidget* parent = nullptr);

  void setModules(const plab::ModuleNode& root);  // keeps the current plan
  void clearModules();
  void setPlan(const plab::PrecisionPlan& plan);
  const plab::PrecisionPlan& plan() const { return plan_; }
  void setOptimizer(plab::OptimizerMode mode, const plab::AdamWOptions& options);
  // Shows a finished run's per-layer means (layer_measurements.h) in the
  // measured columns; their headers name the run. Rows it did not measure
  // stay empty. clearMeasurements() empties the columns.
  void setMeasurements(const QString& runName, const std::map<std::string, LayerMeasurement>& layers);
  void clearMeasurements();
  // The update-lost cell of a layer: "12.3 ± 0.4 %" with enough evidence,
  // "no evidence (±40.0 %)" in grey without (update_stats.h: lostEvidence),
  // and a tooltip with the figure, its ±, Kahan's pending share and why.
  struct UpdateLostCell {
    QString text, toolTip;
    bool evidence = true;
  };
  static UpdateLostCell updateLostCell(const LayerMeasurement& m);
  // "m 1.2 % / v 3.4 %" and its tooltip; empty where not measured.
  static UpdateLostCell momentErrorCell(const LayerMeasurement& m);

  void applyPreset(plab::PlanPreset preset);      // clears overrides
  void setSubtreeBf16(const std::string& path, bool bf16);  // what ticking a row does
  // The context menu's choice: the subtree's products in `format` (deeper
  // overrides cleared); nullopt removes the row's override (the plan-wide
  // format applies again). The root row ("") sets the plan-wide format.
  void setSubtreeGemmFormat(const std::string& path, std::optional<plab::GemmFormat> format);
  QComboBox* gemmFormatCombo() const { return gemmDefault_; }  // the plan-wide format
  // The context menu's other choice: the recipe of the subtree's bf16 layers
  // (deeper recipes cleared); nullopt removes the row's own (the run's mode
  // applies again).
  void setSubtreeRecipe(const std::string& path, std::optional<plab::OptimizerMode> recipe);
  // Path -> recipe of every module with parameters (the run's mode where the
  // plan gives none); empty under a mode that takes no per-layer recipes.
  std::map<std::string, plab::OptimizerMode> resolvedRecipes() const;
  // A row's right-click menu: its precision, GEMM format and recipe, the
  // current choice of each ticked; null for a row with neither weights nor
  // products (nothing to choose).
  std::unique_ptr<QMenu> rowMenu(const std::string& path);

  QTreeWidget* tree() const { return tree_; }
  QTreeWidgetItem* itemForPath(const std::string& path) const;
  std::map<std::string, plab::LayerPrecision> resolved() const;
  // Path -> GEMM format of every module with a matrix product; empty when
  // the plan names a module the model lacks (the summary says so).
  std::map<std::string, plab::GemmFormat> resolvedGemmFormats() const;
  int64_t bf16Parameters() const;
  int64_t totalParameters() const { return modules_.totalParameters; }
  plab::MemoryBreakdown predictedMemory() const;
  plab::MemoryBreakdown fp32Memory() const;
  QLabel* summaryLabel() const { return summary_; }
  // The preset's name ("All bf16", "Linear → bf16 + norms") or "custom"
  // once a row overrides it.
  QString planName() const;
  QLabel* planLabel() const { return planLabel_; }
  QPushButton* presetButton(plab::PlanPreset preset) const;
  QPushButton* suggestButton() const { return suggest_; }
  QCheckBox* normsCheckBox() const { return norms_; }
  QCheckBox* embeddingsCheckBox() const { return embeddings_; }

 signals:
  void planChanged();
  void suggestPlanRequested();  // "Suggest a plan…": the window opens the advisor

 private:
  QTreeWidgetItem* buildItem(const plab::ModuleNode& node, QTreeWidgetItem* parent);
  void refresh();  // check states, precision column, plan name, summary from plan_
  void fitColumns();
  void onItemChanged(QTreeWidgetItem* item, int column);
  void showRowMenu(const QPoint& pos);  // a row's GEMM format and recipe

  QTreeWidget* tree_;
  QLabel* planLabel_;
  QLabel* summary_;
  QPushButton* allFp32_;
  QPushButton* linearBf16_;
  QPushButton* allBf16_;
  QPushButton* suggest_;
  QComboBox* gemmDefault_;
  QCheckBox* norms_;
  QCheckBox* embeddings_;
  plab::ModuleNode modules_;
  bool hasModules_ = false;
  plab::PrecisionPlan plan_;
  plab::OptimizerMode mode_ = plab::OptimizerMode::Bf16Kahan;
  plab::AdamWOptions adamw_;
  bool updating_ = false;
  QString measuredRun_;
  std::map<std::string, LayerMeasurement> measurements_;
  void showMeasurements();
};

}  // namespace plab::ui
