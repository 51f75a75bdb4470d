#include "charts/update_lost_chart.h"

namespace plab::ui {

UpdateLostChart::UpdateLostChart(QWidget* parent)
    : MetricChart(
          "Update lost",
          [](const plab::StepMetrics& m) { return m.updateLost; }, true, parent) {
  setObjectName("updateLostChart");
  setExplanation("share of the intended update that never reached the\nweights, per window of steps (0 = all of it arrived)");
  yAxis->setLabel("% lost (of the intended update)");
}

}  // namespace plab::ui
