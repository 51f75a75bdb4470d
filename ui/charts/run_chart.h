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
  void resetView();  // fit the axes to the data and replot

  bool exportPng(const QString& path, int width = 0, int height = 0);
  bool exportPdf(const QString& path, int width = 0, int height = 0);
  QString title() const { return titleText_; }
  // A one-line explanation under the title (what the chart measures).
  void setExplanation(const QString& text);
  QString explanation() const;

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;
  virtual void fitView() { rescaleAxes(); }  // axis ranges that show all data
  static QString runLabel(const plab::RunRecord& run, int index);

  QCPTextElement* titleElement_;
  QCPTextElement* explanationElement_ = nullptr;

 private:
  QString titleText_;
  QTimer* replotTimer_;
  bool dirty_ = false;
  bool userZoomed_ = false;
};

}  // namespace plab::ui
