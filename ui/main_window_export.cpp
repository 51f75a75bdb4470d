// MainWindow: exporting the session's runs as a report, in the background
// (a 7-run export took 3 s on the UI thread) with a progress dialog.
#include <QFileDialog>
#include <QLabel>
#include <QProgressDialog>
#include <filesystem>

#include "main_window.h"
#include "report/report_charts.h"
#include "report/report_export.h"
#include "util/run_folder.h"

namespace plab::ui {

void MainWindow::connectExport() {
  reportExport_ = new ReportExport(this);
  connect(reportExport_, &ReportExport::progress, this, [this](int done, int total, const QString& step) {
    if (!exportProgress_) return;
    exportProgress_->setMaximum(total);
    exportProgress_->setValue(done);
    exportProgress_->setLabelText(step);
  });
  const auto closeProgress = [this] {
    if (exportProgress_) exportProgress_->deleteLater();
    exportProgress_ = nullptr;
    updateButtons();
  };
  connect(reportExport_, &ReportExport::finished, this, [this, closeProgress](const QString& dir) {
    closeProgress();
    appendLog("report exported to " + dir);
    statusText_->setText("Report exported to " + dir);
    emit exportFinished(dir, true);
  });
  connect(reportExport_, &ReportExport::failed, this, [this, closeProgress](const QString& dir, const QString& message) {
    closeProgress();
    if (reportExport_->cancelled()) {  // asked for: no error box
      appendLog(message);
      statusText_->setText(message);
    } else {
      showError("Export failed", QString("Could not export the report to %1:\n%2").arg(dir, message));
    }
    emit exportFinished(dir, false);
  });
}

bool MainWindow::exporting() const { return reportExport_->busy(); }

void MainWindow::exportReport() {
  if (exporting()) return;
  const QString parent = QFileDialog::getExistingDirectory(this, "Export report into folder");
  if (parent.isEmpty()) return;
  // A new <name>-<time> folder per export: an earlier report is never
  // overwritten.
  const std::vector<plab::RunRecord> runs = store_.exportableRecords();
  const std::string base = runs.size() == 1 ? plab::report::safeFileName(runs.front().config.name) : "comparison";
  try {
    const std::filesystem::path dir = plab::createUniqueRunFolder(parent.toStdString(), base);
    exportReportTo(QString::fromStdString(dir.string()));
  } catch (const std::exception& e) {
    showError("Export failed", QString::fromUtf8(e.what()));
  }
}

bool MainWindow::exportReportTo(const QString& dir) {
  std::vector<std::string> detailFolders;
  std::vector<plab::RunRecord> runs = store_.exportableRecords(&detailFolders);
  if (runs.empty()) {
    showError("Nothing to export", "No run has measured anything yet.");
    return false;
  }
  const QString title = runs.size() == 1 ? "Precision Lab run " + QString::fromStdString(runs.front().config.name)
                                         : QString("Precision Lab comparison of %1 runs").arg(runs.size());
  if (!reportExport_->start(std::move(runs), dir, title, std::move(detailFolders))) return false;
  // Not modal: the window stays usable (training goes on) while it writes.
  exportProgress_ = new QProgressDialog("Exporting the report…", "Cancel", 0, 1, this);
  exportProgress_->setObjectName("exportProgress");
  exportProgress_->setWindowTitle("Export report");
  exportProgress_->setWindowModality(Qt::NonModal);
  exportProgress_->setAutoClose(false);
  exportProgress_->setAutoReset(false);
  exportProgress_->setMinimumDuration(300);  // quick exports never flash a dialog
  connect(exportProgress_, &QProgressDialog::canceled, reportExport_, &ReportExport::cancel);
  statusText_->setText("Exporting the report to " + dir + "…");
  updateButtons();
  return true;
}

}  // namespace plab::ui
