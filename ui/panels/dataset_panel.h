#pragma once
// Training text: the embedded corpus or a .txt/.jsonl file, the JSONL text
// field and the validation split.
#include <QWidget>

#include "data/data_config.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace plab::ui {

class DatasetPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DatasetPanel(QWidget* parent = nullptr);

  plab::DataConfig dataConfig() const;      // seed is left 0; the run's seed applies
  void setDataConfig(const plab::DataConfig& config);
  void setPath(const QString& path);        // "" = embedded default corpus
  // Why training could not read the data (checked when the file or the
  // JSONL field changes); empty when it can.
  QString problem() const { return problem_; }

 signals:
  void problemChanged();

 private:
  void updateDescription();

  QLineEdit* path_;
  QPushButton* browse_;
  QPushButton* useDefault_;
  QLineEdit* textField_;
  QDoubleSpinBox* valFraction_;
  QLabel* description_;
  QString problem_;
};

}  // namespace plab::ui
