// "Compare formats": the formats experiment (train/gemm_format_experiment.h)
// on the window's current settings.
#include "main_window.h"
#include "panels/layer_tree_panel.h"
#include "panels/optimizer_panel.h"
#include "run/run_controller.h"
#include "train/gemm_format_experiment.h"

namespace plab::ui {

void MainWindow::compareFormats() {
  if (!checkStartable()) return;
  plab::RunConfig base = currentConfig();
  // The experiment's weights: bf16 with Kahan-compensated writes, so that
  // the GEMM format is what differs between the runs.
  base.mode = plab::OptimizerMode::Bf16Kahan;
  base.name.clear();
  const std::string head = layerPanel_->itemForPath("lm_head") ? "lm_head" : "";
  int queued = 0;
  for (plab::RunConfig c : plab::formatsExperimentRuns(base, head)) {
    c.name = QString("run%1").arg(++runCounter_).toStdString() + c.name;  // "run7-mxfp8"
    controller_->enqueue(c, optimizerPanel_->processes());
    ++queued;
  }
  appendLog(QString("queued a comparison of %1 GEMM formats (bf16-kahan weights, seed %2)%3")
                .arg(queued)
                .arg(base.seed)
                .arg(head.empty() ? QString("; no lm_head module, so no nvfp4 run with a bf16 head") : QString()));
  updateButtons();
}

}  // namespace plab::ui
