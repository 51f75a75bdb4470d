#include "panels/model_picker.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <stdexcept>

#include "hub/hf_cache.h"
#include "panels/download_dialog.h"
#include "panels/model_folder_check.h"
#include "util/format.h"
#include "util/wheel_guard.h"

namespace plab::ui {
namespace {

bool sameSpec(const plab::ModelSpec& a, const plab::ModelSpec& b) {
  return a.source == b.source && a.path == b.path && a.revision == b.revision;
}

QString describeSpec(const plab::ModelSpec& s) {
  if (s.source == "embedded") return "Embedded tiny GPT-2 (pretrained)";
  if (s.source == "embedded-init") return "Embedded tiny GPT-2 (random init)";
  if (s.source == "config") return "New from " + QString::fromStdString(s.path) + " (random init)";
  if (s.source == "folder") return "Folder: " + QString::fromStdString(s.path);
  return QString::fromStdString(s.path) + "@" + QString::fromStdString(s.revision).left(12);
}

}  // namespace

ModelPicker::ModelPicker(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);

  combo_ = new QComboBox;
  combo_->setObjectName("modelCombo");
  combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  combo_->setMinimumContentsLength(24);
  layout->addWidget(combo_);

  auto* buttons = new QGridLayout;
  fromConfig_ = new QPushButton("New from config.json…");
  fromFolder_ = new QPushButton("Local folder…");
  download_ = new QPushButton("Download from Hub…");
  refresh_ = new QPushButton("Refresh HF cache");
  fromConfig_->setToolTip("Random init from a Hugging Face config.json");
  fromFolder_->setToolTip("A folder with config.json, *.safetensors and tokenizer.json");
  refresh_->setToolTip(QString("Re-read %1").arg(QString::fromStdString(plab::hfHubCache().string())));
  buttons->addWidget(fromConfig_, 0, 0);
  buttons->addWidget(fromFolder_, 0, 1);
  buttons->addWidget(download_, 1, 0);
  buttons->addWidget(refresh_, 1, 1);
  layout->addLayout(buttons);

  info_ = new QLabel;
  info_->setObjectName("modelInfo");
  info_->setWordWrap(true);
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(info_);
  error_ = new QLabel;
  error_->setObjectName("modelError");
  error_->setWordWrap(true);
  error_->setStyleSheet("color: #b00020; font-weight: bold;");
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->hide();
  layout->addWidget(error_);

  plab::ModelSpec embedded;
  addEntry(embedded, describeSpec(embedded));
  plab::ModelSpec embeddedInit;
  embeddedInit.source = "embedded-init";
  addEntry(embeddedInit, describeSpec(embeddedInit));
  refreshCache();

  connect(combo_, &QComboBox::currentIndexChanged, this, [this] {
    combo_->setToolTip(combo_->currentText());  // a long name is elided in the narrow panel
    emit selectionChanged();
    inspectCurrent();
  });
  combo_->setToolTip(combo_->currentText());
  connect(fromConfig_, &QPushButton::clicked, this, &ModelPicker::chooseConfigFile);
  connect(fromFolder_, &QPushButton::clicked, this, &ModelPicker::chooseFolder);
  connect(download_, &QPushButton::clicked, this, &ModelPicker::downloadFromHub);
  connect(refresh_, &QPushButton::clicked, this, &ModelPicker::refreshCache);

  // The default selection is inspected once the event loop runs, so that
  // the owner can connect to modelInspected first.
  QMetaObject::invokeMethod(this, [this] { inspectCurrent(); }, Qt::QueuedConnection);
  guardWheel(this);
}

ModelPicker::~ModelPicker() { tasks_.waitAll(); }

plab::ModelSpec ModelPicker::spec() const {
  const int index = combo_->currentData().toInt();
  if (index < 0 || index >= static_cast<int>(specs_.size())) return plab::ModelSpec{};
  return specs_[static_cast<size_t>(index)];
}

QString ModelPicker::errorText() const { return error_->isHidden() ? QString() : error_->text(); }

int ModelPicker::addEntry(const plab::ModelSpec& spec, const QString& label) {
  for (int i = 0; i < combo_->count(); ++i)
    if (sameSpec(specs_[static_cast<size_t>(combo_->itemData(i).toInt())], spec)) return i;
  specs_.push_back(spec);
  combo_->addItem(label, static_cast<int>(specs_.size() - 1));
  combo_->setItemData(combo_->count() - 1, label, Qt::ToolTipRole);
  return combo_->count() - 1;
}

void ModelPicker::setModelSpec(const plab::ModelSpec& spec, const QString& label) {
  const int index = addEntry(spec, label.isEmpty() ? describeSpec(spec) : label);
  if (combo_->currentIndex() == index) inspectCurrent();
  else combo_->setCurrentIndex(index);  // inspects through currentIndexChanged
}

void ModelPicker::refreshCache() {
  const plab::ModelSpec current = spec();
  std::vector<plab::CachedModel> cached;
  try {
    cached = plab::listCachedModels();
  } catch (const std::exception& e) {
    error_->setText(QString("Could not read the HF cache: %1").arg(e.what()));
    error_->show();
  }
  const QSignalBlocker block(combo_);
  for (const auto& m : cached) {
    plab::ModelSpec s;
    s.source = "hub";
    s.path = m.repoId;
    s.revision = m.revision;
    QString label = QString("HF cache: %1 (%2%3, %4)")
                        .arg(QString::fromStdString(m.repoId),
                             m.modelType.empty() ? QString("?") : QString::fromStdString(m.modelType),
                             m.hasWeights ? QString() : QString(", no weights"),
                             humanBytes(static_cast<int64_t>(m.sizeBytes)));
    addEntry(s, label);
  }
  for (int i = 0; i < combo_->count(); ++i)
    if (sameSpec(specs_[static_cast<size_t>(combo_->itemData(i).toInt())], current)) combo_->setCurrentIndex(i);
  combo_->setToolTip(combo_->currentText());  // set while its signals were blocked
}

void ModelPicker::inspectCurrent() {
  const plab::ModelSpec s = spec();
  const int ticket = ++ticket_;
  ++pending_;
  hasOverview_ = false;
  info_->setText("Inspecting " + describeSpec(s).toHtmlEscaped() + " …");
  error_->hide();
  tasks_.run<plab::ModelOverview>(
      [s] {
        if (s.source == "folder") {
          const QString problem = modelFolderProblem(QString::fromStdString(s.path));
          if (!problem.isEmpty()) throw std::runtime_error(problem.toStdString());
        }
        return plab::inspectModel(s);
      },
      [this, ticket, s](const plab::ModelOverview& overview) {
        --pending_;
        if (ticket != ticket_) return;  // a newer selection superseded this one
        overview_ = overview;
        hasOverview_ = true;
        const auto& c = overview.config;
        info_->setText(QString("<b>%1</b> — %2 parameters, %3 layers, hidden %4, vocab %5, tokenizer %6")
                           .arg(QString::fromStdString(c.model_type), humanCount(overview.parameterCount))
                           .arg(c.num_hidden_layers)
                           .arg(c.hidden_size)
                           .arg(c.vocab_size)
                           .arg(QString::fromStdString(overview.tokenizerKind)) +
                       "<br><small>" + QString::fromStdString(overview.sourceDescription).toHtmlEscaped() +
                       "</small>" +
                       (s.source == "folder" && !modelFolderHasTokenizer(QString::fromStdString(s.path))
                            ? "<br><span style='color:#b45309'>No tokenizer.json in this folder: text is "
                              "tokenized as raw bytes, not with the model's vocabulary.</span>"
                            : QString()));
        emit modelInspected(overview);
      },
      [this, ticket, s](const QString& message) {
        --pending_;
        if (ticket != ticket_) return;
        info_->setText(describeSpec(s).toHtmlEscaped());
        error_->setText("Cannot use this model: " + message);
        error_->show();
        emit inspectionFailed(message);
      });
}

void ModelPicker::chooseConfigFile() {
  const QString file = QFileDialog::getOpenFileName(this, "Model config.json (random init)", QString(),
                                                    "config.json (*.json);;All files (*)");
  if (file.isEmpty()) return;
  plab::ModelSpec s;
  s.source = "config";
  s.path = file.toStdString();
  setModelSpec(s);
}

void ModelPicker::chooseFolder() {
  const QString dir = QFileDialog::getExistingDirectory(this, "Model folder (config.json + safetensors)");
  if (dir.isEmpty()) return;
  plab::ModelSpec s;
  s.source = "folder";
  s.path = QDir::cleanPath(dir).toStdString();
  setModelSpec(s);
}

void ModelPicker::downloadFromHub() {
  DownloadDialog dialog(this);
  if (dialog.exec() != QDialog::Accepted) return;
  refreshCache();
  plab::ModelSpec s;
  s.source = "hub";
  s.path = dialog.repoId().toStdString();
  s.revision = dialog.revision().toStdString();
  setModelSpec(s, "Hub: " + dialog.repoId() + "@" + dialog.revision());
}

}  // namespace plab::ui
