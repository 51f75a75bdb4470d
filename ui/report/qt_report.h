#pragma once
// The parts of a run report that need Qt rendering: charts as PNG (QCustomPlot,
// same look as the live charts) and the PDF report (charts + config + summary
// drawn with QPdfWriter). Used by the desktop app and by the CLI (which runs a
// QApplication on the offscreen platform for it). Needs a QApplication.
// The overloads taking ReportImages only paint on QImage and QPdfWriter and
// may run on a worker thread; the others render the images first and must
// run on the GUI thread.
#include <QString>
#include <vector>

#include "report/report_images.h"
#include "report/run_report.h"

namespace plab::ui {

// Writes loss.png, loss_vs_fp32.png (when an fp32 reference exists), update_lost.png,
// rounded_away.png, memory.png, layers_heatmap.png and, for a run with quantized
// moments, layers_moment_error_m.png and _v.png into dir (a run's name after
// each heatmap's stem when there are several runs).
// Throws plab::IoError naming the file on failure.
void writeChartPngs(const std::vector<plab::RunRecord>& runs, const QString& dir);
void writeChartPngs(const std::vector<ReportImage>& images, const QString& dir);

// Writes a multi-page PDF: title, summary table, the charts, and the exact
// config JSON of every run. Throws plab::IoError naming the file on failure.
void writePdfReport(const std::vector<plab::RunRecord>& runs, const QString& pdfPath,
                    const QString& title);
void writePdfReport(const std::vector<plab::RunRecord>& runs, const std::vector<ReportImage>& images,
                    const QString& pdfPath, const QString& title);

}  // namespace plab::ui
