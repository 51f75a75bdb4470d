#pragma once
// Base of the live charts: a QCustomPlot with zoom/pan, a legend, a
// right-click menu (reset view, export PNG/PDF) and throttled replotting.
// Subclasses turn the session's RunRecords into plottables in showRuns().
#include <QString>
#include <vector>

#include "qcustomplot.h"
#include "report/run_report.h"

class QTimer;

namespace plab::ui {

class RunChart : public QCustomPlot {
  Q_OBJECT
 public:
  explicit RunChart(const QString& title, QWidget* parent = nullptr);

  // Updates the plottables from runs (cheap when only new steps arrived);
  // does not replot.
  virtual void showRuns(const std::vector<plab::RunRecord>& runs) = 0;

  // Replots at most ~10 times per second.
  void scheduleReplot();
  void resetView();  // fit the axes to the data and replot; follows new data again

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
  // A one-line explanation under the title (what the chart measures).
  void setExplanation(const QString& text);
  QString explanation() const;

 signals:
  void followStopped();

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  virtual void fitView() { rescaleAxes(); }  // axis ranges that show all data
  static QString runLabel(const plab::RunRecord& run, int index);
  // Legend labels of runs shown together: the name without the prefix all
  // of them share ("tiny-gpt2-finetune-bf16" -> "bf16" next to "...-fp32"),
  // elided in the middle past ~24 characters, so entries fit side by side.
  static std::vector<QString> legendLabels(const std::vector<plab::RunRecord>& runs);
  // Moves the legend under the plot (a wrapped row of entries) so that it
  // never covers the newest data.
  void placeLegendBelow();
  // Shows the legend when it has entries (and, below the plot, lays it out).
  void showLegendIfAny();
  void fitLegendColumns();

  QCPTextElement* titleElement_;
  QCPTextElement* explanationElement_ = nullptr;

 private:
  QString titleText_;
  QTimer* replotTimer_;
  bool dirty_ = false;
  bool userZoomed_ = false;
  bool legendShown_ = true;
  bool legendBelow_ = false;
  bool legendInLayout_ = false;
};

}  // namespace plab::ui
