#include "panels/download_dialog.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "hub/hub_download.h"

namespace plab::ui {

DownloadDialog::DownloadDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle("Download model from the Hugging Face Hub");
  setMinimumWidth(460);
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  repo_ = new QLineEdit;
  repo_->setObjectName("repoId");
  repo_->setPlaceholderText("org/name, e.g. sshleifer/tiny-gpt2");
  revision_ = new QLineEdit("main");
  revision_->setObjectName("revision");
  plab::DownloadOptions defaults;
  endpoint_ = new QLabel(QString::fromStdString(plab::hubEndpoint(defaults)));
  endpoint_->setToolTip("Set HF_ENDPOINT to use a mirror; HF_TOKEN for gated models");
  endpoint_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  form->addRow("Repository", repo_);
  form->addRow("Revision", revision_);
  form->addRow("Endpoint", endpoint_);
  layout->addLayout(form);

  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  layout->addWidget(progress_);
  status_ = new QLabel(" ");
  status_->setWordWrap(true);
  status_->setObjectName("downloadStatus");
  layout->addWidget(status_);

  auto* buttons = new QHBoxLayout;
  buttons->addStretch();
  download_ = new QPushButton("Download");
  download_->setDefault(true);
  cancel_ = new QPushButton("Cancel");
  buttons->addWidget(download_);
  buttons->addWidget(cancel_);
  layout->addLayout(buttons);

  connect(download_, &QPushButton::clicked, this, &DownloadDialog::startDownload);
  connect(cancel_, &QPushButton::clicked, this, &DownloadDialog::reject);
}

DownloadDialog::~DownloadDialog() {
  if (cancelled_) cancelled_->store(true);
  tasks_.waitAll();
}

QString DownloadDialog::repoId() const { return repo_->text().trimmed(); }
QString DownloadDialog::revision() const {
  return revision_->text().trimmed().isEmpty() ? "main" : revision_->text().trimmed();
}

void DownloadDialog::setRunning(bool running) {
  running_ = running;
  download_->setEnabled(!running);
  repo_->setEnabled(!running);
  revision_->setEnabled(!running);
}

void DownloadDialog::startDownload() {
  if (running_) return;
  if (!repoId().contains('/')) {
    status_->setText("<span style='color:#b00020'>Enter a repository id like org/name.</span>");
    return;
  }
  error_.clear();
  setRunning(true);
  status_->setText("Connecting…");
  progress_->setValue(0);
  cancelled_ = std::make_shared<std::atomic<bool>>(false);

  const std::string repo = repoId().toStdString();
  plab::DownloadOptions options;
  options.revision = revision().toStdString();
  auto cancelled = cancelled_;
  QPointer<DownloadDialog> self(this);
  options.progress = [cancelled, self](const plab::DownloadProgress& p) {
    const double fileFraction = p.fileBytesTotal > 0 ? double(p.fileBytesDone) / double(p.fileBytesTotal) : 0.0;
    const double overall = p.fileCount > 0 ? (p.fileIndex + fileFraction) / p.fileCount : 0.0;
    const QString text = QString("%1 (%2/%3): %4 MiB%5")
                             .arg(QString::fromStdString(p.file))
                             .arg(p.fileIndex + 1)
                             .arg(p.fileCount)
                             .arg(double(p.fileBytesDone) / (1024.0 * 1024.0), 0, 'f', 1)
                             .arg(p.fileBytesTotal > 0
                                      ? QString(" of %1").arg(double(p.fileBytesTotal) / (1024.0 * 1024.0), 0, 'f', 1)
                                      : QString());
    QMetaObject::invokeMethod(self.data(), [self, overall, text] {
      if (!self) return;
      self->progress_->setValue(static_cast<int>(overall * 1000));
      self->status_->setText(text);
    }, Qt::QueuedConnection);
    return !cancelled->load();
  };

  tasks_.run<QString>(
      [repo, options] { return QString::fromStdString(plab::downloadModel(repo, options).string()); },
      [this](const QString& dir) {
        setRunning(false);
        snapshotDir_ = dir;
        progress_->setValue(1000);
        accept();
      },
      [this](const QString& message) {
        setRunning(false);
        error_ = message;
        if (cancelled_ && cancelled_->load()) {
          QDialog::reject();
          return;
        }
        status_->setText("<span style='color:#b00020'>" + message.toHtmlEscaped() + "</span>");
        QMessageBox::warning(this, "Download failed", message);
      });
}

void DownloadDialog::reject() {
  if (running_ && cancelled_) {
    cancelled_->store(true);  // the download throws "cancelled" and the dialog closes then
    status_->setText("Cancelling…");
    return;
  }
  QDialog::reject();
}

}  // namespace plab::ui
