#include "charts/text_wrap.h"

#include <QStringList>

namespace plab::ui {

QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width) {
  QStringList out;
  for (const QString& paragraph : text.split('\n')) {
    QString line;
    for (const QString& word : paragraph.split(' ', Qt::SkipEmptyParts)) {
      const QString candidate = line.isEmpty() ? word : line + ' ' + word;
      if (!line.isEmpty() && metrics.horizontalAdvance(candidate) > width) {
        out << line;
        line = word;
      } else {
        line = candidate;
      }
    }
    out << line;
  }
  return out.join('\n');
}

}  // namespace plab::ui
