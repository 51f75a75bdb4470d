#include "charts/run_legend.h"

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
  QStringList entries;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].steps.empty()) continue;
    // nowrap: a long name moves to the next line whole, never split at a '-'.
    entries << QString("<span style=\"white-space:nowrap\"><span style=\"color:%1; font-size:large\">&#9644;</span>"
                       "&nbsp;%2</span>")
                   .arg(colors[i].name(), QString::fromStdString(runs[i].config.name).toHtmlEscaped());
  }
  entries_ = static_cast<int>(entries.size());
  setText(entries.join(" &nbsp;&nbsp; "));
  setVisible(entries_ > 0);
}

}  // namespace plab::ui
