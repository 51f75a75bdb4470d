#include "report/report_export.h"

#include <QCoreApplication>
#include <QTimer>
#include <algorithm>
#include <filesystem>

#include "report/run_folder_reader.h"

#include "report/qt_report.h"
#include "util/errors.h"

namespace plab::ui {
namespace {

// The worker's steps after the images: core's files, the PNGs, the PDF.
constexpr int kWorkerSteps = 3;

// PNGs and the PDF are written under a hidden folder and renamed into
// place (same file system), like core's files and the CLI's: a crash
// mid-export never leaves a torn image or PDF.
void moveFilesInto(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  for (const fs::directory_entry& e : fs::directory_iterator(from)) {
    std::error_code ec;
    fs::rename(e.path(), to / e.path().filename(), ec);
    if (ec) throw plab::IoError("cannot write " + (to / e.path().filename()).string() + ": " + ec.message());
  }
}

}  // namespace

ReportExport::ReportExport(QObject* parent) : QObject(parent) {}

ReportExport::~ReportExport() {
  cancelled_ = true;
  if (worker_) worker_->wait();
}

bool ReportExport::start(std::vector<plab::RunRecord> runs, const QString& dir, const QString& title,
                         std::vector<std::string> detailFolders) {
  if (busy_) return false;
  if (worker_) worker_->wait();  // the last one has posted its result and is ending
  busy_ = true;
  cancelled_ = false;
  dir_ = dir;
  title_ = title;
  done_ = 0;
  total_ = 1 + kWorkerSteps;  // until the charts are known
  const bool readFirst = std::any_of(detailFolders.begin(), detailFolders.end(), [](const std::string& f) { return !f.empty(); });
  if (readFirst) {
    readDetails(std::move(runs), std::move(detailFolders));
  } else {
    auto shared = std::make_shared<const std::vector<plab::RunRecord>>(std::move(runs));
    // Returns to the event loop before the first chart is drawn.
    QTimer::singleShot(0, this, [this, shared] { beginImages(shared); });
  }
  return true;
}

void ReportExport::readDetails(std::vector<plab::RunRecord> runs, std::vector<std::string> folders) {
  emit progress(0, total_, "Reading the runs' per-layer records…");
  auto post = [this](std::function<void()> f) { QMetaObject::invokeMethod(this, std::move(f), Qt::QueuedConnection); };
  worker_ = QThread::create([this, post, runs = std::move(runs), folders = std::move(folders)]() mutable {
    try {
      for (size_t i = 0; i < runs.size() && i < folders.size(); ++i) {
        if (cancelled_) throw std::runtime_error("Export cancelled before anything was written to " + dir_.toStdString());
        if (folders[i].empty()) continue;
        // The folder's metrics as written; the name, result and reference as listed.
        runs[i].steps = plab::readRunFolder(folders[i]).record.steps;
      }
      auto shared = std::make_shared<const std::vector<plab::RunRecord>>(std::move(runs));
      post([this, shared] { beginImages(shared); });
    } catch (const std::exception& e) {
      const QString message = QString::fromUtf8(e.what());
      post([this, message] { end(false, message); });
    }
  });
  connect(worker_, &QThread::finished, worker_, &QObject::deleteLater);
  worker_->start();
}

void ReportExport::beginImages(std::shared_ptr<const std::vector<plab::RunRecord>> runs) {
  if (worker_) worker_->wait();  // the reading thread has posted and is ending
  runs_ = std::move(runs);
  jobs_ = reportImageJobs(runs_);
  images_ = std::make_shared<std::vector<ReportImage>>();
  total_ = static_cast<int>(jobs_.size()) + kWorkerSteps;
  renderNextImage();
}

void ReportExport::renderNextImage() {
  if (cancelled_) return end(false, "Export cancelled; the files written so far are in " + dir_);
  if (images_->size() == jobs_.size()) return startWorker();
  emit progress(done_, total_, "Preparing charts…");
  try {
    images_->push_back(jobs_[images_->size()]());
  } catch (const std::exception& e) {
    return end(false, QString::fromUtf8(e.what()));
  }
  ++done_;
  QTimer::singleShot(0, this, &ReportExport::renderNextImage);
}

void ReportExport::startWorker() {
  jobs_.clear();  // they hold the chart builders; the images are drawn
  const auto runs = runs_;
  const auto images = images_;
  const QString dir = dir_, title = title_;
  const int first = done_, total = total_;
  // Results are queued back to this object's thread; the thread never
  // outlives this object (the destructor waits for it).
  auto post = [this](std::function<void()> f) { QMetaObject::invokeMethod(this, std::move(f), Qt::QueuedConnection); };
  const auto stopIfCancelled = [this, dir] {
    if (cancelled_) throw std::runtime_error("Export cancelled; the files written so far are in " + dir.toStdString());
  };
  worker_ = QThread::create([this, runs, images, dir, title, first, total, post, stopIfCancelled] {
    auto step = [&](int n, const QString& text) { post([this, n, total, text] { emit progress(n, total, text); }); };
    try {
      const std::filesystem::path path(dir.toStdString());
      step(first, "Writing data, HTML and SVG charts…");
      if (runs->size() == 1) plab::writeRunReport(path, runs->front());
      else plab::writeComparisonReport(path, *runs);
      stopIfCancelled();
      const std::filesystem::path tmp = path / (".qt-report-tmp-" + std::to_string(QCoreApplication::applicationPid()));
      std::error_code ec;
      std::filesystem::remove_all(tmp, ec);
      try {
        step(first + 1, "Drawing and writing PNG charts…");
        for (ReportImage& image : *images) {  // off the GUI thread: the slow part of a chart
          rasterize(image);
          stopIfCancelled();
        }
        writeChartPngs(*images, QString::fromStdString(tmp.string()));
        stopIfCancelled();
        step(first + 2, "Writing the PDF…");
        writePdfReport(*runs, *images, QString::fromStdString((tmp / "report.pdf").string()), title);
        moveFilesInto(tmp, path);
      } catch (...) {
        std::filesystem::remove_all(tmp, ec);
        throw;
      }
      std::filesystem::remove_all(tmp, ec);
      post([this] { end(true, {}); });
    } catch (const std::exception& e) {
      const QString message = QString::fromUtf8(e.what());
      post([this, message] { end(false, message); });
    }
  });
  connect(worker_, &QThread::finished, worker_, &QObject::deleteLater);
  worker_->start();
}

void ReportExport::end(bool ok, const QString& message) {
  busy_ = false;
  jobs_.clear();
  images_.reset();
  emit progress(total_, total_, ok ? "Done" : "Stopped");
  if (ok) emit finished(dir_);
  else emit failed(dir_, message);
}

}  // namespace plab::ui
