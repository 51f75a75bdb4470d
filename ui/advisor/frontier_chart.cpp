#include "advisor/frontier_chart.h"

#include <QFontMetricsF>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "util/format.h"

namespace plab::ui {
namespace {

const QColor kChosen(213, 94, 0);
const QColor kCandidate(0, 114, 178);
const QColor kTolerance(180, 30, 30);
constexpr double kMarkerRadius = 6;   // a candidate's circle (9 px) with a margin; the chosen star is 16 px
constexpr double kChosenRadius = 9;
constexpr double kGap = 4;            // between a marker and its name
constexpr double kHover = 8;          // how near the pointer must be for a point's tooltip

QString natsText(double v) { return (v >= 0 ? "+" : "") + QString::number(v, 'g', 3); }

QString pointToolTip(const plab::AdvisorCandidate& c, bool chosen, size_t seeds) {
  QString tip = "<b>" + QString::fromStdString(c.name).toHtmlEscaped() + "</b>";
  if (!c.description.empty()) tip += "<br>" + QString::fromStdString(c.description).toHtmlEscaped();
  tip += "<br>saves " + percentText(c.memorySaved) + " of fp32's training state";
  if (c.lossVsFp32)
    tip += QString("<br>val loss − fp32: %1 nats (95 %: %2 to %3, %4 seeds)")
               .arg(natsText(*c.lossVsFp32), natsText(c.ciLow), natsText(c.ciHigh))
               .arg(seeds);
  tip += "<br><i>" +
         (chosen ? QString("chosen: the cheapest within the tolerance")
                 : QString::fromStdString(c.rejected.empty() ? std::string("not judged") : c.rejected).toHtmlEscaped()) +
         "</i>";
  return "<p>" + tip + "</p>";  // rich text: Qt wraps it
}

bool clear(const QRectF& r, const QVector<QRectF>& taken) {
  return std::none_of(taken.begin(), taken.end(), [&r](const QRectF& t) { return t.intersects(r); });
}

}  // namespace

FrontierChart::FrontierChart(QWidget* parent) : QCustomPlot(parent) {
  setObjectName("frontierChart");
  setMinimumHeight(220);
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, new QCPTextElement(this, "Frontier: memory saved vs loss minus fp32", QFont(font().family(), 10, QFont::Bold)));
  xAxis->setLabel("training state saved vs fp32 AdamW (%)");
  yAxis->setLabel("val loss − fp32 (nats)");
  errors_ = new QCPErrorBars(xAxis, yAxis);
  errors_->removeFromLegend();
  errors_->setPen(QPen(QColor(90, 90, 90)));
  others_ = addGraph();
  others_->setLineStyle(QCPGraph::lsNone);
  others_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(kCandidate, 1.6), Qt::white, 9));
  others_->setName("candidate");
  chosen_ = addGraph();
  chosen_->setLineStyle(QCPGraph::lsNone);
  chosen_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssStar, QPen(kChosen, 2), kChosen, 16));
  chosen_->setName("chosen");
  errors_->setDataPlottable(others_);
  tolerance_ = new QCPItemStraightLine(this);
  tolerance_->setPen(QPen(kTolerance, 1.2, Qt::DashLine));
  tolerance_->setVisible(false);
  toleranceLabel_ = new QCPItemText(this);
  toleranceLabel_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
  toleranceLabel_->setFont(QFont(font().family(), 8));
  toleranceLabel_->setColor(kTolerance);
  toleranceLabel_->setVisible(false);
  legend->setVisible(true);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  xAxis->setRange(-5, 105);  // the whole 0-100 % before the first advice too
  yAxis->setRange(-0.01, 0.01);
  connect(this, &QCustomPlot::afterLayout, this, &FrontierChart::placeLabels);
  connect(this, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
    const QString tip = toolTipAt(e->position().toPoint());
    if (tip.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(e->globalPosition().toPoint(), tip, this);
  });
}

int FrontierChart::pointCount() const { return others_->dataCount() + chosen_->dataCount(); }

void FrontierChart::showAdvice(const plab::Advice& advice) {
  others_->data()->clear();
  chosen_->data()->clear();
  for (const Point& p : points_) {
    removeItem(p.label);
    removeItem(p.leader);
  }
  points_.clear();
  QVector<double> keys, values, errorMinus, errorPlus;
  double lowest = 0, highest = advice.tolerance;
  for (size_t i = 0; i < advice.candidates.size(); ++i) {
    const plab::AdvisorCandidate& c = advice.candidates[i];
    if (!c.lossVsFp32) continue;  // not confirmed (stopped before it ran)
    Point p;
    p.x = 100 * c.memorySaved;
    p.y = *c.lossVsFp32;
    p.chosen = static_cast<int>(i) == advice.chosen;
    p.name = QString::fromStdString(c.name);
    p.toolTip = pointToolTip(c, p.chosen, advice.seeds.size());
    lowest = std::min({lowest, p.y, c.ciLow});
    highest = std::max({highest, p.y, c.ciHigh});
    if (p.chosen) chosen_->addData(p.x, p.y);
    keys << p.x;
    values << p.y;
    errorMinus << std::max(0.0, p.y - c.ciLow);
    errorPlus << std::max(0.0, c.ciHigh - p.y);
    p.label = new QCPItemText(this);
    p.label->position->setType(QCPItemPosition::ptAbsolute);
    p.label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    p.label->setPadding(QMargins(2, 1, 2, 1));
    p.label->setText(p.name);
    p.label->setFont(QFont(font().family(), 8, p.chosen ? QFont::Bold : QFont::Normal));
    p.label->setColor(p.chosen ? kChosen : QColor(60, 60, 60));
    p.label->setBrush(QColor(255, 255, 255, 210));  // readable over a grid line or an error bar
    p.leader = new QCPItemLine(this);
    p.leader->start->setCoords(p.x, p.y);
    p.leader->end->setType(QCPItemPosition::ptAbsolute);
    p.leader->setPen(QPen(QColor(150, 150, 150), 0.8));
    p.leader->setVisible(false);
    points_ << p;
  }
  others_->setData(keys, values);
  errors_->setData(errorMinus, errorPlus);
  tolerance_->setVisible(!keys.isEmpty());
  tolerance_->point1->setCoords(0, advice.tolerance);
  tolerance_->point2->setCoords(100, advice.tolerance);
  toleranceLabel_->setVisible(!keys.isEmpty());
  toleranceLabel_->position->setCoords(100, advice.tolerance);
  toleranceLabel_->setText(QString("tolerance +%1 nats").arg(advice.tolerance, 0, 'g', 3));
  others_->setName(QString("candidate (±95 %, %1 seeds)").arg(advice.seeds.size()));
  xAxis->setRange(-5, 105);
  const double pad = 0.15 * std::max(1e-4, highest - lowest);
  yAxis->setRange(lowest - pad, highest + pad);
  // The legend in the right-hand corner away from the tolerance line, whose
  // label sits at its right end.
  const bool toleranceLow = advice.tolerance - yAxis->range().lower < yAxis->range().size() / 2;
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignRight | (toleranceLow ? Qt::AlignTop : Qt::AlignBottom));
  replot();
}

QPointF FrontierChart::pointPixel(int point) const {
  const Point& p = points_.at(point);
  return {xAxis->coordToPixel(p.x), yAxis->coordToPixel(p.y)};
}

// Greedy: the chosen plan's name first, then the others from the largest
// saving down; each takes the first free spot beside its point (right, then
// left, level, then a line above or below, then further away with a leader
// line), never over another name, a point, the tolerance's label or the
// legend, and inside the plot.
void FrontierChart::placeLabels() {
  const QRectF area = axisRect()->rect();
  QVector<QRectF> taken;
  for (int i = 0; i < points_.size(); ++i) {
    const double r = points_[i].chosen ? kChosenRadius : kMarkerRadius;
    taken << QRectF(pointPixel(i) - QPointF(r, r), QSizeF(2 * r, 2 * r));
  }
  toleranceRect_ = QRectF();
  if (toleranceLabel_->visible()) {
    const QFontMetricsF fm(toleranceLabel_->font(), this);
    const QSizeF size = fm.size(0, toleranceLabel_->text()) + QSizeF(10, 4);
    const QPointF at = toleranceLabel_->position->pixelPosition();
    toleranceRect_ = QRectF(at - QPointF(size.width(), size.height()), size);
    taken << toleranceRect_;
  }
  if (legend->visible()) taken << legend->outerRect();

  QVector<int> order(points_.size());
  for (int i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
    if (points_[a].chosen != points_[b].chosen) return points_[a].chosen;
    return points_[a].x > points_[b].x;
  });
  for (int i : order) {
    Point& p = points_[i];
    const QPointF at = pointPixel(i);
    const QFontMetricsF fm(p.label->font(), this);
    const QSizeF size = fm.size(0, p.name) + QSizeF(4, 2);
    const double r = (p.chosen ? kChosenRadius : kMarkerRadius) + kGap;
    p.rect = QRectF();
    bool leader = false;
    // Level with the point, then half a line up or down, then whole lines
    // further away (with a leader line), right side before left.
    for (int step = 0; step <= 24 && p.rect.isNull(); ++step) {
      const double dy = (step == 0 ? 0 : (step + 1) / 2 * (step % 2 ? -1 : 1)) * (size.height() * 0.75);
      for (const bool right : {true, false}) {
        const double left = right ? at.x() + r : at.x() - r - size.width();
        const QRectF candidate(QPointF(left, at.y() - size.height() / 2 + dy), size);
        if (area.contains(candidate) && clear(candidate.adjusted(-1, -1, 1, 1), taken)) {
          p.rect = candidate;
          leader = std::abs(dy) > size.height();
          break;
        }
      }
    }
    p.label->setVisible(!p.rect.isNull());
    p.leader->setVisible(leader);
    if (p.rect.isNull()) continue;  // no room: its tooltip names it
    taken << p.rect;
    p.label->position->setCoords(p.rect.topLeft());
    if (leader) {
      const double y = std::clamp(at.y(), p.rect.top(), p.rect.bottom());
      p.leader->end->setCoords(p.rect.left() > at.x() ? p.rect.left() : p.rect.right(), y);
    }
  }
}

QVector<FrontierChart::PlacedLabel> FrontierChart::placedLabels() const {
  QVector<PlacedLabel> out;
  for (const Point& p : points_) out.push_back({p.name, p.rect, p.leader->visible()});
  return out;
}

QString FrontierChart::toolTipAt(const QPoint& pos) const {
  int nearest = -1;
  double best = kHover * kHover;
  for (int i = 0; i < points_.size(); ++i) {
    const QPointF d = pointPixel(i) - QPointF(pos);
    const double d2 = d.x() * d.x() + d.y() * d.y();
    if (d2 <= best) {
      best = d2;
      nearest = i;
    }
  }
  for (int i = 0; i < points_.size() && nearest < 0; ++i)
    if (points_[i].rect.contains(pos)) nearest = i;  // the name stands for its point
  return nearest < 0 ? QString() : points_[nearest].toolTip;
}

}  // namespace plab::ui
