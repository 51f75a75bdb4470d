#pragma once
// Training-state memory saved vs all-fp32 AdamW, one group of bars per run:
// MiB saved (left axis) and percent saved (right axis).
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class MemoryChart : public RunChart {
  Q_OBJECT
 public:
  explicit MemoryChart(QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;

  QCPBars* savedBytesBars() const { return savedMiB_; }
  QCPBars* savedPercentBars() const { return savedPercent_; }

 protected:
  void fitView() override;

 private:
  QCPRange mibRange_{0, 1}, percentRange_{0, 1}, keyRange_{0.4, 1.6};
  QCPBars* savedMiB_;
  QCPBars* savedPercent_;
  QSharedPointer<QCPAxisTickerText> ticker_;
};

}  // namespace plab::ui
