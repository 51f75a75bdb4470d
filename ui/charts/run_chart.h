#pragma once
// Base of the live charts: a QCustomPlot with zoom/pan, a legend, a
// right-click menu (reset view, export PNG/PDF) and throttled replotting.
// Subclasses turn the session's RunRecords into plottables in showRuns().
#include <QString>
#include <vector>

#include "charts/chart_series.h"
#include "qcustomplot.h"
#include "report/run_report.h"

class QTimer;

namespace plab::ui {

// What the curves are plotted against.
enum class XAxisKind { Steps, Tokens, WallTime };

class RunChart : public QCustomPlot {
  Q_OBJECT
 public:
  explicit RunChart(const QString& title, QWidget* parent = nullptr);

  // Updates the plottables from the series (cheap when only a run's new
  // steps arrived; a change of the series list starts over with
  // showSeries({})); does not replot. The series' runs are read during the
  // call only.
  virtual void showSeries(const std::vector<ChartSeries>& series) = 0;
  // Every run its own series, styled among `runs` (exported reports).
  void showRuns(const std::vector<plab::RunRecord>& runs) { showSeries(seriesOfRuns(runs)); }

  // Replots at most ~10 times per second.
  void scheduleReplot();
  void resetView();  // fit the axes to the data and replot; follows new data again

  // Steps, tokens trained on, or wall-clock seconds since the run started;
  // linear or logarithmic. Charts drawn per step call keyOf(); redraw with
  // showRuns({}) then showRuns(runs).
  void setXAxisKind(XAxisKind kind);
  XAxisKind xAxisKind() const { return xKind_; }
  void setLogX(bool on);
  bool logX() const { return xAxis->scaleType() == QCPAxis::stLogarithmic; }
  // A logarithmic y axis (values <= 0, e.g. fp32's 0 % update lost, fall
  // below it); refits the view.
  void setLogY(bool on);
  bool logY() const { return yAxis->scaleType() == QCPAxis::stLogarithmic; }

  // The hover readout: the x under the cursor and every run's value at the
  // nearest point of its curve (the curves listed in the legend), one per
  // line; empty when no curve has data.
  QString readoutAt(double key) const;

  // Legend labels of runs shown together: the name without the prefix all
  // of them share ("tiny-gpt2-finetune-bf16" -> "bf16" next to "...-fp32"),
  // cut at the end past ~24 characters (never in the middle), so entries
  // fit side by side.
  static std::vector<QString> legendLabels(const std::vector<plab::RunRecord>& runs);

  // The live panel shows one legend for all charts (RunLegend) and turns
  // the charts' own off; exported charts keep theirs.
  void setLegendShown(bool on);

  // Following: the view refits as data arrives. A drag or wheel zoom stops
  // it (followStopped tells the panel, which shows it) until setFollow(true).
  void setFollow(bool on);
  bool following() const { return !userZoomed_; }

  // QCustomPlot derives its size hints from the plot layout, so a wide
  // legend would fix a chart's width; the grid shares the space instead.
  QSize minimumSizeHint() const override { return minimumSize(); }
  QSize sizeHint() const override { return {380, 280}; }

  bool exportPng(const QString& path, int width = 0, int height = 0);
  bool exportPdf(const QString& path, int width = 0, int height = 0);
  QString title() const { return titleText_; }
  // A short explanation under the title (what the chart measures),
  // word-wrapped to the chart's width; '\n' breaks a line.
  void setExplanation(const QString& text);
  QString explanation() const;  // as set, unwrapped

 signals:
  void followStopped();

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  virtual void fitView() { rescaleAxes(); }  // axis ranges that show all data
  // The hover tooltip at a point of the plot: by default readoutAt the x there.
  virtual QString hoverText(const QPoint& pos) const;
  static QString runLabel(const plab::RunRecord& run, int index);
  double keyOf(const plab::RunRecord& run, const plab::StepMetrics& m) const;
  double keyOfStep(const plab::RunRecord& run, int64_t step) const;  // for steps known by number only
  // Whether this chart plots per-step curves (the x-axis choice applies).
  virtual bool plotsSteps() const { return true; }
  // Moves the legend under the plot (a wrapped row of entries) so that it
  // never covers the newest data.
  void placeLegendBelow();
  // Shows the legend when it has entries (and, below the plot, lays it out).
  void showLegendIfAny();
  void fitLegendColumns();

  QCPTextElement* titleElement_;
  QCPTextElement* explanationElement_ = nullptr;

 private:
  void wrapExplanation();
  void fitYLabel();

  QString titleText_;
  QString explanationText_;
  QString fullYLabel_, shownYLabel_;  // the y label as set, and as it fits the plot's height
  QTimer* replotTimer_;
  bool dirty_ = false;
  bool userZoomed_ = false;
  XAxisKind xKind_ = XAxisKind::Steps;
  bool legendShown_ = true;
  bool legendBelow_ = false;
  bool legendInLayout_ = false;
};

}  // namespace plab::ui
