#pragma once
// Writes a whole report (core's JSON/CSV/SVG/HTML, the PNG charts and the
// PDF) without blocking the window: the chart images are rendered on the
// GUI thread one per event-loop turn (the charts are widgets), everything
// else on a worker thread. Reports progress and can be cancelled between
// steps; a cancelled export leaves the files written so far.
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "report/report_images.h"
#include "report/run_report.h"

namespace plab::ui {

class ReportExport : public QObject {
  Q_OBJECT
 public:
  explicit ReportExport(QObject* parent = nullptr);
  ~ReportExport() override;  // waits for the worker thread

  // Starts writing runs into dir (created); false when an export is running.
  // detailFolders[i], when not empty, is where runs[i]'s per-layer records
  // are read from first (a run listed with scalar steps: report/run_index.h),
  // on the worker thread.
  bool start(std::vector<plab::RunRecord> runs, const QString& dir, const QString& title,
             std::vector<std::string> detailFolders = {});
  bool busy() const { return busy_; }
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }  // the last export was asked to stop

 signals:
  void progress(int done, int total, const QString& step);
  void finished(const QString& dir);
  void failed(const QString& dir, const QString& message);  // also when cancelled

 private:
  void readDetails(std::vector<plab::RunRecord> runs, std::vector<std::string> folders);
  void beginImages(std::shared_ptr<const std::vector<plab::RunRecord>> runs);
  void renderNextImage();
  void startWorker();
  void end(bool ok, const QString& message);

  std::shared_ptr<const std::vector<plab::RunRecord>> runs_;
  std::vector<std::function<ReportImage()>> jobs_;
  std::shared_ptr<std::vector<ReportImage>> images_;
  QString dir_, title_;
  int done_ = 0, total_ = 0;
  bool busy_ = false;
  std::atomic<bool> cancelled_{false};
  QPointer<QThread> worker_;
};

}  // namespace plab::ui
