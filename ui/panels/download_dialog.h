#pragma once
// "Download from Hub…": repo id + revision, the endpoint in use (HF_ENDPOINT),
// a progress bar and Cancel. plab::downloadModel runs on a background thread.
#include <QDialog>
#include <atomic>
#include <filesystem>
#include <memory>

#include "util/background_task.h"

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace plab::ui {

class DownloadDialog : public QDialog {
  Q_OBJECT
 public:
  explicit DownloadDialog(QWidget* parent = nullptr);
  ~DownloadDialog() override;

  QString repoId() const;
  QString revision() const;
  QString snapshotDir() const { return snapshotDir_; }  // set after a successful download
  QString errorText() const { return error_; }

 public slots:
  void startDownload();
  void reject() override;  // cancels a running download first

 private:
  void setRunning(bool running);

  QLineEdit* repo_;
  QLineEdit* revision_;
  QLabel* endpoint_;
  QProgressBar* progress_;
  QLabel* status_;
  QPushButton* download_;
  QPushButton* cancel_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  bool running_ = false;
  QString snapshotDir_;
  QString error_;
  BackgroundTasks tasks_{this};
};

}  // namespace plab::ui
