#pragma once
// The windowed update lost, one curve per run (in percent): over each
// window of K steps, the share of the summed intended AdamW update that did
// not reach the weights the forward pass uses. fp32 reads 0.
#include "charts/metric_chart.h"

namespace plab::ui {

class UpdateLostChart : public MetricChart {
  Q_OBJECT
 public:
  explicit UpdateLostChart(QWidget* parent = nullptr);
};

}  // namespace plab::ui
