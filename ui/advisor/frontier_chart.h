#pragma once
// The advisor's frontier: one point per candidate plan, memory saved (share
// of fp32's training state) against its final validation loss minus fp32's
// (mean over the seeds, paired, with its 95 % interval), the tolerance as a
// dashed line, the chosen plan filled and larger, rejected plans hollow.
// Plans often share a saving (every bf16 recipe saves the same), so their
// names are placed where they overlap neither each other nor a point (with
// a leader line when moved away from it), on every replot at the chart's
// current size; a name that finds no room is left out, and every point
// names itself, its figures and its verdict in a tooltip.
#include <QRectF>
#include <QVector>

#include "advisor/advisor.h"
#include "qcustomplot.h"

namespace plab::ui {

class FrontierChart : public QCustomPlot {
  Q_OBJECT
 public:
  explicit FrontierChart(QWidget* parent = nullptr);
  void showAdvice(const plab::Advice& advice);
  // The points drawn (candidates that were confirmed), for tests.
  int pointCount() const;
  QCPGraph* chosenGraph() const { return chosen_; }
  QCPItemStraightLine* toleranceLine() const { return tolerance_; }

  // Where the names are, in pixels, after the last replot (tests): one
  // entry per point, an empty rect for a name left out.
  struct PlacedLabel {
    QString text;
    QRectF rect;
    bool leader = false;  // drawn away from its point, with a line to it
  };
  QVector<PlacedLabel> placedLabels() const;
  QPointF pointPixel(int point) const;  // the point's marker centre
  QString toolTipAt(const QPoint& pos) const;  // "" away from every point
  QRectF toleranceLabelRect() const { return toleranceRect_; }  // empty without advice

 private:
  struct Point {
    double x = 0, y = 0;
    QString name, toolTip;
    bool chosen = false;
    QCPItemText* label = nullptr;
    QCPItemLine* leader = nullptr;
    QRectF rect;
  };
  void placeLabels();  // after the layout of each replot: pixels are known then

  QCPGraph* others_;
  QCPGraph* chosen_;
  QCPErrorBars* errors_;
  QCPItemStraightLine* tolerance_;
  QCPItemText* toleranceLabel_;
  QVector<Point> points_;
  QRectF toleranceRect_;
};

}  // namespace plab::ui
