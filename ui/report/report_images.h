#pragma once
// The chart images of a report, drawn by the live chart classes so that the
// PNGs and the PDF look like the app. The charts are QWidgets: every job
// must run on the GUI thread, but a job only records the chart's paint
// commands (a QPicture, ~1 ms); rasterizing them, antialiased at twice the
// size (0.5–1 s for a loss chart of 6 runs), happens on the export's worker
// thread (qt_report.h paints only on QImage and QPdfWriter).
#include <QImage>
#include <QPicture>
#include <QString>
#include <functional>
#include <memory>
#include <vector>

#include "report/run_report.h"

namespace plab::ui {

enum class ReportImageKind { Loss, LossVsFp32, UpdateLost, RoundedAway, Memory, Heatmap };

struct ReportImage {
  ReportImageKind kind;
  QString file;   // "loss.png"; the PNG written into the report's folder
  QString title;  // for the PDF's captions
  QImage image;   // null until rasterize()
  QPicture picture;  // the chart's paint commands, in chart pixels
  QSize size;        // the chart's size in chart pixels
};

// Draws picture into image at the report's scale; any thread. Does nothing
// when image is drawn already.
void rasterize(ReportImage& image);

// One job per image: the loss chart, loss minus fp32 (when some run has an
// fp32 reference), update lost, rounded away, memory, then one layer heatmap
// per run with per-layer statistics.
std::vector<std::function<ReportImage()>> reportImageJobs(std::shared_ptr<const std::vector<plab::RunRecord>> runs);

// All jobs at once, rasterized (the CLI, tests).
std::vector<ReportImage> renderReportImages(const std::vector<plab::RunRecord>& runs);

}  // namespace plab::ui
