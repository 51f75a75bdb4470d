#include "charts/rounded_away_chart.h"

namespace plab::ui {

RoundedAwayChart::RoundedAwayChart(QWidget* parent)
    : MetricChart(
          "Rounded away in a single step",
          [](const plab::StepMetrics& m) -> std::optional<double> { return m.roundedAwayFraction; }, false, parent) {
  setObjectName("roundedAwayChart");
  setExplanation("weights a single step's update left unchanged\n(high for Kahan and SR too: they defer the write)");
  yAxis->setLabel("% rounded away (of non-zero updates)");
}

}  // namespace plab::ui
