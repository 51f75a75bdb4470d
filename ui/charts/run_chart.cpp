#include "charts/run_chart.h"

#include <QContextMenuEvent>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QTimer>
#include <QToolTip>
#include <limits>
#include <algorithm>

#include "charts/text_wrap.h"
#include "report/fp32_twin.h"

namespace plab::ui {

RunChart::RunChart(const QString& title, QWidget* parent) : QCustomPlot(parent), titleText_(title) {
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setMinimumSize(250, 200);  // three side by side fit the results side of a 1280-pixel window
  plotLayout()->insertRow(0);
  titleElement_ = new QCPTextElement(this, title, QFont(font().family(), 10, QFont::Bold));
  plotLayout()->addElement(0, 0, titleElement_);
  legend->setVisible(true);
  QFont legendFont = font();
  legendFont.setPointSize(8);
  legend->setFont(legendFont);
  legend->setBrush(QColor(255, 255, 255, 210));
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

  // A y label longer than a short plot is tall is elided, not cut at both
  // ends (the loss chart's at 1280x720). After the layout, whatever draws
  // (a replot, a resize, an export), so the plot's height is the current one;
  // the label's length does not change the layout.
  connect(this, &QCustomPlot::afterLayout, this, &RunChart::fitYLabel);

  replotTimer_ = new QTimer(this);
  replotTimer_->setInterval(100);
  replotTimer_->setSingleShot(true);
  connect(replotTimer_, &QTimer::timeout, this, [this] {
    if (!dirty_) return;
    dirty_ = false;
    if (!userZoomed_) fitView();
    replot(QCustomPlot::rpQueuedReplot);
  });
  // After a drag or wheel zoom the user owns the view until "Reset view"
  // or Follow; the panel shows that following stopped.
  auto stopFollowing = [this] {
    if (userZoomed_) return;
    userZoomed_ = true;
    emit followStopped();
  };
  connect(this, &QCustomPlot::mouseWheel, this, stopFollowing);
  connect(this, &QCustomPlot::mouseMove, this, [this, stopFollowing](QMouseEvent* e) {
    if (e->buttons() & Qt::LeftButton) {
      stopFollowing();
      return;
    }
    // Hover readout: every run's value at the cursor.
    const QString text = axisRect()->rect().contains(e->pos()) ? hoverText(e->pos()) : QString();
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(e->globalPosition().toPoint(), text, this);
  });
}

double RunChart::keyOf(const plab::RunRecord& run, const plab::StepMetrics& m) const {
  switch (xKind_) {
    case XAxisKind::Steps: return static_cast<double>(m.step);
    case XAxisKind::Tokens: {
      int64_t perStep = run.info.tokensPerStep;
      if (perStep <= 0) perStep = run.config.batch_size * run.config.grad_accum * run.config.seq_len;
      return static_cast<double>(m.step) * static_cast<double>(perStep);
    }
    case XAxisKind::WallTime: return m.elapsedSeconds;
  }
  return static_cast<double>(m.step);
}

double RunChart::keyOfStep(const plab::RunRecord& run, int64_t step) const {
  const auto it = std::lower_bound(run.steps.begin(), run.steps.end(), step,
                                   [](const plab::StepMetrics& m, int64_t s) { return m.step < s; });
  if (it != run.steps.end() && it->step == step) return keyOf(run, *it);
  plab::StepMetrics m;
  m.step = step;
  return xKind_ == XAxisKind::WallTime ? std::numeric_limits<double>::quiet_NaN() : keyOf(run, m);
}

void RunChart::setXAxisKind(XAxisKind kind) {
  if (!plotsSteps()) return;
  xKind_ = kind;
  xAxis->setLabel(kind == XAxisKind::Steps ? "step" : kind == XAxisKind::Tokens ? "tokens" : "wall time (s)");
}

void RunChart::setLogX(bool on) {
  if (!plotsSteps()) return;
  xAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (on) xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  else xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  if (following()) resetView();
}

void RunChart::setLogY(bool on) {
  yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (on) yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  else yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  resetView();
}

QString RunChart::readoutAt(double key) const {
  QStringList lines;
  QString x;
  for (int i = 0; i < graphCount(); ++i) {
    QCPGraph* g = graph(i);
    if (!g->visible() || !legend->hasItemWithPlottable(g) || g->data()->isEmpty()) continue;
    // The nearest point of the curve.
    auto it = g->data()->findBegin(key, false);
    if (it == g->data()->constEnd()) --it;
    if (it != g->data()->constBegin()) {
      auto before = it - 1;
      if (qAbs(before->key - key) < qAbs(it->key - key)) it = before;
    }
    if (x.isEmpty()) x = QString("%1: %2").arg(xAxis->label()).arg(it->key, 0, 'g', 6);
    lines << QString("%1: %2").arg(g->name()).arg(it->value, 0, 'g', 5);
  }
  if (lines.isEmpty()) return QString();
  return x + "\n" + lines.join("\n");
}

QString RunChart::hoverText(const QPoint& pos) const { return readoutAt(xAxis->pixelToCoord(pos.x())); }

void RunChart::setFollow(bool on) {
  if (on) resetView();
  else userZoomed_ = true;
}

void RunChart::placeLegendBelow() {
  axisRect()->insetLayout()->take(legend);
  legendBelow_ = true;
  legend->setFillOrder(QCPLegend::foColumnsFirst);
  legend->setWrap(3);
  legend->setBorderPen(Qt::NoPen);
  legend->setBrush(Qt::NoBrush);
  legend->setMargins(QMargins(4, 0, 4, 2));
  legend->setRowSpacing(0);
  legend->setColumnSpacing(10);
}

void RunChart::setExplanation(const QString& text) {
  if (!explanationElement_) {
    plotLayout()->insertRow(1);
    explanationElement_ = new QCPTextElement(this, text, QFont(font().family(), 8));
    explanationElement_->setTextColor(QColor(85, 85, 85));
    plotLayout()->addElement(1, 0, explanationElement_);
  }
  explanationText_ = text;
  wrapExplanation();
  setToolTip(text);
}

QString RunChart::explanation() const { return explanationText_; }

void RunChart::fitYLabel() {
  // A label a subclass set since the last fit is the new whole label.
  if (yAxis->label() != shownYLabel_) fullYLabel_ = yAxis->label();
  const int room = axisRect()->height();
  const QFontMetrics metrics(yAxis->labelFont());
  // Too long for the plot: first without its parenthesis ("loss (line: train,
  // marks: val)" -> "loss"), which stays readable, then elided.
  QString label = fullYLabel_;
  const qsizetype aside = label.indexOf(" (");
  if (room > 0 && metrics.horizontalAdvance(label) > room && aside > 0) label = label.left(aside);
  shownYLabel_ = room > 0 ? metrics.elidedText(label, Qt::ElideRight, room) : fullYLabel_;
  if (yAxis->label() != shownYLabel_) yAxis->setLabel(shownYLabel_);
}

void RunChart::wrapExplanation() {
  if (!explanationElement_) return;
  const int available = std::max(80, width() - 12);
  const QFontMetrics metrics(explanationElement_->font());
  // The explanations' own line breaks suit a wide chart; in a narrow one
  // the text flows as one paragraph instead of breaking twice.
  bool fits = true;
  for (const QString& line : explanationText_.split('\n')) fits = fits && metrics.horizontalAdvance(line) <= available;
  explanationElement_->setText(fits ? explanationText_
                                    : wrapToWidth(QString(explanationText_).replace('\n', ' '), metrics, available));
}

void RunChart::scheduleReplot() {
  dirty_ = true;
  if (!replotTimer_->isActive()) replotTimer_->start();
}

void RunChart::resetView() {
  userZoomed_ = false;
  fitView();
  replot();
}

bool RunChart::exportPng(const QString& path, int width, int height) {
  return savePng(path, width, height, 1.0, -1, 96);
}

bool RunChart::exportPdf(const QString& path, int width, int height) {
  return savePdf(path, width, height, QCP::epNoCosmetic);
}

void RunChart::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  menu.addAction("Reset view", this, &RunChart::resetView);
  menu.addSeparator();
  const QString base = titleText_.toLower().replace(' ', '_');
  menu.addAction("Export PNG…", this, [this, base] {
    const QString path = QFileDialog::getSaveFileName(this, "Export chart as PNG", base + ".png", "PNG (*.png)");
    if (!path.isEmpty() && !exportPng(path))
      QMessageBox::warning(this, "Export failed", "Could not write " + path);
  });
  menu.addAction("Export PDF…", this, [this, base] {
    const QString path = QFileDialog::getSaveFileName(this, "Export chart as PDF", base + ".pdf", "PDF (*.pdf)");
    if (!path.isEmpty() && !exportPdf(path))
      QMessageBox::warning(this, "Export failed", "Could not write " + path);
  });
  menu.exec(event->globalPos());
}

void RunChart::setLegendShown(bool on) {
  legendShown_ = on;
  showLegendIfAny();
  scheduleReplot();
}

void RunChart::showLegendIfAny() {
  const bool any = legendShown_ && legend->itemCount() > 0;
  legend->setVisible(any);  // an empty legend is just a stray box
  if (!legendBelow_ || any == legendInLayout_) return;
  // An empty legend would cap the plot's width (QCustomPlot sizes a column
  // by its narrowest element), so it leaves the layout until it has entries.
  if (any) {
    const int row = plotLayout()->rowCount();
    plotLayout()->addElement(row, 0, legend);
    plotLayout()->setRowStretchFactor(row, 0.001);  // as tall as its entries, no more
  } else {
    plotLayout()->take(legend);
    plotLayout()->simplify();
  }
  legendInLayout_ = any;
  fitLegendColumns();
}

void RunChart::fitLegendColumns() {
  if (!legendBelow_ || legend->itemCount() == 0) return;
  // As many columns as the widest entry allows: entries are never clipped.
  const QFontMetrics metrics(legend->font());
  int widest = 0;
  for (int i = 0; i < legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(i)))
      widest = std::max(widest, metrics.horizontalAdvance(item->plottable()->name()));
  const int entry = widest + legend->iconSize().width() + legend->iconTextPadding() + legend->columnSpacing() + 8;
  const int columns = std::clamp(width() / std::max(entry, 1), 1, 5);
  if (legend->wrap() == columns) return;
  legend->setWrap(columns);
  legend->setFillOrder(QCPLegend::foColumnsFirst, /*rearrange=*/true);  // setWrap alone moves nothing
}

void RunChart::resizeEvent(QResizeEvent* event) {
  fitLegendColumns();
  wrapExplanation();
  QCustomPlot::resizeEvent(event);
}

QString RunChart::runLabel(const plab::RunRecord& run, int index) {
  const QString name = QString::fromStdString(run.config.name);
  return name.isEmpty() ? QString("run %1").arg(index + 1) : name;
}

std::vector<QString> RunChart::legendLabels(const std::vector<plab::RunRecord>& runs) {
  // Runs named alike get " (2)", " (3)"... (report::runLabel), so that no
  // two entries and no two lines of the hover readout read the same.
  std::vector<QString> labels;
  for (size_t i = 0; i < runs.size(); ++i)
    labels.push_back(runs[i].config.name.empty() ? runLabel(runs[i], static_cast<int>(i))
                                                 : QString::fromStdString(plab::report::runLabel(runs, i)));
  const std::vector<QString> whole = labels;
  if (labels.size() > 1) {
    // The shared prefix, cut back to just after a '-', '_' or ' '.
    QString prefix = labels.front();
    for (const QString& l : labels)
      while (!l.startsWith(prefix)) prefix.chop(1);
    while (!prefix.isEmpty() && !QString("-_ ").contains(prefix.back())) prefix.chop(1);
    const bool allKeepSomething =
        std::all_of(labels.begin(), labels.end(), [&](const QString& l) { return l.size() > prefix.size(); });
    if (!prefix.isEmpty() && allKeepSomething)
      for (QString& l : labels) l = l.mid(prefix.size());
  }
  constexpr int kMaxChars = 24;
  for (QString& l : labels)
    if (l.size() > kMaxChars) l = l.left(kMaxChars - 1) + "…";
  // Two long names can elide to one text: those stay whole.
  for (size_t i = 0; i < labels.size(); ++i)
    for (size_t j = 0; j < labels.size(); ++j)
      if (i != j && labels[i] == labels[j] && labels[i] != whole[i]) labels[i] = whole[i];
  return labels;
}

}  // namespace plab::ui
