#include "window_state.h"

#include <QSettings>
#include <QSplitter>
#include <QTabWidget>

#include "main_window.h"
#include "panels/model_picker.h"

namespace plab::ui {
namespace {

// Splitters and tabs are found by object name so the window's layout code
// stays the only place that builds them.
const char* const kSplitters[] = {"mainSplitter", "resultsSplitter"};

}  // namespace

void saveWindowState(const MainWindow& window, QSettings& settings) {
  settings.setValue("window/geometry", window.saveGeometry());
  for (const char* name : kSplitters)
    if (const auto* splitter = window.findChild<QSplitter*>(name))
      settings.setValue(QString("window/") + name, splitter->saveState());
  if (const auto* tabs = window.findChild<QTabWidget*>("setupTabs"))
    settings.setValue("window/setupTab", tabs->currentIndex());
  const plab::ModelSpec model = window.modelPicker()->spec();
  settings.setValue("model/source", QString::fromStdString(model.source));
  settings.setValue("model/path", QString::fromStdString(model.path));
  settings.setValue("model/revision", QString::fromStdString(model.revision));
  settings.setValue("workspace/path", window.workspacePath());
}

void restoreWindowState(MainWindow& window, const QSettings& settings) {
  if (settings.contains("window/geometry")) window.restoreGeometry(settings.value("window/geometry").toByteArray());
  for (const char* name : kSplitters)
    if (auto* splitter = window.findChild<QSplitter*>(name); splitter && settings.contains(QString("window/") + name))
      splitter->restoreState(settings.value(QString("window/") + name).toByteArray());
  if (auto* tabs = window.findChild<QTabWidget*>("setupTabs"); tabs && settings.contains("window/setupTab"))
    tabs->setCurrentIndex(settings.value("window/setupTab").toInt());
  const QString source = settings.value("model/source").toString();
  // The embedded model is the default selection already.
  if (source.isEmpty() || source == "embedded") return;
  plab::ModelSpec model;
  model.source = source.toStdString();
  model.path = settings.value("model/path").toString().toStdString();
  model.revision = settings.value("model/revision", "main").toString().toStdString();
  window.modelPicker()->setModelSpec(model);
}

}  // namespace plab::ui
