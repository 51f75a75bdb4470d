#include "qt_report_writer.h"

#ifdef PLAB_CLI_HAS_QT_REPORT
#include <QApplication>
#include <QByteArray>
#include <QString>

#include <unistd.h>

#include <memory>

#include "report/qt_report.h"
#include "util/errors.h"
#endif

namespace plab::cli {

#ifdef PLAB_CLI_HAS_QT_REPORT

bool qtReportAvailable() { return true; }

namespace {

// Moves every file of from/ into to/ (same file system: rename is atomic),
// creating to/ and its sub-folders as needed.
void moveFilesInto(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(from)) {
    const fs::path target = to / fs::relative(e.path(), from);
    std::error_code ec;
    if (e.is_directory()) fs::create_directories(target, ec);
    else fs::rename(e.path(), target, ec);
    if (ec) throw plab::IoError("cannot write " + target.string() + ": " + ec.message());
  }
}

}  // namespace

void writeQtReport(const std::vector<RunRecord>& runs, const std::filesystem::path& dir, const std::string& title) {
  // Created here and destroyed before returning: a QApplication that
  // outlives main() (a static) is torn down after Qt's own globals and
  // crashed every run at exit. The CLI only renders files, so it never
  // needs a display: the offscreen platform unless the user names one (a
  // DISPLAY whose X server is gone made Qt abort after training, exit 134).
  std::unique_ptr<QApplication> app;
  if (!QCoreApplication::instance()) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", QByteArray("offscreen"));
    static int argc = 1;
    static char arg0[] = "precision-lab-cli";
    static char* argv[] = {arg0, nullptr};
    app = std::make_unique<QApplication>(argc, argv);
  }
  // Rendered under a temporary folder, then renamed into place: a crash or
  // Ctrl-C mid-render never leaves a torn PNG or PDF in the report.
  const std::filesystem::path tmp = dir / (".qt-report-tmp-" + std::to_string(::getpid()));
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  try {
    plab::ui::writeChartPngs(runs, QString::fromStdString((tmp / "charts").string()));
    plab::ui::writePdfReport(runs, QString::fromStdString((tmp / "report.pdf").string()), QString::fromStdString(title));
    moveFilesInto(tmp, dir);
  } catch (...) {
    std::filesystem::remove_all(tmp, ec);
    throw;
  }
  std::filesystem::remove_all(tmp, ec);
}

#else

bool qtReportAvailable() { return false; }

void writeQtReport(const std::vector<RunRecord>&, const std::filesystem::path&, const std::string&) {}

#endif

}  // namespace plab::cli
