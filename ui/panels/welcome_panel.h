#pragma once
// What an empty workspace shows instead of six empty charts: the one
// comparison that shows what the tool is for (every mode on the built-in
// model, the CLI's `run --default`), what to look for in it, and where the
// rest of the setup is.
#include <QWidget>

class QPushButton;

namespace plab::ui {

class WelcomePanel : public QWidget {
  Q_OBJECT
 public:
  explicit WelcomePanel(QWidget* parent = nullptr);
  QPushButton* compareButton() const { return compare_; }

 signals:
  void compareRequested();

 private:
  QPushButton* compare_;
};

}  // namespace plab::ui
