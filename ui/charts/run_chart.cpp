#include "charts/run_chart.h"

#include <QContextMenuEvent>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QTimer>

namespace plab::ui {

RunChart::RunChart(const QString& title, QWidget* parent) : QCustomPlot(parent), titleText_(title) {
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setMinimumSize(280, 200);
  plotLayout()->insertRow(0);
  titleElement_ = new QCPTextElement(this, title, QFont(font().family(), 10, QFont::Bold));
  plotLayout()->addElement(0, 0, titleElement_);
  legend->setVisible(true);
  QFont legendFont = font();
  legendFont.setPointSize(8);
  legend->setFont(legendFont);
  legend->setBrush(QColor(255, 255, 255, 210));
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

  replotTimer_ = new QTimer(this);
  replotTimer_->setInterval(100);
  replotTimer_->setSingleShot(true);
  connect(replotTimer_, &QTimer::timeout, this, [this] {
    if (!dirty_) return;
    dirty_ = false;
    if (!userZoomed_) fitView();
    replot(QCustomPlot::rpQueuedReplot);
  });
  // After a drag or wheel zoom the user owns the view until "Reset view".
  connect(this, &QCustomPlot::mouseWheel, this, [this] { userZoomed_ = true; });
  connect(this, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
    if (e->buttons() & Qt::LeftButton) userZoomed_ = true;
  });
}

void RunChart::setExplanation(const QString& text) {
  if (!explanationElement_) {
    plotLayout()->insertRow(1);
    explanationElement_ = new QCPTextElement(this, text, QFont(font().family(), 8));
    explanationElement_->setTextColor(QColor(85, 85, 85));
    plotLayout()->addElement(1, 0, explanationElement_);
  }
  explanationElement_->setText(text);
  setToolTip(text);
}

QString RunChart::explanation() const { return explanationElement_ ? explanationElement_->text() : QString(); }

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

QString RunChart::runLabel(const plab::RunRecord& run, int index) {
  const QString name = QString::fromStdString(run.config.name);
  return name.isEmpty() ? QString("run %1").arg(index + 1) : name;
}

}  // namespace plab::ui
