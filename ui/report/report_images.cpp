#include "report/report_images.h"

#include <algorithm>
#include <cmath>

#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "charts/metric_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/update_lost_chart.h"
#include "report/fp32_comparison.h"
#include "report/fp32_twin.h"
#include "report/report_charts.h"
#include "report/run_order.h"

namespace plab::ui {
namespace {

using Runs = std::shared_ptr<const std::vector<plab::RunRecord>>;

// Sizes in chart pixels: the loss charts span the PDF page's width, the
// others share it two by two (smaller sizes keep their text readable there).
constexpr int kChartWidth = 1000;
constexpr int kChartHeight = 560;
constexpr int kSmallWidth = 640;
constexpr int kSmallHeight = 420;
constexpr int kHeatmapWidth = 560;
constexpr int kHeatmapHeight = 400;
constexpr double kScale = 2.0;  // sharp in the PDF and on high-dpi screens

// Runs often draw the same curve (fp32 and mixed; bf16 and bf16-nearest),
// and the last one drawn hid the others. Earlier runs are drawn wider, so
// one under another shows as a coloured rim.
double underlayWidth(double width, size_t run, size_t runs) {
  return runs > 1 ? width + 2.4 * static_cast<double>(runs - 1 - run) / static_cast<double>(runs - 1) : width;
}

void widen(QCPGraph* g, size_t run, size_t runs) {
  if (!g) return;
  QPen pen = g->pen();
  pen.setWidthF(underlayWidth(pen.widthF(), run, runs));
  g->setPen(pen);
}

void drawOverlapsVisibly(RunChart& chart, size_t runs) {
  for (size_t i = 0; i < runs; ++i) {
    const int run = static_cast<int>(i);
    if (auto* loss = qobject_cast<LossChart*>(&chart)) {
      widen(loss->trainGraph(run), i, runs);
      widen(loss->valGraph(run), i, runs);
    } else if (auto* metric = qobject_cast<MetricChart*>(&chart)) {
      widen(metric->runGraph(run), i, runs);
    }
  }
}

// The chart is built, filled, recorded and destroyed inside the job: never
// shown. Pens scale with the picture as toPixmap's do above scale 1.
QPicture render(RunChart& chart, const std::vector<plab::RunRecord>& runs, int width, int height) {
  chart.resize(width, height);
  chart.showRuns(runs);
  drawOverlapsVisibly(chart, runs.size());
  chart.resetView();
  QPicture picture;
  QCPPainter painter(&picture);
  painter.setMode(QCPPainter::pmNonCosmetic);
  chart.toPainter(&painter, width, height);
  painter.end();
  return picture;
}

template <typename Chart>
std::function<ReportImage()> chartJob(Runs runs, ReportImageKind kind, QString file, QString title, int width = kSmallWidth,
                                      int height = kSmallHeight) {
  return [runs, kind, file, title, width, height] {
    Chart chart;
    return ReportImage{kind, file, title, QImage(), render(chart, *runs, width, height), QSize(width, height)};
  };
}

bool hasLayerStats(const plab::RunRecord& run, HeatmapMetric metric) {
  for (const plab::StepMetrics& m : run.steps)
    if (!(metric == HeatmapMetric::UpdateLost ? m.windowLayers.empty() : m.layers.empty())) return true;
  return false;
}

std::function<ReportImage()> heatmapJob(Runs runs, size_t run, ReportImageKind kind, HeatmapMetric metric, QString file,
                                        QString name, double scaleMax) {
  return [runs, run, kind, metric, file, name, scaleMax] {
    LayerHeatmap chart;
    chart.setMetric(metric);
    chart.setSelectedRun(static_cast<int>(run));
    chart.setScaleMax(scaleMax);
    ReportImage image{kind, file, name, QImage(), render(chart, *runs, kHeatmapWidth, kHeatmapHeight),
                      QSize(kHeatmapWidth, kHeatmapHeight)};
    image.scaleMax = scaleMax;
    return image;
  };
}

}  // namespace

bool hasMomentErrorLayers(const plab::RunRecord& run) {
  for (const plab::StepMetrics& m : run.steps)
    for (const plab::LayerWindowMetrics& w : m.windowLayers)
      if (w.momentErrorM || w.momentErrorV) return true;
  return false;
}

double momentErrorScaleMax(const std::vector<plab::RunRecord>& runs) {
  double most = 0;
  for (const plab::RunRecord& r : runs)
    for (const plab::StepMetrics& m : r.steps)
      for (const plab::LayerWindowMetrics& w : m.windowLayers)
        for (const std::optional<double>& e : {w.momentErrorM, w.momentErrorV})
          if (e && std::isfinite(*e)) most = std::max(most, 100 * *e);
  for (double decade = 0.1; decade < 100; decade *= 10)
    for (double step : {1.0, 2.0, 5.0})
      if (most <= step * decade * (1 + 1e-9)) return std::min(100.0, step * decade);
  return 100;
}

std::vector<std::function<ReportImage()>> reportImageJobs(Runs runs) {
  std::vector<std::function<ReportImage()>> jobs;
  jobs.push_back(chartJob<LossChart>(runs, ReportImageKind::Loss, "loss.png", "Loss", kChartWidth, kChartHeight));
  bool anyReference = false;
  // Related once, not per run (50 runs: 0.25 s on the GUI thread before the first image).
  const std::vector<std::optional<size_t>> twins = plab::report::fp32TwinIndices(*runs);
  for (size_t i = 0; i < runs->size(); ++i) {
    const auto ref = twins[i];
    anyReference = anyReference || (ref && *ref != i);
  }
  if (anyReference)
    jobs.push_back([runs] {
      LossChart chart;
      chart.setDifferenceFromFp32(true);
      return ReportImage{ReportImageKind::LossVsFp32, "loss_vs_fp32.png", "Loss minus fp32's", QImage(),
                         render(chart, *runs, kChartWidth, kChartHeight), QSize(kChartWidth, kChartHeight)};
    });
  jobs.push_back(chartJob<UpdateLostChart>(runs, ReportImageKind::UpdateLost, "update_lost.png", "Update lost"));
  jobs.push_back(chartJob<RoundedAwayChart>(runs, ReportImageKind::RoundedAway, "rounded_away.png", "Rounded away"));
  jobs.push_back(chartJob<MemoryChart>(runs, ReportImageKind::Memory, "memory.png", "Memory"));
  // One heatmap per run, so that runs compare side by side: the same metric
  // (update lost where measured, else rounded away) and colour scale.
  HeatmapMetric metric = HeatmapMetric::RoundedAway;
  for (const plab::RunRecord& r : *runs)
    if (hasLayerStats(r, HeatmapMetric::UpdateLost)) metric = HeatmapMetric::UpdateLost;
  // One file per run: two runs named alike get "name (2)" and a file each.
  const std::vector<std::string> stems = plab::report::uniqueFileStems(*runs);
  const double momentScale = momentErrorScaleMax(*runs);
  for (size_t i = 0; i < runs->size(); ++i) {
    const QString name = QString::fromStdString(plab::report::runLabel(*runs, i));
    const QString suffix = runs->size() == 1 ? QString(".png") : QString::fromStdString("_" + stems[i] + ".png");
    if (hasLayerStats((*runs)[i], metric) || runs->size() == 1)
      jobs.push_back(heatmapJob(runs, i, ReportImageKind::Heatmap, metric, "layers_heatmap" + suffix, name, 100));
    // The moment store's own loss beside it: the HTML report's file names.
    if (hasMomentErrorLayers((*runs)[i])) {
      jobs.push_back(heatmapJob(runs, i, ReportImageKind::MomentErrorM, HeatmapMetric::MomentErrorM,
                                "layers_moment_error_m" + suffix, name, momentScale));
      jobs.push_back(heatmapJob(runs, i, ReportImageKind::MomentErrorV, HeatmapMetric::MomentErrorV,
                                "layers_moment_error_v" + suffix, name, momentScale));
    }
  }
  return jobs;
}

void rasterize(ReportImage& image) {
  if (!image.image.isNull()) return;
  image.image = QImage(image.size * kScale, QImage::Format_ARGB32_Premultiplied);
  image.image.fill(Qt::white);  // the charts' background
  QPainter painter(&image.image);
  painter.scale(kScale, kScale);
  painter.drawPicture(0, 0, image.picture);
}

std::vector<ReportImage> renderReportImages(const std::vector<plab::RunRecord>& runs) {
  std::vector<ReportImage> images;
  for (const auto& job : reportImageJobs(std::make_shared<const std::vector<plab::RunRecord>>(runs))) {
    images.push_back(job());
    rasterize(images.back());
  }
  return images;
}

}  // namespace plab::ui
