#include "panels/layer_tree_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "formats/gemm_format_id.h"
#include "panels/layer_recipes.h"
#include "precision/memory_estimate.h"
#include "util/errors.h"
#include "util/format.h"
#include "util/wheel_guard.h"

namespace plab::ui {
namespace {

struct SubtreeCount {
  int64_t bf16 = 0;
  int64_t total = 0;
};

SubtreeCount countSubtree(const plab::ModuleNode& node,
                          const std::map<std::string, plab::LayerPrecision>& resolved) {
  SubtreeCount c;
  if (node.ownParameters > 0) {
    c.total += node.ownParameters;
    const auto it = resolved.find(node.path);
    if (it != resolved.end() && it->second == plab::LayerPrecision::Bf16) c.bf16 += node.ownParameters;
  }
  for (const auto& child : node.children) {
    const SubtreeCount cc = countSubtree(child, resolved);
    c.bf16 += cc.bf16;
    c.total += cc.total;
  }
  return c;
}

const plab::ModuleNode* findNode(const plab::ModuleNode& node, const std::string& path) {
  if (node.path == path) return &node;
  for (const auto& child : node.children)
    if (const auto* found = findNode(child, path)) return found;
  return nullptr;
}

bool inSubtree(const std::string& path, const std::string& root) {
  return root.empty() || path == root || path.compare(0, root.size() + 1, root + ".") == 0;
}

// The subtree's products: one format's id, "mixed (…)" when they differ,
// "–" without a product.
void showGemmCell(QTreeWidgetItem* item, const std::string& path, const std::map<std::string, plab::GemmFormat>& gemms) {
  std::map<plab::GemmFormat, int> counts;
  for (const auto& [module, format] : gemms)
    if (inSubtree(module, path)) ++counts[format];
  QString text = "–";
  if (counts.size() == 1) text = QString::fromStdString(plab::gemmFormatId(counts.begin()->first));
  else if (counts.size() > 1) {
    QStringList ids;
    for (const auto& [format, n] : counts) ids << QString::fromStdString(plab::gemmFormatId(format));
    text = "mixed (" + ids.join(", ") + ")";
  }
  item->setText(LayerTreePanel::GemmFormatColumn, text);
  const bool lowPrecision = !counts.empty() && !(counts.size() == 1 && counts.begin()->first == plab::GemmFormat::Bf16);
  item->setForeground(LayerTreePanel::GemmFormatColumn, lowPrecision ? QColor(150, 40, 150) : QColor(90, 90, 90));
}

}  // namespace

LayerTreePanel::LayerTreePanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);

  auto* presets = new QHBoxLayout;
  allFp32_ = new QPushButton("All fp32");
  linearBf16_ = new QPushButton("Linear → bf16");
  allBf16_ = new QPushButton("All bf16");
  allFp32_->setObjectName("presetAllFp32");
  linearBf16_->setObjectName("presetLinearBf16");
  allBf16_->setObjectName("presetAllBf16");
  presets->addWidget(allFp32_);
  presets->addWidget(linearBf16_);
  presets->addWidget(allBf16_);
  presets->addStretch();
  suggest_ = new QPushButton("Suggest a plan…");
  suggest_->setObjectName("suggestPlan");
  suggest_->setToolTip("The precision advisor: measures per layer what each bf16 recipe would lose, then trains a few "
                       "candidate plans against fp32 and picks the cheapest within a tolerance");
  presets->addWidget(suggest_);
  layout->addLayout(presets);

  auto* flags = new QHBoxLayout;
  norms_ = new QCheckBox("Norms in bf16");
  embeddings_ = new QCheckBox("Embeddings in bf16");
  norms_->setToolTip("With the Linear → bf16 preset: LayerNorm/RMSNorm weights in bf16 too");
  embeddings_->setToolTip("With the Linear → bf16 preset: token/position embeddings (and a tied lm_head) in bf16");
  flags->addWidget(norms_);
  flags->addWidget(embeddings_);
  flags->addStretch();
  gemmDefault_ = new QComboBox;
  gemmDefault_->setObjectName("gemmFormat");
  for (plab::GemmFormat f : plab::allGemmFormats())
    gemmDefault_->addItem(QString::fromStdString(plab::gemmFormatId(f)), static_cast<int>(f));
  gemmDefault_->setToolTip(
      "<p>The format every matrix product (Linear, Conv1D, the head) is simulated in (gemm_format): bf16 is "
      "today's product in the layer's own dtype; the others quantize both operands (and the output gradient in "
      "backward) and multiply in fp32 — fake quantization, bit-exact with torchao, not fp8/fp4 tensor cores. "
      "Right-click a row to set its subtree apart.</p>");
  flags->addWidget(new QLabel("GEMMs:"));
  flags->addWidget(gemmDefault_);
  layout->addLayout(flags);

  planLabel_ = new QLabel;
  planLabel_->setObjectName("planName");
  layout->addWidget(planLabel_);

  tree_ = new QTreeWidget;
  tree_->setObjectName("layerTree");
  tree_->setColumnCount(8);
  tree_->setHeaderLabels({"Module (✓ = bf16)", "Precision", "GEMM format", "Update lost", "Rounded away",
                          "Moment error", "Parameters (own / total)", "Type"});
  tree_->headerItem()->setToolTip(GemmFormatColumn,
                                  "The simulated format of the subtree's matrix products (right-click a row to "
                                  "change it); \"mixed\" when they differ, – without one");
  tree_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(tree_, &QTreeWidget::customContextMenuRequested, this, &LayerTreePanel::showRowMenu);
  tree_->headerItem()->setToolTip(UpdateLostColumn,
                                  "Mean over the last finished run's windows: the share of the intended update "
                                  "that never reached this layer's weights (nor waits in a Kahan buffer), ± one "
                                  "standard error. \"no evidence\": the error is above 5 points, so the figure "
                                  "is noise at this layer's size");
  tree_->headerItem()->setToolTip(RoundedAwayColumn,
                                  "Mean over the last finished run's statistics steps: the share of this layer's "
                                  "weights whose update was rounded away in the step (Kahan and SR defer writes, "
                                  "so only update lost tells them from plain bf16)");
  tree_->headerItem()->setToolTip(MomentErrorColumn,
                                  "Quantized moments (adamw.moments 8bit, 4bit, fp8), mean over the last finished run's "
                                  "windows: ||stored - exact|| / ||exact|| of m and of v, exact being the fp32 "
                                  "moment each step computed from the stored one before it (docs/metrics.md); "
                                  "empty where the moments are not quantized");
  tree_->header()->setSectionResizeMode(NameColumn, QHeaderView::Interactive);
  tree_->header()->setStretchLastSection(false);
  tree_->setUniformRowHeights(true);
  layout->addWidget(tree_, 1);

  summary_ = new QLabel("No model selected");
  summary_->setObjectName("layerSummary");
  summary_->setWordWrap(true);
  layout->addWidget(summary_);

  connect(allFp32_, &QPushButton::clicked, this, [this] { applyPreset(plab::PlanPreset::AllFp32); });
  connect(linearBf16_, &QPushButton::clicked, this, [this] { applyPreset(plab::PlanPreset::LinearBf16); });
  connect(allBf16_, &QPushButton::clicked, this, [this] { applyPreset(plab::PlanPreset::AllBf16); });
  connect(suggest_, &QPushButton::clicked, this, &LayerTreePanel::suggestPlanRequested);
  connect(norms_, &QCheckBox::toggled, this, [this](bool on) {
    if (updating_) return;
    plan_.norms_bf16 = on;
    refresh();
    emit planChanged();
  });
  connect(embeddings_, &QCheckBox::toggled, this, [this](bool on) {
    if (updating_) return;
    plan_.embeddings_bf16 = on;
    refresh();
    emit planChanged();
  });
  connect(tree_, &QTreeWidget::itemChanged, this, &LayerTreePanel::onItemChanged);
  connect(gemmDefault_, &QComboBox::currentIndexChanged, this, [this] {
    if (updating_) return;
    plan_.gemm_format = static_cast<plab::GemmFormat>(gemmDefault_->currentData().toInt());
    refresh();
    emit planChanged();
  });
  // Expanded rows may hold longer names; grow only, keeping a user's wider choice.
  connect(tree_, &QTreeWidget::itemExpanded, this, [this] {
    const int before = tree_->columnWidth(NameColumn);
    tree_->resizeColumnToContents(NameColumn);
    if (tree_->columnWidth(NameColumn) < before) tree_->setColumnWidth(NameColumn, before);
  });
  refresh();
  guardWheel(this);
}

QPushButton* LayerTreePanel::presetButton(plab::PlanPreset preset) const {
  switch (preset) {
    case plab::PlanPreset::AllFp32: return allFp32_;
    case plab::PlanPreset::LinearBf16: return linearBf16_;
    case plab::PlanPreset::AllBf16: return allBf16_;
  }
  return nullptr;
}

void LayerTreePanel::setModules(const plab::ModuleNode& root) {
  modules_ = root;
  hasModules_ = true;
  updating_ = true;
  tree_->clear();
  QTreeWidgetItem* top = buildItem(root, nullptr);
  tree_->addTopLevelItem(top);
  tree_->expandToDepth(3);  // down to the blocks' sub-modules
  updating_ = false;
  // Measurements belong to the model a run trained: a new model starts empty.
  measuredRun_.clear();
  measurements_.clear();
  showMeasurements();
  refresh();
  fitColumns();
}

void LayerTreePanel::setMeasurements(const QString& runName, const std::map<std::string, LayerMeasurement>& layers) {
  measuredRun_ = runName;
  measurements_ = layers;
  showMeasurements();
}

void LayerTreePanel::clearMeasurements() {
  measuredRun_.clear();
  measurements_.clear();
  showMeasurements();
}

LayerTreePanel::UpdateLostCell LayerTreePanel::updateLostCell(const LayerMeasurement& m) {
  UpdateLostCell c;
  if (m.windows <= 0) return c;
  // "+ 0.0" turns a -0.0 that rounding leaves into 0.0.
  const auto points = [](double x) { return QString::number(std::round(1000 * x) / 10 + 0.0, 'f', 1); };
  const bool seKnown = m.updateLostStdError && std::isfinite(*m.updateLostStdError);
  const QString pm = seKnown ? " ± " + points(*m.updateLostStdError) : QString();
  QStringList tip;
  tip << QString("mean over %1 window(s): %2%3 %").arg(m.windows).arg(points(m.updateLost), pm);
  if (m.updatePending)
    tip << QString("pending in the Kahan buffer or master copy at the windows' ends (arrives later, not lost): %1 %")
               .arg(points(*m.updatePending));
  if (m.elements > 0) tip << QString("%1 elements tracked per window").arg(m.elements);
  if (!m.updateLostStdError) tip << "no uncertainty recorded (run folder written before it was)";
  c.evidence = m.enoughEvidence;
  if (m.enoughEvidence) {
    c.text = points(m.updateLost) + pm + " %";
    if (seKnown) tip << "± is one standard error, from the spread of 16 interleaved element groups";
  } else {
    c.text = seKnown ? "no evidence (±" + points(*m.updateLostStdError) + " %)" : "no evidence";
    tip << QString::fromStdString(m.evidenceReason) << "at this size the figure is noise, not loss";
  }
  c.toolTip = tip.join("\n");
  return c;
}

LayerTreePanel::UpdateLostCell LayerTreePanel::momentErrorCell(const LayerMeasurement& m) {
  UpdateLostCell c;
  if (!m.momentErrorM || !m.momentErrorV) return c;
  const auto share = [](double x) { return QString::number(100 * x, 'g', 3) + " %"; };
  c.text = "m " + share(*m.momentErrorM) + " / v " + share(*m.momentErrorV);
  c.toolTip = QString("mean over %1 window(s) of ||stored - exact|| / ||exact||:\nm %2, v %3\n"
                      "exact: the fp32 moment each step computed from the stored moment before it and the "
                      "gradient;\nstored: what the next step reads (dequantized)")
                  .arg(m.momentWindows)
                  .arg(share(*m.momentErrorM), share(*m.momentErrorV));
  return c;
}

void LayerTreePanel::showMeasurements() {
  tree_->headerItem()->setText(UpdateLostColumn, measuredRun_.isEmpty() ? "Update lost" : "Update lost (" + measuredRun_ + ")");
  tree_->headerItem()->setText(RoundedAwayColumn, "Rounded away");
  for (QTreeWidgetItemIterator it(tree_); *it; ++it) {
    QTreeWidgetItem* item = *it;
    const auto found = measurements_.find(item->data(NameColumn, PathRole).toString().toStdString());
    const LayerMeasurement m = found == measurements_.end() ? LayerMeasurement{} : found->second;
    const UpdateLostCell lost = updateLostCell(m);
    item->setText(UpdateLostColumn, lost.text);
    item->setToolTip(UpdateLostColumn, lost.toolTip);
    if (lost.evidence) item->setData(UpdateLostColumn, Qt::ForegroundRole, QVariant());
    else item->setForeground(UpdateLostColumn, QColor(140, 140, 140));
    item->setText(RoundedAwayColumn, m.roundedAway < 0 ? QString() : QString::number(100 * m.roundedAway, 'f', 1) + " %");
    const UpdateLostCell moments = momentErrorCell(m);
    item->setText(MomentErrorColumn, moments.text);
    item->setToolTip(MomentErrorColumn, moments.toolTip);
    for (const int column : {int(UpdateLostColumn), int(RoundedAwayColumn), int(MomentErrorColumn)})
      item->setTextAlignment(column, Qt::AlignRight | Qt::AlignVCenter);
  }
  tree_->resizeColumnToContents(UpdateLostColumn);
  tree_->resizeColumnToContents(RoundedAwayColumn);
  tree_->resizeColumnToContents(MomentErrorColumn);
}

void LayerTreePanel::fitColumns() {
  // Names fit (the expanded depth included); the tree scrolls sideways
  // rather than cutting them off.
  for (int column = 0; column < tree_->columnCount(); ++column) tree_->resizeColumnToContents(column);
}

QString LayerTreePanel::planName() const {
  if (!plan_.overrides.empty()) return "custom";
  const QString low = plab::modeUsesFp16(mode_) ? "fp16" : "bf16";
  switch (plan_.preset) {
    case plab::PlanPreset::AllFp32: return "All fp32";
    case plab::PlanPreset::AllBf16: return "All " + low;
    case plab::PlanPreset::LinearBf16: {
      QString name = "Linear → " + low;
      if (plan_.norms_bf16) name += " + norms";
      if (plan_.embeddings_bf16) name += " + embeddings";
      return name;
    }
  }
  return "custom";
}

void LayerTreePanel::clearModules() {
  modules_ = plab::ModuleNode{};
  hasModules_ = false;
  updating_ = true;
  tree_->clear();
  updating_ = false;
  refresh();
}

QTreeWidgetItem* LayerTreePanel::buildItem(const plab::ModuleNode& node, QTreeWidgetItem* parent) {
  auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem;
  item->setText(NameColumn, QString::fromStdString(node.name));
  item->setToolTip(NameColumn, QString::fromStdString(node.path.empty() ? "(whole model)" : node.path));
  item->setText(TypeColumn, QString::fromStdString(node.type));
  item->setText(ParamsColumn, humanCount(node.ownParameters) + " / " + humanCount(node.totalParameters));
  item->setToolTip(ParamsColumn, QString("%1 own, %2 in subtree").arg(node.ownParameters).arg(node.totalParameters));
  item->setTextAlignment(ParamsColumn, Qt::AlignRight | Qt::AlignVCenter);
  item->setData(NameColumn, PathRole, QString::fromStdString(node.path));
  if (!node.tiedTo.empty()) {
    // Not checkable: the head multiplies by its owner's weight, so it follows
    // the owner's row (refresh() names that precision).
    const QString owner = QString::fromStdString(node.tiedTo);
    item->setText(TypeColumn, QString::fromStdString(node.type) + " (tied)");
    item->setText(ParamsColumn, "shares " + owner);
    const QString why = "The output head has no weight of its own: it multiplies by " + owner +
                        "'s weight, so its matrix product runs in " + owner + "'s precision and its "
                        "gradient trains " + owner + ".";
    for (int column = 0; column < tree_->columnCount(); ++column) item->setToolTip(column, why);
  }
  Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
  if (node.totalParameters > 0) flags |= Qt::ItemIsUserCheckable;
  item->setFlags(flags);
  if (node.totalParameters > 0) item->setCheckState(NameColumn, Qt::Unchecked);
  for (const auto& child : node.children) buildItem(child, item);
  return item;
}

QTreeWidgetItem* LayerTreePanel::itemForPath(const std::string& path) const {
  const QString wanted = QString::fromStdString(path);
  std::function<QTreeWidgetItem*(QTreeWidgetItem*)> search = [&](QTreeWidgetItem* item) -> QTreeWidgetItem* {
    if (item->data(NameColumn, PathRole).toString() == wanted) return item;
    for (int i = 0; i < item->childCount(); ++i)
      if (auto* found = search(item->child(i))) return found;
    return nullptr;
  };
  for (int i = 0; i < tree_->topLevelItemCount(); ++i)
    if (auto* found = search(tree_->topLevelItem(i))) return found;
  return nullptr;
}

std::map<std::string, plab::LayerPrecision> LayerTreePanel::resolved() const {
  if (!hasModules_) return {};
  try {
    return plan_.resolve(modules_);
  } catch (const plab::ConfigError&) {
    // A plan made for another model (an override of a module this one lacks,
    // or of its tied head): Start says why; the tree shows no bf16 layer.
    return {};
  }
}

std::map<std::string, plab::GemmFormat> LayerTreePanel::resolvedGemmFormats() const {
  if (!hasModules_) return {};
  try {
    return plan_.resolveGemmFormats(modules_);
  } catch (const plab::ConfigError&) {
    return {};  // a loaded plan naming a module this model lacks: refresh() says so
  }
}

void LayerTreePanel::setSubtreeGemmFormat(const std::string& path, std::optional<plab::GemmFormat> format) {
  if (path.empty()) {
    // The whole model: the plan-wide format, without overrides below it.
    plan_.gemm_format = format.value_or(plab::GemmFormat::Bf16);
    plan_.gemm_formats.clear();
  } else {
    for (auto it = plan_.gemm_formats.begin(); it != plan_.gemm_formats.end();) {
      if (it->first != path && inSubtree(it->first, path)) it = plan_.gemm_formats.erase(it);
      else ++it;
    }
    if (format) plan_.setGemmSubtree(path, *format);
    else plan_.gemm_formats.erase(path);
  }
  refresh();
  emit planChanged();
}

void LayerTreePanel::setSubtreeRecipe(const std::string& path, std::optional<plab::OptimizerMode> recipe) {
  plan_ = withSubtreeRecipe(plan_, path, recipe);
  refresh();
  emit planChanged();
}

std::map<std::string, plab::OptimizerMode> LayerTreePanel::resolvedRecipes() const {
  return hasModules_ ? resolvedRecipesOrEmpty(plan_, modules_, mode_) : std::map<std::string, plab::OptimizerMode>{};
}

void LayerTreePanel::showRowMenu(const QPoint& pos) {
  QTreeWidgetItem* item = tree_->itemAt(pos);
  if (!item) return;
  const std::unique_ptr<QMenu> menu = rowMenu(item->data(NameColumn, PathRole).toString().toStdString());
  if (menu) menu->exec(tree_->viewport()->mapToGlobal(pos));
}

std::unique_ptr<QMenu> LayerTreePanel::rowMenu(const std::string& path) {
  const auto gemms = resolvedGemmFormats();
  const auto* node = findNode(modules_, path);
  const bool hasProducts = std::any_of(gemms.begin(), gemms.end(), [&](const auto& g) { return inSubtree(g.first, path); });
  const bool hasWeights = node && node->totalParameters > 0;
  if (!hasProducts && !hasWeights) return nullptr;
  auto menu = std::make_unique<QMenu>(this);
  menu->setObjectName("rowMenu");
  const QString where = path.empty() ? QString("the whole model") : QString::fromStdString(path);
  // Each section ticks the row's current choice; none when its subtree mixes
  // several (the row's cells say "mixed").
  const auto res = resolved();
  if (hasWeights) {
    const QString low = plab::modeUsesFp16(mode_) ? "fp16" : "bf16";
    const SubtreeCount c = countSubtree(*node, res);
    menu->addSection(QString("Precision of %1").arg(where));
    for (const bool toLow : {false, true}) {
      QAction* a = menu->addAction(toLow ? low : QString("fp32"), this, [this, path, toLow] { setSubtreeBf16(path, toLow); });
      a->setCheckable(true);
      a->setChecked(toLow ? c.bf16 == c.total : c.bf16 == 0);
    }
  }
  if (hasProducts) {
    std::set<plab::GemmFormat> used;
    for (const auto& [module, format] : gemms)
      if (inSubtree(module, path)) used.insert(format);
    menu->addSection(QString("GEMM format of %1").arg(where));
    for (plab::GemmFormat f : plab::allGemmFormats()) {
      QAction* a = menu->addAction(QString::fromStdString(plab::gemmFormatId(f)), this,
                                   [this, path, f] { setSubtreeGemmFormat(path, f); });
      a->setCheckable(true);
      a->setChecked(used.size() == 1 && *used.begin() == f);
    }
    if (plan_.gemm_formats.count(path))
      menu->addAction("as the plan-wide format (remove this row's choice)", this,
                      [this, path] { setSubtreeGemmFormat(path, std::nullopt); });
  }
  if (hasWeights)
    addRecipeSection(*menu, path, plan_, mode_, subtreeRecipe(*node, res, resolvedRecipes()),
                     [this, path](std::optional<plab::OptimizerMode> r) { setSubtreeRecipe(path, r); });
  return menu;
}

int64_t LayerTreePanel::bf16Parameters() const {
  if (!hasModules_) return 0;
  return plab::bf16ParameterCount(modules_, resolved());
}

plab::MemoryBreakdown LayerTreePanel::predictedMemory() const {
  return plab::estimateMemory(modules_, resolved(), mode_, adamw_, resolvedRecipes(),
                              hasModules_ ? resolvedMomentsOrEmpty(plan_, modules_, mode_)
                                          : std::map<std::string, plab::MomentPrecision>{});
}

plab::MemoryBreakdown LayerTreePanel::fp32Memory() const {
  return plab::fp32AdamWBaseline(modules_.totalParameters);
}

void LayerTreePanel::setPlan(const plab::PrecisionPlan& plan) {
  plan_ = plan;
  refresh();
  emit planChanged();
}

void LayerTreePanel::setOptimizer(plab::OptimizerMode mode, const plab::AdamWOptions& options) {
  mode_ = mode;
  adamw_ = options;
  refresh();
}

void LayerTreePanel::applyPreset(plab::PlanPreset preset) {
  plan_.preset = preset;
  plan_.overrides.clear();
  refresh();
  emit planChanged();
}

void LayerTreePanel::setSubtreeBf16(const std::string& path, bool bf16) {
  const auto p = bf16 ? plab::LayerPrecision::Bf16 : plab::LayerPrecision::Fp32;
  if (path.empty()) {
    // The whole model: a preset says it more simply than a root override.
    plan_.preset = bf16 ? plab::PlanPreset::AllBf16 : plab::PlanPreset::AllFp32;
    plan_.overrides.clear();
  } else {
    // Deeper overrides would win over this one: the subtree gets one precision.
    const std::string prefix = path + ".";
    for (auto it = plan_.overrides.begin(); it != plan_.overrides.end();) {
      if (it->first.compare(0, prefix.size(), prefix) == 0) it = plan_.overrides.erase(it);
      else ++it;
    }
    plan_.setSubtree(path, p);
  }
  refresh();
  emit planChanged();
}

void LayerTreePanel::onItemChanged(QTreeWidgetItem* item, int column) {
  if (updating_ || column != NameColumn || !(item->flags() & Qt::ItemIsUserCheckable)) return;
  const bool bf16 = item->checkState(NameColumn) != Qt::Unchecked;
  setSubtreeBf16(item->data(NameColumn, PathRole).toString().toStdString(), bf16);
}

void LayerTreePanel::refresh() {
  updating_ = true;
  // The plan's low-precision layers hold fp16 under the fp16 recipes: the
  // controls say which format a ticked row gets.
  const QString low = plab::modeUsesFp16(mode_) ? "fp16" : "bf16";
  linearBf16_->setText("Linear → " + low);
  allBf16_->setText("All " + low);
  norms_->setText("Norms in " + low);
  embeddings_->setText("Embeddings in " + low);
  tree_->headerItem()->setText(NameColumn, "Module (✓ = " + low + ")");
  norms_->setChecked(plan_.norms_bf16);
  embeddings_->setChecked(plan_.embeddings_bf16);
  gemmDefault_->setCurrentIndex(gemmDefault_->findData(static_cast<int>(plan_.gemm_format)));
  const bool flagsMatter = plan_.preset == plab::PlanPreset::LinearBf16;
  norms_->setEnabled(flagsMatter);
  embeddings_->setEnabled(flagsMatter);
  planLabel_->setText("<b>Plan:</b> " + planName().toHtmlEscaped() +
                      (plan_.overrides.empty() ? QString()
                                               : QString(" (preset %1, %2 row override%3)")
                                                     .arg(QString::fromStdString(plab::planPresetId(plan_.preset)))
                                                     .arg(plan_.overrides.size())
                                                     .arg(plan_.overrides.size() == 1 ? "" : "s")) +
                      (plan_.recipes.empty() ? QString()
                                             : QString("; %1 row recipe%2").arg(plan_.recipes.size())
                                                   .arg(plan_.recipes.size() == 1 ? "" : "s")) +
                      (plan_.moments.empty() ? QString()
                                             : QString("; %1 row moment store%2 (from the plan file)")
                                                   .arg(plan_.moments.size())
                                                   .arg(plan_.moments.size() == 1 ? "" : "s")));

  if (!hasModules_) {
    summary_->setText("No model selected");
    updating_ = false;
    return;
  }
  const auto res = resolved();
  const std::map<std::string, plab::GemmFormat> gemms = resolvedGemmFormats();
  const std::map<std::string, plab::OptimizerMode> recipes = resolvedRecipes();
  std::function<void(QTreeWidgetItem*)> update = [&](QTreeWidgetItem* item) {
    const std::string path = item->data(NameColumn, PathRole).toString().toStdString();
    showGemmCell(item, path, gemms);
    if (const auto* node = findNode(modules_, path); node && node->totalParameters > 0) {
      const SubtreeCount c = countSubtree(*node, res);
      const Qt::CheckState state = c.bf16 == 0 ? Qt::Unchecked
                                   : c.bf16 == c.total ? Qt::Checked : Qt::PartiallyChecked;
      item->setCheckState(NameColumn, state);
      item->setText(PrecisionColumn, (state == Qt::Checked ? low
                                      : state == Qt::Unchecked ? "fp32"
                                      : QString("mixed (%1 %2)").arg(percentText(double(c.bf16) / double(c.total), 0), low)) +
                                         recipeNote(*node, res, recipes, mode_));
      item->setForeground(PrecisionColumn, state == Qt::Unchecked ? QColor(30, 90, 200) : QColor(200, 90, 20));
    } else if (const auto* tied = node && !node->tiedTo.empty() ? findNode(modules_, node->tiedTo) : nullptr) {
      const SubtreeCount c = countSubtree(*tied, res);
      const bool bf16 = c.total > 0 && c.bf16 == c.total;
      item->setText(PrecisionColumn, (bf16 ? low : QString("fp32")) + " (as " + QString::fromStdString(tied->name) + ")");
      item->setForeground(PrecisionColumn, bf16 ? QColor(200, 90, 20) : QColor(30, 90, 200));
    } else {
      item->setText(PrecisionColumn, "–");
    }
    for (int i = 0; i < item->childCount(); ++i) update(item->child(i));
  };
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) update(tree_->topLevelItem(i));
  tree_->resizeColumnToContents(PrecisionColumn);  // "mixed (43 % bf16)" is wider than "fp32"
  tree_->resizeColumnToContents(GemmFormatColumn);

  const int64_t total = modules_.totalParameters;
  const int64_t bf16 = plab::bf16ParameterCount(modules_, res);
  const std::map<std::string, plab::MomentPrecision> stores = resolvedMomentsOrEmpty(plan_, modules_, mode_);
  const plab::MemoryBreakdown predicted = plab::estimateMemory(modules_, res, mode_, adamw_, recipes, stores);
  const plab::MemoryBreakdown baseline = plab::fp32AdamWBaseline(total);
  const int64_t saved = baseline.total() - predicted.total();
  const double savedFraction = baseline.total() > 0 ? double(saved) / double(baseline.total()) : 0.0;
  QString text = QString("<b>%9 share:</b> %1 of %2 parameters (%3)<br>"
                         "<b>Predicted training state</b> (%4): %5 vs %6 fp32 AdamW — saves %7 (%8)")
                     .arg(humanCount(bf16), humanCount(total),
                          percentText(total > 0 ? double(bf16) / double(total) : 0.0),
                          QString::fromStdString(plab::optimizerModeLabel(mode_)),
                          humanBytes(predicted.total()), humanBytes(baseline.total()), humanBytes(saved),
                          percentText(savedFraction))
                     .arg(low);
  if (plan_.usesLowPrecisionGemms()) {
    if (gemms.empty())
      text += "<br><b>The plan's GEMM formats name a module this model does not have.</b>";
    else
      text += "<br><i>Low-precision GEMMs are simulated (fake quantization; a bf16 layer multiplies the "
              "quantized values in bf16, an fp32 layer in fp32), not run on fp8/fp4 tensor cores.</i>";
  }
  if (mode_ == plab::OptimizerMode::Fp32AdamW && bf16 > 0)
    text += "<br><i>fp32 AdamW ignores the plan: everything trains in fp32.</i>";
  if (!plan_.recipes.empty() && plab::modeUsesFp16(mode_))
    text += "<br><b>The plan gives rows their own bf16 recipe: an fp16 mode refuses it (choose a bf16 mode, or "
            "remove the rows' recipes).</b>";
  else if (!plan_.recipes.empty() && plab::modeIsLayerRecipe(mode_) && recipes.empty())
    text += "<br><b>The plan's recipes name a module this model does not have.</b>";
  if (!plan_.moments.empty()) {
    if (!plab::modeIsLayerRecipe(mode_))
      text += "<br><b>The plan gives rows their own moment store: mode " +
              QString::fromStdString(plab::optimizerModeId(mode_)).toHtmlEscaped() + " refuses it.</b>";
    else if (stores.empty())
      text += "<br><b>The plan's moment stores do not apply to this model (a run says why).</b>";
    else {
      QString list;
      for (const auto& [path, store] : plan_.moments)
        list += (list.isEmpty() ? "" : ", ") + QString::fromStdString(path.empty() ? "(model)" : path) + " " +
                QString::fromStdString(plab::momentPrecisionId(store));
      text += "<br><i>Moment stores per row (plan file, counted above): " + list.toHtmlEscaped() + "</i>";
    }
  }
  summary_->setText(text);
  updating_ = false;
}

}  // namespace plab::ui
