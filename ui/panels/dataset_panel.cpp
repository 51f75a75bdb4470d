#include "panels/dataset_panel.h"

#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "panels/dataset_check.h"
#include "util/resources.h"
#include "util/wheel_guard.h"

namespace plab::ui {

DatasetPanel::DatasetPanel(QWidget* parent) : QWidget(parent) {
  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);

  auto* column = new QVBoxLayout;
  auto* row = new QHBoxLayout;
  path_ = new QLineEdit;
  path_->setObjectName("datasetPath");
  path_->setPlaceholderText("Embedded default corpus");
  path_->setClearButtonEnabled(true);
  browse_ = new QPushButton("Text/JSONL file…");
  useDefault_ = new QPushButton("Default");
  column->addWidget(path_);
  row->addWidget(browse_);
  row->addWidget(useDefault_);
  row->addStretch();
  column->addLayout(row);
  form->addRow("Dataset", column);

  textField_ = new QLineEdit("text");
  textField_->setObjectName("textField");
  textField_->setToolTip("JSONL only: the field holding the text of each line");
  form->addRow("JSONL text field", textField_);

  valFraction_ = new QDoubleSpinBox;
  valFraction_->setObjectName("valFraction");
  valFraction_->setRange(0.0, 0.9);
  valFraction_->setDecimals(3);
  valFraction_->setSingleStep(0.05);
  form->addRow("Validation fraction", valFraction_);

  description_ = new QLabel;
  description_->setObjectName("datasetDescription");
  description_->setWordWrap(true);
  description_->setStyleSheet("color: palette(mid);");
  form->addRow("", description_);

  connect(browse_, &QPushButton::clicked, this, [this] {
    const QString file = QFileDialog::getOpenFileName(this, "Choose training text", QString(),
                                                      "Text or JSONL (*.txt *.jsonl *.json);;All files (*)");
    if (!file.isEmpty()) setPath(file);
  });
  connect(useDefault_, &QPushButton::clicked, this, [this] { setPath(QString()); });
  connect(path_, &QLineEdit::textChanged, this, [this] { updateDescription(); });
  // Re-read once the field name is complete, not on every keystroke.
  connect(textField_, &QLineEdit::editingFinished, this, [this] { updateDescription(); });

  setDataConfig(plab::DataConfig{});
  guardWheel(this);
}

plab::DataConfig DatasetPanel::dataConfig() const {
  plab::DataConfig c;
  c.path = path_->text().trimmed().toStdString();
  c.text_field = textField_->text().trimmed().isEmpty() ? "text" : textField_->text().trimmed().toStdString();
  c.val_fraction = valFraction_->value();
  return c;
}

void DatasetPanel::setDataConfig(const plab::DataConfig& config) {
  path_->setText(QString::fromStdString(config.path));
  textField_->setText(QString::fromStdString(config.text_field));
  valFraction_->setValue(config.val_fraction);
  updateDescription();
}

void DatasetPanel::setPath(const QString& path) {
  path_->setText(path);
  updateDescription();
}

void DatasetPanel::updateDescription() {
  const QString path = path_->text().trimmed();
  textField_->setEnabled(path.endsWith(".jsonl") || path.endsWith(".json"));
  const QString problem = datasetProblem(dataConfig());
  if (problem != problem_) {
    problem_ = problem;
    emit problemChanged();
  }
  if (path.isEmpty()) {
    qint64 size = 0;
    if (plab::hasEmbeddedResource("data/corpus.txt"))
      size = static_cast<qint64>(plab::embeddedResource("data/corpus.txt").size());
    description_->setText(QString("Embedded corpus shipped with the app (%1 bytes)").arg(size));
    return;
  }
  if (!problem_.isEmpty()) {
    description_->setText("<span style='color:#b00020'>" + problem_.toHtmlEscaped() + "</span>");
    return;
  }
  description_->setText(QString("%1 KiB").arg(QFileInfo(path).size() / 1024.0, 0, 'f', 1));
}

}  // namespace plab::ui
