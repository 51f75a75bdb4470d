#pragma once
// The PDF's summary table: one row per run, every cell in full. Columns
// take the width their text needs; when the page is too narrow the font
// shrinks, then the widest columns wrap (never "Final l…").
#include <QPainter>
#include <QStringList>
#include <vector>

#include "report/pdf_page_cursor.h"
#include "report/run_report.h"

namespace plab::ui {

// The cells it draws, one list per run (no header): the run's name and mode,
// then report::runFigureTexts.
std::vector<QStringList> pdfSummaryRows(const std::vector<plab::RunRecord>& runs);

void drawPdfSummaryTable(QPainter& p, PdfPageCursor& cur, const std::vector<plab::RunRecord>& runs);

}  // namespace plab::ui
