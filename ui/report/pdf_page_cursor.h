#pragma once
// Top-to-bottom layout on the pages of a QPdfWriter: the next block starts
// a new page when it does not fit on this one.
#include <QPainter>
#include <QPdfWriter>

namespace plab::ui {

class PdfPageCursor {
 public:
  PdfPageCursor(QPdfWriter& writer, QPainter& painter) : writer_(writer), painter_(painter) {}
  int width() const { return painter_.viewport().width(); }
  int height() const { return painter_.viewport().height(); }
  int left() const { return height() - y; }  // room left on this page
  int pages() const { return pages_; }
  int y = 0;
  void ensure(int h) {
    if (y + h > height() && y > 0) newPage();
  }
  void newPage() {
    writer_.newPage();
    ++pages_;
    y = 0;
  }

 private:
  QPdfWriter& writer_;
  QPainter& painter_;
  int pages_ = 1;
};

}  // namespace plab::ui
