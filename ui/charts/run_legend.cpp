#include "charts/run_legend.h"

#include "charts/loss_chart.h"
#include "charts/run_chart.h"
#include "charts/run_colors.h"

namespace plab::ui {

RunLegend::RunLegend(QWidget* parent) : QLabel(parent) {
  setObjectName("runLegend");
  setWordWrap(true);
  setTextFormat(Qt::RichText);
  setContentsMargins(6, 0, 6, 0);
  setToolTip("Solid: train loss, dashed: validation loss. Untick a run in the table to hide it.");
}

void RunLegend::showRuns(const std::vector<plab::RunRecord>& runs) {
  const std::vector<QColor> colors = runColors(runs);
  // Short, as in the charts.
  const std::vector<QString> labels =
      difference_ ? LossChart::differenceLabels(runs) : RunChart::legendLabels(runs);
  QStringList entries, names;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].steps.empty()) continue;
    // Non-breaking hyphens: a long name moves to the next line whole
    // instead of splitting at a '-'.
    names << QString::fromStdString(runs[i].config.name);
    QString name = labels[i].toHtmlEscaped();
    name.replace('-', QChar(0x2011));
    entries << QString("<span style=\"color:%1; font-size:large\">&#9644;</span>&nbsp;%2").arg(colors[i].name(), name);
  }
  entries_ = static_cast<int>(entries.size());
  setText(entries.join(" &nbsp;&nbsp; "));
  setToolTip("Solid: train loss, dashed: validation loss. Untick a run in the table to hide it.\n" + names.join("\n"));
  setVisible(entries_ > 0);
}

}  // namespace plab::ui
