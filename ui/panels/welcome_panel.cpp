#include "panels/welcome_panel.h"

#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace plab::ui {

WelcomePanel::WelcomePanel(QWidget* parent) : QWidget(parent) {
  setObjectName("welcomePanel");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(40, 32, 40, 32);
  layout->setSpacing(14);

  auto* title = new QLabel("<h2>What does bf16 round away?</h2>");
  title->setObjectName("welcomeTitle");
  // The figures are docs/default-experiment.md's (seeds 7–16).
  auto* text = new QLabel(
      "Training with bf16 weights and plain AdamW loses most small updates: bf16 keeps 8 bits of mantissa, so an "
      "update under half a unit in the last place leaves the weight unchanged. Kahan-summed updates and "
      "stochastic rounding keep them.<br><br>"
      "<b>Compare all modes</b> fine-tunes the built-in tiny GPT-2 once per optimizer mode — fp32, bf16, "
      "bf16-nearest, bf16-kahan, bf16-sr and mixed — on the same batches and seed (200 steps each, the CLI's "
      "<tt>precision-lab-cli run --default</tt>).<br><br>"
      "<b>What to look for:</b> in <i>Loss minus fp32</i>, plain bf16 climbs above zero (about +0.05 nats by "
      "the end) while Kahan, stochastic rounding and mixed stay on fp32's line; <i>Update lost</i> shows why "
      "(nearly 90 % of bf16's intended update never reaches its weights), and the table's verdict says whether "
      "each gap is beyond seed noise.");
  text->setObjectName("welcomeText");
  text->setWordWrap(true);
  text->setTextFormat(Qt::RichText);
  text->setMaximumWidth(760);

  compare_ = new QPushButton("Compare all modes on the built-in model");
  compare_->setObjectName("welcomeCompareButton");
  compare_->setMinimumHeight(40);
  compare_->setToolTip("Puts the default experiment into the setup panels and queues one run per mode");
  connect(compare_, &QPushButton::clicked, this, &WelcomePanel::compareRequested);

  auto* rest = new QLabel(
      "Or pick a model and data, set per-layer precision and the optimizer on the left, and press "
      "<b>Start</b>. <i>File › Open run…</i> adds runs made by the CLI.");
  rest->setObjectName("welcomeOther");
  rest->setWordWrap(true);
  rest->setMaximumWidth(760);

  layout->addStretch(1);
  layout->addWidget(title);
  layout->addWidget(text);
  layout->addWidget(compare_, 0, Qt::AlignLeft);
  layout->addWidget(rest);
  layout->addStretch(2);
}

}  // namespace plab::ui
