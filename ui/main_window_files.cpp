// MainWindow's File menu and what it works on: the workspace and its run
// folders (list, open, rename, hide, delete) and run configurations (save,
// load). The rest of the window is in main_window.cpp.
#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <algorithm>

#include "charts/chart_panel.h"
#include "comparison/comparison_table.h"
#include "main_window.h"
#include "panels/dataset_panel.h"
#include "panels/layer_tree_panel.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"
#include "report/fp32_twin.h"
#include "report/run_folder_reader.h"
#include "report/run_index.h"
#include "run/stored_run_reader.h"
#include "train/run_config_file.h"
#include "util/action_binding.h"
#include "util/atomic_file.h"
#include "util/background_task.h"
#include "util/errors.h"

namespace plab::ui {

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu("&File");
  auto add = [this](QMenu* menu, const QString& text, const QKeySequence& keys, auto slot, const QString& name) {
    QAction* a = menu->addAction(text, this, slot);
    a->setShortcut(keys);
    a->setObjectName(name);
    return a;
  };
  add(file, "&Open run…", QKeySequence::Open, &MainWindow::openRunDialog, "openRunAction");
  file->addSeparator();
  add(file, "&Save config…", QKeySequence::Save, &MainWindow::saveConfigDialog, "saveConfigAction");
  add(file, "&Load config…", QKeySequence(Qt::CTRL | Qt::Key_L), &MainWindow::loadConfigDialog, "loadConfigAction");
  file->addSeparator();
  add(file, "&Export report…", QKeySequence(Qt::CTRL | Qt::Key_E), &MainWindow::exportReport, "exportAction");
  add(file, "Change &workspace…", QKeySequence(), &MainWindow::changeWorkspaceDialog, "changeWorkspaceAction");
  file->addSeparator();
  add(file, "&Quit", QKeySequence::Quit, &QWidget::close, "quitAction");

  QMenu* run = menuBar()->addMenu("&Run");
  add(run, "&Start", QKeySequence(Qt::CTRL | Qt::Key_R), &MainWindow::startRun, "startAction");
  add(run, "&Compare all modes", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), &MainWindow::compareAllModes,
      "compareAction");
  add(run, "Compare &formats", QKeySequence(), &MainWindow::compareFormats, "compareFormatsAction");
  add(run, "Suggest a p&lan…", QKeySequence(), &MainWindow::openAdvisor, "suggestPlanAction");
  add(run, "&Add to comparison queue", QKeySequence(), &MainWindow::addToQueue, "queueAction");
  add(run, "&Pause / resume", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P), &MainWindow::togglePause, "pauseAction");
  add(run, "S&top", QKeySequence(Qt::CTRL | Qt::Key_Period), &MainWindow::stopRuns, "stopAction");
  // The menus offer what the buttons offer (updateButtons sets the buttons).
  const std::pair<const char*, QAbstractButton*> buttons[] = {
      {"startAction", start_}, {"compareAction", compare_}, {"compareFormatsAction", compareFormats_},
      {"suggestPlanAction", layerPanel_->suggestButton()}, {"queueAction", queue_}, {"stopAction", stop_},
      {"exportAction", export_}};
  for (const auto& [name, button] : buttons) bindActionToButton(findChild<QAction*>(name), button);
  bindActionToButton(findChild<QAction*>("pauseAction"), pause_, FollowText::Yes);  // "Pause" / "Resume"
}

void MainWindow::loadWorkspace() {
  QString error;
  if (!workspace_.isValid() || !workspace_.ensureExists(&error)) {
    workspaceLabel_->setText("No workspace: runs are not saved");
    if (!error.isEmpty()) showError("Workspace", error + "\nRuns of this session are not saved.");
    controller_->setOutputRoot(QString());
    return;
  }
  workspaceLabel_->setText("Workspace: " + QDir::toNativeSeparators(workspace_.path()));
  workspaceLabel_->setToolTip("Every run is saved in its own folder here (File > Change workspace…)");
  // In the background: the window is usable at once and the table fills
  // as the runs' indexes are read (report/run_index.h).
  QStringList known;
  for (int i = 0; i < store_.size(); ++i) known << store_.folder(i);
  setLoadingRuns(true);
  loadProblems_.clear();
  statusText_->setText("Reading the workspace's runs…");
  loader_->loadWorkspace(
      workspace_, known, [this](RunFolderLoader::Batch batch) { addLoadedRuns(std::move(batch)); },
      [this](int count, const QString& problem) {
        if (!problem.isEmpty()) appendLog("ignored the linked runs: " + problem);
        if (count > 0) appendLog(QString("workspace %1: %2 runs").arg(workspace_.path()).arg(count));
        runsLoaded(count, QString());
      });
}

bool MainWindow::isLoadingRuns() const { return loadingRuns_; }

bool MainWindow::writingRunFiles() const { return displayWrites_ && displayWrites_->busy(); }

void MainWindow::setLoadingRuns(bool loading) {
  loadingRuns_ = loading;
  charts_->setListing(loading);
}

void MainWindow::addLoadedRuns(std::vector<LoadedRunFolder> batch) {
  std::vector<RunStore::StoredRunToAdd> runs;
  runs.reserve(batch.size());
  for (LoadedRunFolder& loaded : batch) {
    if (!loaded.read) {
      // Listed as unreadable, with the reason, rather than dropped; nothing
      // in the folder is written.
      store_.addUnreadableRun(loaded.folder, loaded.problem, loaded.linked);
      loadProblems_ << loaded.folder + ": " + loaded.problem;
      continue;
    }
    if (!loaded.run.displayProblem.empty())
      appendLog("ignored the run's name and visibility: " + QString::fromStdString(loaded.run.displayProblem));
    if (loaded.run.metricsLinesSkipped > 0)
      appendLog(QString("%1: %2 metrics.jsonl lines skipped (not JSON: torn by a crash)")
                    .arg(loaded.folder)
                    .arg(loaded.run.metricsLinesSkipped));
    runs.push_back({std::move(loaded.run), loaded.linked, /*detailed=*/false});
  }
  store_.addStoredRuns(std::move(runs));
  statusText_->setText(QString("Reading runs… %1 listed").arg(store_.size()));
}

void MainWindow::runsLoaded(int count, const QString&) {
  setLoadingRuns(false);
  // Next session's run names continue the numbering: run7-bf16 after run6-fp32.
  static const QRegularExpression numbered("^run(\\d+)-");
  for (int i = 0; i < store_.size(); ++i) {
    const auto m = numbered.match(QString::fromStdString(store_.record(i).config.name));
    if (m.hasMatch()) runCounter_ = std::max(runCounter_, m.captured(1).toInt());
  }
  for (const QString& p : loadProblems_) appendLog("could not read a run: " + p);
  if (!loadProblems_.isEmpty()) showError("Some runs could not be read", loadProblems_.join("\n"));
  loadProblems_.clear();
  statusText_->setText(count > 0 ? QString("%1 runs listed").arg(store_.size()) : QString("Ready"));
  updateButtons();
  // The charts drew the runs as they arrived (at most once a second) and
  // draw what is left on their next tick: no redraw of the same again.
  if (count > 0) showNewestMeasurements();  // the model may have loaded before its runs were listed
}

bool MainWindow::setWorkspace(const QString& path) {
  if (controller_->isBusy()) {
    showError("Change workspace", "Stop the runs first: they are writing into the current workspace.");
    return false;
  }
  loader_->cancel();
  setLoadingRuns(false);
  store_.clear();
  workspace_ = Workspace(path);
  controller_->setOutputRoot(workspace_.path());
  loadWorkspace();
  updateButtons();
  return true;
}

void MainWindow::changeWorkspaceDialog() {
  const QString dir = QFileDialog::getExistingDirectory(this, "Workspace folder (one sub-folder per run)",
                                                        workspace_.path());
  if (!dir.isEmpty()) setWorkspace(dir);
}

int MainWindow::openRunFolder(const QString& folder) {
  const std::vector<std::filesystem::path> found = plab::findRunFolders(folder.toStdString());
  QStringList runs;
  for (const auto& p : found) runs << QDir::cleanPath(QString::fromStdString(p.string()));
  if (runs.isEmpty()) {
    showError("Open run", folder + " holds no run: a run folder has config.json and metrics.jsonl or summary.json, "
                                   "a sweep folder has them in runs/<name>/.");
    return 0;
  }
  const bool outside = !workspace_.owns(runs.front());
  if (outside && workspace_.isValid()) {
    try {
      workspace_.link(folder);  // listed again after a restart
    } catch (const std::exception& e) {
      appendLog(QString("could not remember %1 in the workspace: %2").arg(folder, QString::fromUtf8(e.what())));
    }
  }
  QStringList unlisted;
  for (const QString& run : runs)
    if (store_.findFolder(run) < 0) unlisted << run;
  if (unlisted.isEmpty()) {
    statusText_->setText(QString("%1 holds no run that is not listed already").arg(folder));
    return 0;
  }
  setLoadingRuns(true);
  loadProblems_.clear();
  statusText_->setText(QString("Reading %1 runs from %2…").arg(unlisted.size()).arg(folder));
  loader_->loadFolders(
      workspace_, unlisted, outside, [this](RunFolderLoader::Batch batch) { addLoadedRuns(std::move(batch)); },
      [this, folder](int count, const QString&) {
        appendLog(QString("opened %1: %2 new runs").arg(folder).arg(count));
        runsLoaded(count, QString());
        statusText_->setText(QString("Opened %1 runs from %2").arg(count).arg(folder));
      });
  return static_cast<int>(unlisted.size());
}

void MainWindow::openRunDialog() {
  const QString dir =
      QFileDialog::getExistingDirectory(this, "Open a run folder, a sweep folder or a folder of runs", workspace_.path());
  if (!dir.isEmpty()) openRunFolder(dir);
}

plab::RunDisplay MainWindow::displayOf(int run) const {
  plab::RunDisplay display;
  display.name = store_.record(run).config.name;
  display.hidden = !store_.isVisible(run);
  display.fp32Reference = store_.record(run).fp32Reference;
  return display;
}

void MainWindow::indexFinishedRun(int run) {
  const QString folder = store_.folder(run);
  if (folder.isEmpty() || !workspace_.owns(folder)) return;  // nothing is written into an opened folder
  if (!displayWrites_) displayWrites_ = std::make_unique<BackgroundTasks>(this);
  // A ticket: a Delete of the run meanwhile cancels the write (run_folder_writes.h).
  const std::shared_ptr<RunFolderWrites::Ticket> ticket = folderWrites_.schedule(folder);
  displayWrites_->run<bool>(
      [ticket] {
        const std::filesystem::path dir = ticket->folder().toStdString();
        const plab::StoredRun read = plab::readRunFolder(dir);
        return ticket->write([&] { plab::report::writeRunIndex(dir, read); });
      },
      [](const bool&) {},
      [this, ticket](const QString& message) {
        // A folder deleted under the read: nothing was to be written.
        if (!ticket->cancelled()) appendLog("could not index " + ticket->folder() + ": " + message);
      });
}

void MainWindow::writeDisplay(int run) {
  const QString folder = store_.folder(run);
  if (folder.isEmpty() || !QFileInfo(folder).isDir()) return;  // queued: nothing on disk yet
  if (store_.state(run) == RunState::Unreadable) return;        // nothing in it is written
  try {
    plab::writeRunDisplay(folder.toStdString(), displayOf(run));
  } catch (const std::exception& e) {
    appendLog("could not save the run's name, visibility and fp32 reference: " + QString::fromUtf8(e.what()));
  }
}

void MainWindow::renameRun(int run, const QString& name) {
  if (run < 0 || run >= store_.size() || name.trimmed().isEmpty()) return;
  store_.rename(run, name.trimmed());
  writeDisplay(run);
}

void MainWindow::setRunVisible(int run, bool visible) {
  if (run < 0 || run >= store_.size()) return;
  store_.setVisible(run, visible);
  writeDisplay(run);
}

void MainWindow::setRunsVisible(const std::vector<int>& runs, bool visible) {
  if (runs.size() == 1) return setRunVisible(runs.front(), visible);
  std::vector<int> changed;
  for (int run : runs)
    if (run >= 0 && run < store_.size() && store_.isVisible(run) != visible) changed.push_back(run);
  if (changed.empty()) return;
  store_.setVisible(changed, visible);
  // A group of hundreds: their display.json files are written off the GUI
  // thread (each is synced to disk), in one task.
  std::vector<std::pair<std::shared_ptr<RunFolderWrites::Ticket>, plab::RunDisplay>> writes;
  for (int run : changed) {
    const QString folder = store_.folder(run);
    if (folder.isEmpty() || store_.state(run) == RunState::Unreadable) continue;
    writes.emplace_back(folderWrites_.schedule(folder), displayOf(run));
  }
  if (!displayWrites_) displayWrites_ = std::make_unique<BackgroundTasks>(this);
  displayWrites_->run<QString>(
      [writes] {
        QString problems;
        for (const auto& [ticket, display] : writes) {
          const std::filesystem::path folder = ticket->folder().toStdString();
          try {
            ticket->write([&] {
              if (std::filesystem::is_directory(folder)) plab::writeRunDisplay(folder, display);
            });
          } catch (const std::exception& e) {
            problems += QString::fromUtf8(e.what()) + "\n";
          }
        }
        return problems;
      },
      [this](const QString& problems) {
        if (!problems.isEmpty()) appendLog("could not save the runs' visibility: " + problems.trimmed());
      },
      [this](const QString& message) { appendLog("could not save the runs' visibility: " + message); });
}

void MainWindow::setFp32Reference(int run, const QString& folderName) {
  if (run < 0 || run >= store_.size()) return;
  store_.setFp32Reference(run, folderName);
  writeDisplay(run);
  appendLog(QString("[%1] %2").arg(QString::fromStdString(store_.record(run).config.name),
                                   QString::fromStdString(plab::report::fp32TwinText(store_.records(),
                                                                                     static_cast<size_t>(run)))));
}

void MainWindow::renameSelectedRun() {
  const int run = selectedRun();
  if (run < 0) return;
  bool ok = false;
  const QString name = QInputDialog::getText(this, "Rename run", "Name shown in the charts, table and reports:",
                                             QLineEdit::Normal,
                                             QString::fromStdString(store_.record(run).config.name), &ok);
  if (ok) renameRun(run, name);
}

bool MainWindow::deleteRun(int run) {
  if (run < 0 || run >= store_.size() || controller_->isBusy() || !store_.isFinished(run)) return false;
  const QString folder = store_.folder(run);
  const QString name = QString::fromStdString(store_.record(run).config.name);
  if (store_.isLinked(run) && !workspace_.holdsLink(folder)) {
    // Not ours to delete: only unlisted (a run of a linked sweep comes back
    // with its sweep).
    try {
      workspace_.unlink(folder);
    } catch (const std::exception& e) {
      appendLog("could not update the workspace's list of opened runs: " + QString::fromUtf8(e.what()));
    }
    appendLog(QString("[%1] unlisted; its folder %2 is left in place").arg(name, folder));
  } else if (!folder.isEmpty() && (QFileInfo(folder).isDir() || QFileInfo(folder).isSymLink())) {
    // Through the workspace: a link goes alone, a folder the tool did not
    // write is refused, and without a trash only the tool's files go. No
    // background write lands in it from here on (run_folder_writes.h).
    folderWrites_.cancel(folder);
    try {
      appendLog(QString("[%1] %2").arg(name, workspace_.removeRun(folder, /*useTrash=*/true)));
    } catch (const std::exception& e) {
      showError("Delete run", QString::fromUtf8(e.what()));
      return false;
    }
  }
  store_.removeRun(run);
  return true;
}

void MainWindow::deleteSelectedRun() {
  const int run = selectedRun();
  if (run < 0 || controller_->isBusy() || !store_.isFinished(run)) return;
  const QString name = QString::fromStdString(store_.record(run).config.name);
  const QString folder = store_.folder(run);
  const QString text =
      workspace_.holdsLink(folder)
          ? QString("Remove the link %1 from the workspace? The run's folder it points to is left in place:\n%2")
                .arg(folder, QFileInfo(folder).symLinkTarget())
      : store_.isLinked(run)
          ? QString("Remove %1 from the list? Its folder (opened from outside the workspace) is left in place:\n%2")
                .arg(name, folder)
          : QString("Move the run %1 and its folder to the trash?\n%2").arg(name, folder);
  if (QMessageBox::question(this, "Delete run", text, QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) ==
      QMessageBox::Yes)
    deleteRun(run);
}

bool MainWindow::saveConfigTo(const QString& file) {
  plab::RunConfig c = currentConfig();
  c.name = QFileInfo(file).completeBaseName().toStdString();
  try {
    plab::writeFileAtomically(file.toStdString(), plab::dumpJsonForFile(c.toJson()));
  } catch (const std::exception& e) {
    showError("Save config", QString::fromUtf8(e.what()));
    return false;
  }
  appendLog("config saved to " + file + " (precision-lab-cli run --config accepts it)");
  return true;
}

bool MainWindow::loadConfigFrom(const QString& file) {
  try {
    // The CLI's reader: a regular file of at most 16 MiB, UTF-8, no key given
    // twice, an overflowing number named by its field (a FIFO or /dev/zero
    // once blocked or filled memory here).
    const std::vector<plab::RunConfig> runs = plab::loadRunConfigFile(file.toStdString());
    if (runs.empty()) throw plab::ConfigError(file.toStdString() + ": the file holds no run");
    applyConfig(runs.front());
    appendLog(QString("config loaded from %1").arg(file) +
              (runs.size() > 1 ? QString(" (the first of its %1 runs)").arg(runs.size()) : QString()));
  } catch (const plab::ConfigError& e) {  // names the file
    showError("Load config", QString::fromUtf8(e.what()));
    return false;
  } catch (const std::exception& e) {
    showError("Load config", file + ": " + QString::fromUtf8(e.what()));
    return false;
  }
  return true;
}

void MainWindow::saveConfigDialog() {
  const QString file = QFileDialog::getSaveFileName(this, "Save run configuration", workspace_.path() + "/config.json",
                                                    "Run configuration (*.json)");
  if (!file.isEmpty()) saveConfigTo(file);
}

void MainWindow::loadConfigDialog() {
  const QString file =
      QFileDialog::getOpenFileName(this, "Load run configuration", workspace_.path(), "Run configuration (*.json)");
  if (!file.isEmpty()) loadConfigFrom(file);
}

void MainWindow::applyConfig(const plab::RunConfig& config) {
  baseConfig_ = config;
  // The optimizer first: the layer tree's memory estimate follows its mode.
  optimizerPanel_->setFrom(config);
  datasetPanel_->setDataConfig(config.data);
  layerPanel_->setPlan(config.plan);
  layerPanel_->setOptimizer(optimizerPanel_->mode(), optimizerPanel_->adamw());
  modelPicker_->setModelSpec(config.model);
  updateButtons();
}

}  // namespace plab::ui
