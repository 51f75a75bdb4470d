#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "report/run_report.h"
#include "report/svg_util.h"

namespace plab {

using report::escapeXml;
using report::num;

namespace {

// An upper bound of an 11 px sans-serif character's width (average ~6.2).
constexpr double kLegendCharWidth = 7.0;

// A later run of a mode: its dash pattern (in line widths) as an attribute.
std::string dashArray(const std::vector<double>& dashes, double width) {
  if (dashes.empty()) return {};
  std::string out = " stroke-dasharray=\"";
  for (size_t i = 0; i < dashes.size(); ++i) out += (i ? "," : "") + num(dashes[i] * width, 4);
  return out + "\"";
}

// UTF-8 characters, not bytes.
size_t textLength(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string renderSvgLineChart(const std::string& title, const std::string& xLabel, const std::string& yLabel,
                               const std::vector<ChartSeries>& series, bool logY) {
  // The legend takes the room its labels need (long run names were cut at
  // the right edge, many runs at the bottom); the plot keeps its size.
  size_t longest = 0;
  for (const ChartSeries& s : series) longest = std::max(longest, textLength(s.label));
  const double left = 70, top = 36, bottom = 52, plotW = 480, plotH = 252;
  const double right = std::max(170.0, 46 + kLegendCharWidth * static_cast<double>(longest));
  const double width = left + plotW + right;
  const double height = std::max(top + plotH + bottom, top + 18.0 * static_cast<double>(series.size()) + 16);

  // Values that cannot be drawn (NaN/Inf, <= 0 on a log axis) are skipped
  // and break the line.
  auto usable = [&](double x, double y) { return std::isfinite(x) && std::isfinite(y) && (!logY || y > 0); };
  auto ty = [&](double y) { return logY ? std::log10(y) : y; };

  double xMin = std::numeric_limits<double>::infinity(), xMax = -xMin, yMin = xMin, yMax = -xMin;
  for (const ChartSeries& s : series)
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i)
      if (usable(s.x[i], s.y[i])) {
        xMin = std::min(xMin, s.x[i]);
        xMax = std::max(xMax, s.x[i]);
        yMin = std::min(yMin, ty(s.y[i]));
        yMax = std::max(yMax, ty(s.y[i]));
      }
  const bool empty = !std::isfinite(xMin);
  if (empty) xMin = 0, xMax = 1, yMin = 0, yMax = 1;
  if (xMax == xMin) xMin -= 0.5, xMax += 0.5;
  if (yMax == yMin) {
    const double pad = logY ? 0.5 : std::max(std::fabs(yMin) * 0.1, 0.5);
    yMin -= pad, yMax += pad;
  } else {
    const double pad = (yMax - yMin) * 0.05;
    yMin -= pad, yMax += pad;
  }
  auto px = [&](double x) { return left + (x - xMin) / (xMax - xMin) * plotW; };
  auto py = [&](double y) { return top + plotH - (ty(y) - yMin) / (yMax - yMin) * plotH; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  svg << "<title>" << escapeXml(title) << "</title>\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << width / 2 << "\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">"
      << escapeXml(title) << "</text>\n";

  // Grid, ticks and tick labels.
  for (double t : report::niceTicks(xMin, xMax)) {
    const double x = px(t);
    svg << "<line x1=\"" << num(x, 6) << "\" y1=\"" << top << "\" x2=\"" << num(x, 6) << "\" y2=\"" << top + plotH
        << "\" stroke=\"#e5e5e5\"/>\n";
    svg << "<text x=\"" << num(x, 6) << "\" y=\"" << top + plotH + 16 << "\" text-anchor=\"middle\">" << num(t)
        << "</text>\n";
  }
  for (double t : report::niceTicks(yMin, yMax)) {
    const double y = top + plotH - (t - yMin) / (yMax - yMin) * plotH;
    svg << "<line x1=\"" << left << "\" y1=\"" << num(y, 6) << "\" x2=\"" << left + plotW << "\" y2=\"" << num(y, 6)
        << "\" stroke=\"#e5e5e5\"/>\n";
    svg << "<text x=\"" << left - 6 << "\" y=\"" << num(y + 4, 6) << "\" text-anchor=\"end\">"
        << (logY ? num(std::pow(10.0, t), 3) : num(t)) << "</text>\n";
  }
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plotW << "\" height=\"" << plotH
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
  svg << "<text x=\"" << left + plotW / 2 << "\" y=\"" << height - 12 << "\" text-anchor=\"middle\">"
      << escapeXml(xLabel) << "</text>\n";
  svg << "<text transform=\"translate(16," << top + plotH / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
      << escapeXml(yLabel) << (logY ? " (log)" : "") << "</text>\n";
  if (empty)
    svg << "<text x=\"" << left + plotW / 2 << "\" y=\"" << top + plotH / 2
        << "\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n";

  // Series: polylines split at unusable points; lone points as dots.
  for (size_t si = 0; si < series.size(); ++si) {
    const ChartSeries& s = series[si];
    const std::string color = s.color.empty() ? std::string(report::seriesColor(si)) : s.color;
    // Runs often draw the same curve (fp32 and mixed): earlier series are
    // drawn wider, so one hidden under a later one shows as a rim.
    const double width =
        series.size() > 1 ? 1.5 + 2.0 * static_cast<double>(series.size() - 1 - si) / static_cast<double>(series.size() - 1)
                          : 1.5;
    std::vector<std::vector<std::pair<double, double>>> segments(1);
    for (size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (usable(s.x[i], s.y[i]))
        segments.back().emplace_back(px(s.x[i]), py(s.y[i]));
      else if (!segments.back().empty())
        segments.emplace_back();
    }
    for (const auto& seg : segments) {
      if (seg.size() == 1) {
        svg << "<circle cx=\"" << num(seg[0].first, 6) << "\" cy=\"" << num(seg[0].second, 6)
            << "\" r=\"3\" fill=\"" << color << "\"/>\n";
      } else if (seg.size() > 1) {
        svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"" << num(width, 3) << '"'
            << dashArray(s.dashes, width) << " points=\"";
        for (const auto& [x, y] : seg) svg << num(x, 6) << ',' << num(y, 6) << ' ';
        svg << "\"/>\n";
      }
    }
    const double ly = top + 8 + 18.0 * static_cast<double>(si);
    svg << "<line x1=\"" << left + plotW + 12 << "\" y1=\"" << ly << "\" x2=\"" << left + plotW + 32 << "\" y2=\""
        << ly << "\" stroke=\"" << color << "\" stroke-width=\"2\"" << dashArray(s.dashes, 2) << "/>\n";
    svg << "<text x=\"" << left + plotW + 38 << "\" y=\"" << ly + 4 << "\">" << escapeXml(s.label) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace plab
