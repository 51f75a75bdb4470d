#pragma once
// The PDF's appendix: the exact config.json of the first run, then for each
// other run the settings that differ from it (dotted keys) — enough to
// re-create every run from the PDF — in three columns, several runs a page.
#include <QPainter>
#include <map>
#include <string>
#include <vector>

#include "report/pdf_page_cursor.h"
#include "report/run_report.h"

namespace plab::ui {

// {"adamw": {"lr": 1e-4}} -> {"adamw.lr": "0.0001"}; arrays stay JSON.
std::map<std::string, std::string> flattenJson(const nlohmann::json& j);

void drawPdfConfigAppendix(QPainter& p, PdfPageCursor& cur, const std::vector<plab::RunRecord>& runs);

}  // namespace plab::ui
