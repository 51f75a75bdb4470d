// precision-lab: the desktop application.
#include <QApplication>
#include <QCommandLineParser>
#include <QScreen>
#include <QSettings>
#include <algorithm>

#include "main_window.h"
#include "run/metatypes.h"
#include "run/workspace.h"
#include "window_state.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("Precision Lab");
  QApplication::setOrganizationName("Precision Lab");
  QApplication::setApplicationVersion(PLAB_VERSION);

  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Precision Lab: train small causal language models with per-layer fp32/bf16 precision and five "
      "optimizer modes (fp32 AdamW, bf16, bf16 + Kahan summation, bf16 + stochastic rounding, fp32 master "
      "weights), watch loss, memory and rounded-away updates live, compare runs and export reports.\n"
      "Headless runs: precision-lab-cli.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.process(app);

  plab::ui::registerMetaTypes();
  QSettings settings;  // ~/.config/Precision Lab/Precision Lab.conf
  // Runs are saved here; File > Change workspace… picks another folder.
  plab::ui::MainWindow window(settings.value("workspace/path", plab::ui::Workspace::defaultPath()).toString());
  const QRect screen = window.screen() ? window.screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
  window.resize(std::min(1600, screen.width()), std::min(1000, screen.height()));
  plab::ui::restoreWindowState(window, settings);
  window.show();
  const int code = app.exec();
  plab::ui::saveWindowState(window, settings);
  return code;
}
