#include "report/pdf_config_appendix.h"

#include <QFontDatabase>
#include <QFontMetrics>

#include "report/fp32_twin.h"

namespace plab::ui {
namespace {

constexpr int kColumns = 3;

struct Line {
  QString text;
  bool heading = false;
};

void flattenInto(const nlohmann::json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) flattenInto(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    return;
  }
  out[prefix] = j.dump();
}

std::vector<Line> appendixLines(const std::vector<plab::RunRecord>& runs) {
  std::vector<Line> lines;
  if (runs.empty()) return lines;
  const nlohmann::json first = runs.front().config.toJson();
  lines.push_back({QString("config.json of %1").arg(QString::fromStdString(plab::report::runLabel(runs, 0))), true});
  for (const QString& l : QString::fromStdString(first.dump(1)).split('\n')) lines.push_back({l});
  const auto base = flattenJson(first);
  for (size_t i = 1; i < runs.size(); ++i) {
    lines.push_back({});
    lines.push_back({QString("%1: as above, except").arg(QString::fromStdString(plab::report::runLabel(runs, i))), true});
    const auto mine = flattenJson(runs[i].config.toJson());
    for (const auto& [key, value] : mine) {
      const auto it = base.find(key);
      if (it == base.end() || it->second != value) lines.push_back({QString::fromStdString(key + " = " + value)});
    }
    for (const auto& [key, value] : base)
      if (!mine.count(key)) lines.push_back({QString::fromStdString(key + " absent")});
  }
  return lines;
}

}  // namespace

std::map<std::string, std::string> flattenJson(const nlohmann::json& j) {
  std::map<std::string, std::string> out;
  flattenInto(j, "", out);
  return out;
}

void drawPdfConfigAppendix(QPainter& p, PdfPageCursor& cur, const std::vector<plab::RunRecord>& runs) {
  QFont heading = p.font();
  heading.setPointSizeF(11);
  heading.setBold(true);
  const int headingH = QFontMetrics(heading, p.device()).height();
  cur.ensure(headingH * 6);
  p.setFont(heading);
  p.setPen(Qt::black);
  p.drawText(QRect(0, cur.y, cur.width(), headingH), Qt::AlignLeft, "Appendix: run configurations");
  cur.y += headingH + headingH / 3;

  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(6.5);
  QFont bold = p.font();
  bold.setPointSizeF(7);
  bold.setBold(true);
  const int gap = QFontMetrics(mono, p.device()).averageCharWidth() * 3;
  const int colW = (cur.width() - gap * (kColumns - 1)) / kColumns;
  int column = 0;
  int top = cur.y;
  for (const Line& line : appendixLines(runs)) {
    p.setFont(line.heading ? bold : mono);
    const int flags = Qt::AlignLeft | (line.heading ? Qt::TextWordWrap : Qt::TextWrapAnywhere);
    const int h = line.text.isEmpty() ? QFontMetrics(mono, p.device()).lineSpacing() / 2
                                      : p.boundingRect(QRect(0, 0, colW, 100000), flags, line.text).height();
    if (cur.y + h > cur.height()) {  // next column, or the next page's first
      if (++column == kColumns) {
        cur.newPage();
        column = 0;
        top = 0;
      }
      cur.y = top;
      if (line.text.isEmpty()) continue;
    }
    const int x = column * (colW + gap);
    p.setPen(line.heading ? QColor(40, 40, 40) : QColor(Qt::black));
    p.drawText(QRect(x, cur.y, colW, h), flags, line.text);
    cur.y += h;
  }
  p.setPen(Qt::black);
}

}  // namespace plab::ui
