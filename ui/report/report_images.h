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

// MomentErrorM/V: a run's quantized moment store (adamw.moments 8bit, 4bit,
// fp8) per layer and window, for the runs that measured it.
enum class ReportImageKind { Loss, LossVsFp32, UpdateLost, RoundedAway, Memory, Heatmap, MomentErrorM, MomentErrorV };

struct ReportImage {
  ReportImageKind kind;
  QString file;   // "loss.png"; the PNG written into the report's folder
  QString title;  // for the PDF's captions
  QImage image;   // null until rasterize()
  QPicture picture;  // the chart's paint commands, in chart pixels
  QSize size;        // the chart's size in chart pixels
  double scaleMax = 0;  // heatmaps: the top of the colour scale, in %
};

// Draws picture into image at the report's scale; any thread. Does nothing
// when image is drawn already.
void rasterize(ReportImage& image);

// One job per image: the loss chart, loss minus fp32 (when some run has an
// fp32 reference), update lost, rounded away, memory, then one layer heatmap
// per run with per-layer statistics, each followed by that run's moment-error
// heatmaps (m, then v) where it measured them (quantized moments); those
// share one colour scale, 0 to a round figure above the largest error of any
// run (the update-lost maps keep 0–100 %).
std::vector<std::function<ReportImage()>> reportImageJobs(std::shared_ptr<const std::vector<plab::RunRecord>> runs);

// All jobs at once, rasterized (the CLI, tests).
std::vector<ReportImage> renderReportImages(const std::vector<plab::RunRecord>& runs);

// Whether a run measured the moment error per layer (a window with m or v).
bool hasMomentErrorLayers(const plab::RunRecord& run);
// The moment-error heatmaps' shared colour scale top, in %: the largest m or
// v error of any layer, window and run, rounded up to 1, 2 or 5 x 10^k
// (at least 0.1 %, at most 100 %).
double momentErrorScaleMax(const std::vector<plab::RunRecord>& runs);

}  // namespace plab::ui
