// The window's side of the precision advisor: opening the dialog on the
// current settings and applying the plan it suggests.
#include "advisor/advisor_dialog.h"
#include "main_window.h"
#include "panels/layer_tree_panel.h"
#include "panels/optimizer_panel.h"

namespace plab::ui {

void MainWindow::openAdvisor() {
  if (!checkStartable()) return;
  if (!advisor_) {
    advisor_ = new AdvisorDialog(currentConfig(), this);
    connect(advisor_, &AdvisorDialog::planApplied, this, &MainWindow::applyAdvisedPlan);
  }
  advisor_->setBase(currentConfig());  // not while it runs: it keeps what it started on
  advisor_->show();
  advisor_->raise();
  advisor_->activateWindow();
}

void MainWindow::applyAdvisedPlan(const plab::RunConfig& candidate) {
  // Only what the advisor chose: the rest of the setup (steps, lr, data) stays.
  plab::RunConfig c = currentConfig();
  c.mode = candidate.mode;
  c.adamw.moments = candidate.adamw.moments;
  c.plan = candidate.plan;
  optimizerPanel_->setFrom(c);
  layerPanel_->setPlan(c.plan);
  appendLog("advisor: applied " + QString::fromStdString(plab::optimizerModeId(c.mode)) + " with plan " +
            layerPanel_->planName());
}

}  // namespace plab::ui
