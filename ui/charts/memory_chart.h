#pragma once
// Training-state memory per run as stacked bars of what it is made of
// (weights, gradients, AdamW moments, fp32 master weights, Kahan buffers),
// beside the all-fp32 AdamW baseline; each run's tick says what it saves.
#include <array>
#include <vector>

#include "charts/run_chart.h"

namespace plab::ui {

class MemoryChart : public RunChart {
  Q_OBJECT
 public:
  static constexpr int kParts = 5;  // weights, gradients, moments, master, kahan
  explicit MemoryChart(QWidget* parent = nullptr);
  void showRuns(const std::vector<plab::RunRecord>& runs) override;

  // Bar 0 is the fp32 baseline, then one per run that measured memory (MiB).
  QCPBars* partBars(int part) const { return parts_[static_cast<size_t>(part)]; }
  const std::vector<double>& savedFractions() const { return saved_; }  // per run bar

 protected:
  void fitView() override;
  bool plotsSteps() const override { return false; }  // one bar per run

 private:
  std::array<QCPBars*, kParts> parts_{};
  std::vector<double> saved_;
  QCPRange mibRange_{0, 1}, keyRange_{0.4, 1.6};
  QSharedPointer<QCPAxisTickerText> ticker_;
};

}  // namespace plab::ui
