#include "charts/run_colors.h"

#include <QPainter>

namespace plab::ui {

QColor toQColor(const plab::Rgb& c) { return QColor(c.r, c.g, c.b); }

std::vector<QColor> runColors(const std::vector<plab::RunRecord>& runs) {
  std::vector<QColor> out;
  out.reserve(runs.size());
  for (const auto& r : runs) out.push_back(toQColor(plab::runColor(r.config)));
  return out;
}

QPen runPen(const plab::RunStyle& style, double width) {
  QPen pen(toQColor(style.color), width);
  const std::vector<double> dashes = plab::repeatDashPattern(style.repeat);
  if (!dashes.empty()) pen.setDashPattern(QList<qreal>(dashes.begin(), dashes.end()));
  return pen;
}

QCPScatterStyle::ScatterShape runMarker(int repeat) {
  static const QCPScatterStyle::ScatterShape shapes[] = {
      QCPScatterStyle::ssDisc,     QCPScatterStyle::ssSquare,      QCPScatterStyle::ssTriangle,
      QCPScatterStyle::ssDiamond,  QCPScatterStyle::ssCross,       QCPScatterStyle::ssTriangleInverted,
      QCPScatterStyle::ssPlus,     QCPScatterStyle::ssStar};
  constexpr int count = static_cast<int>(sizeof shapes / sizeof shapes[0]);
  return shapes[std::max(repeat, 0) % count];
}

QPixmap runStyleSample(const plab::RunStyle& style, int width, int height) {
  QPixmap pixmap(width, height);
  pixmap.fill(Qt::transparent);
  QPainter p(&pixmap);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(runPen(style, 2.0));
  p.drawLine(QPointF(1, height / 2.0), QPointF(width - 1, height / 2.0));
  return pixmap;
}

}  // namespace plab::ui

namespace plab::ui {

QPixmap groupStyleSample(const plab::RunStyle& style, int width, int height) {
  QPixmap pixmap(width, height);
  pixmap.fill(Qt::transparent);
  QPainter p(&pixmap);
  p.setRenderHint(QPainter::Antialiasing);
  QColor band = toQColor(style.color);
  band.setAlpha(70);
  p.fillRect(QRectF(1, 1, width - 2, height - 2), band);
  p.setPen(runPen(style, 2.0));
  p.drawLine(QPointF(1, height / 2.0), QPointF(width - 1, height / 2.0));
  return pixmap;
}

}  // namespace plab::ui
