#include "report/report_images.h"

#include "charts/layer_heatmap.h"
#include "charts/loss_chart.h"
#include "charts/memory_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/update_lost_chart.h"
#include "report/fp32_comparison.h"
#include "report/report_charts.h"

namespace plab::ui {
namespace {

using Runs = std::shared_ptr<const std::vector<plab::RunRecord>>;

constexpr int kChartWidth = 1000;
constexpr int kChartHeight = 560;
constexpr int kHeatmapWidth = 620;
constexpr int kHeatmapHeight = 440;
constexpr double kScale = 2.0;  // sharp in the PDF and on high-dpi screens

// The chart is built, filled, drawn and destroyed inside the job: never shown.
QImage render(RunChart& chart, const std::vector<plab::RunRecord>& runs, int width, int height) {
  chart.resize(width, height);
  chart.showRuns(runs);
  chart.resetView();
  return chart.toPixmap(width, height, kScale).toImage();
}

template <typename Chart>
std::function<ReportImage()> chartJob(Runs runs, ReportImageKind kind, QString file, QString title) {
  return [runs, kind, file, title] {
    Chart chart;
    return ReportImage{kind, file, title, render(chart, *runs, kChartWidth, kChartHeight)};
  };
}

bool hasLayerStats(const plab::RunRecord& run, HeatmapMetric metric) {
  for (const plab::StepMetrics& m : run.steps)
    if (!(metric == HeatmapMetric::UpdateLost ? m.windowLayers.empty() : m.layers.empty())) return true;
  return false;
}

}  // namespace

std::vector<std::function<ReportImage()>> reportImageJobs(Runs runs) {
  std::vector<std::function<ReportImage()>> jobs;
  jobs.push_back(chartJob<LossChart>(runs, ReportImageKind::Loss, "loss.png", "Loss"));
  bool anyReference = false;
  for (size_t i = 0; i < runs->size(); ++i) {
    const auto ref = plab::report::fp32ReferenceIndex(*runs, i);
    anyReference = anyReference || (ref && *ref != i);
  }
  if (anyReference)
    jobs.push_back([runs] {
      LossChart chart;
      chart.setDifferenceFromFp32(true);
      return ReportImage{ReportImageKind::LossVsFp32, "loss_vs_fp32.png", "Loss minus fp32's",
                         render(chart, *runs, kChartWidth, kChartHeight)};
    });
  jobs.push_back(chartJob<UpdateLostChart>(runs, ReportImageKind::UpdateLost, "update_lost.png", "Update lost"));
  jobs.push_back(chartJob<RoundedAwayChart>(runs, ReportImageKind::RoundedAway, "rounded_away.png", "Rounded away"));
  jobs.push_back(chartJob<MemoryChart>(runs, ReportImageKind::Memory, "memory.png", "Memory"));
  // One heatmap per run, so that runs compare side by side: the same metric
  // (update lost where measured, else rounded away) and colour scale.
  HeatmapMetric metric = HeatmapMetric::RoundedAway;
  for (const plab::RunRecord& r : *runs)
    if (hasLayerStats(r, HeatmapMetric::UpdateLost)) metric = HeatmapMetric::UpdateLost;
  for (size_t i = 0; i < runs->size(); ++i) {
    if (!hasLayerStats((*runs)[i], metric) && runs->size() > 1) continue;
    const QString name = QString::fromStdString((*runs)[i].config.name);
    const QString file = runs->size() == 1
                             ? QString("layers_heatmap.png")
                             : QString::fromStdString("layers_heatmap_" + plab::report::safeFileName(name.toStdString()) + ".png");
    jobs.push_back([runs, i, file, name, metric] {
      LayerHeatmap chart;
      chart.setMetric(metric);
      chart.setSelectedRun(static_cast<int>(i));
      return ReportImage{ReportImageKind::Heatmap, file, name, render(chart, *runs, kHeatmapWidth, kHeatmapHeight)};
    });
  }
  return jobs;
}

std::vector<ReportImage> renderReportImages(const std::vector<plab::RunRecord>& runs) {
  std::vector<ReportImage> images;
  for (const auto& job : reportImageJobs(std::make_shared<const std::vector<plab::RunRecord>>(runs)))
    images.push_back(job());
  return images;
}

}  // namespace plab::ui
