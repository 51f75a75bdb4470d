#pragma once
// The chart images of a report, drawn by the live chart classes so that the
// PNGs and the PDF look like the app. The charts are QWidgets: every job
// must run on the GUI thread. They are separate jobs so that an export can
// render one per event-loop turn and keep the window responsive; the
// images then go to a worker thread (qt_report.h paints only on QImage and
// QPdfWriter).
#include <QImage>
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
  QImage image;
};

// One job per image: the loss chart, loss minus fp32 (when some run has an
// fp32 reference), update lost, rounded away, memory, then one layer heatmap
// per run with per-layer statistics.
std::vector<std::function<ReportImage()>> reportImageJobs(std::shared_ptr<const std::vector<plab::RunRecord>> runs);

// All jobs at once (the CLI, tests).
std::vector<ReportImage> renderReportImages(const std::vector<plab::RunRecord>& runs);

}  // namespace plab::ui
