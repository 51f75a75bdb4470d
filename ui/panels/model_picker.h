#pragma once
// Which model to train: the embedded tiny GPT-2, a config.json (random init),
// a local folder, a model from the HF cache, or one downloaded from the Hub.
// Every selection is inspected (plab::inspectModel) on a background thread;
// failures show in a red label instead of crashing.
#include <QWidget>
#include <vector>

#include "run/metatypes.h"
#include "util/background_task.h"

class QComboBox;
class QLabel;
class QPushButton;

namespace plab::ui {

class ModelPicker : public QWidget {
  Q_OBJECT
 public:
  explicit ModelPicker(QWidget* parent = nullptr);
  ~ModelPicker() override;

  plab::ModelSpec spec() const;
  // Adds (or reselects) an entry for spec and inspects it.
  void setModelSpec(const plab::ModelSpec& spec, const QString& label = QString());
  void refreshCache();          // re-reads the HF cache list
  bool isInspecting() const { return pending_ > 0; }
  bool hasOverview() const { return hasOverview_; }
  const plab::ModelOverview& overview() const { return overview_; }
  QString errorText() const;
  QLabel* errorLabel() const { return error_; }
  QComboBox* combo() const { return combo_; }

 signals:
  void modelInspected(const plab::ModelOverview& overview);
  void inspectionFailed(const QString& message);
  void selectionChanged();      // a new spec was chosen (before inspection ends)

 private:
  int addEntry(const plab::ModelSpec& spec, const QString& label);
  void inspectCurrent();
  void chooseConfigFile();
  void chooseFolder();
  void downloadFromHub();

  QComboBox* combo_;
  QPushButton* fromConfig_;
  QPushButton* fromFolder_;
  QPushButton* download_;
  QPushButton* refresh_;
  QLabel* info_;
  QLabel* error_;
  std::vector<plab::ModelSpec> specs_;  // combo item data indexes this
  int firstCacheEntry_ = -1;
  int ticket_ = 0;
  int pending_ = 0;
  plab::ModelOverview overview_;
  bool hasOverview_ = false;
  BackgroundTasks tasks_{this};
};

}  // namespace plab::ui
