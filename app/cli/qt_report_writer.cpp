#include "qt_report_writer.h"

#ifdef PLAB_CLI_HAS_QT_REPORT
#include <QApplication>
#include <QByteArray>
#include <QString>

#include <memory>

#include "report/qt_report.h"
#endif

namespace plab::cli {

#ifdef PLAB_CLI_HAS_QT_REPORT

bool qtReportAvailable() { return true; }

void writeQtReport(const std::vector<RunRecord>& runs, const std::filesystem::path& dir, const std::string& title) {
  // Created lazily: runs without a report (or with --no-pdf) never need a
  // display connection. Headless machines get the offscreen platform.
  static std::unique_ptr<QApplication> app;
  if (!QCoreApplication::instance()) {
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
        qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
      qputenv("QT_QPA_PLATFORM", QByteArray("offscreen"));
    static int argc = 1;
    static char arg0[] = "precision-lab-cli";
    static char* argv[] = {arg0, nullptr};
    app = std::make_unique<QApplication>(argc, argv);
  }
  plab::ui::writeChartPngs(runs, QString::fromStdString((dir / "charts").string()));
  plab::ui::writePdfReport(runs, QString::fromStdString((dir / "report.pdf").string()), QString::fromStdString(title));
}

#else

bool qtReportAvailable() { return false; }

void writeQtReport(const std::vector<RunRecord>&, const std::filesystem::path&, const std::string&) {}

#endif

}  // namespace plab::cli
