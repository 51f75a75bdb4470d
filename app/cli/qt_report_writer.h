#pragma once
// The Qt-rendered parts of a report (PNG charts, PDF). Kept apart from the
// torch-including CLI sources; a no-op "not available" in builds without the
// GUI libraries.
#include <filesystem>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace plab::cli {

bool qtReportAvailable();

// Writes charts/*.png and report.pdf into dir (each renamed into place once
// complete). Runs an offscreen QApplication for the call when none exists.
// Throws plab::IoError naming the file.
void writeQtReport(const std::vector<RunRecord>& runs, const std::filesystem::path& dir, const std::string& title);

}  // namespace plab::cli
