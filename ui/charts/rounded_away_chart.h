#pragma once
// Share of the intended non-zero updates that did not change the stored
// weight in a single step, one curve per run (in percent).
#include "charts/metric_chart.h"

namespace plab::ui {

class RoundedAwayChart : public MetricChart {
  Q_OBJECT
 public:
  explicit RoundedAwayChart(QWidget* parent = nullptr);
};

}  // namespace plab::ui
