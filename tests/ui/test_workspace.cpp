// Issue 11, persistence: every GUI run is written into the workspace and
// listed again by the next window; CLI-made run and sweep folders open;
// renames and hidden runs survive a restart without touching the metrics;
// delete removes the folder; configs save and load; colours follow the
// optimizer mode in charts, table and HTML; "Compare all modes" does not
// re-run what the workspace already has.
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "charts/chart_panel.h"
#include "charts/loss_chart.h"
#include "charts/rounded_away_chart.h"
#include "charts/run_legend.h"
#include "comparison/comparison_table.h"
#include "main_window.h"
#include "window_waits.h"
#include "panels/dataset_panel.h"
#include "panels/layer_tree_panel.h"
#include "panels/model_picker.h"
#include "panels/optimizer_panel.h"
#include "report/mode_colors.h"
#include "report/run_folder_reader.h"
#include "report/run_report.h"
#include "run/workspace.h"
#include "support/hostile_files.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "util/errors.h"
#include "util/run_folder.h"

namespace test_workspace {

using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

constexpr int kRunTimeoutMs = 300000;  // 2 shared cores

fs::path path(const QString& p) { return fs::path(p.toStdString()); }

using plab::test::namedConfig;

QByteArray fileBytes(const QString& file) {
  QFile f(file);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// "a.b.c" -> value for every leaf of a JSON object (an empty object is a
// leaf: plan.overrides).
void collectLeaves(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (!j.is_object() || j.empty()) {
    out[prefix] = j;
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it) collectLeaves(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
}

std::map<std::string, nlohmann::json> jsonLeaves(const nlohmann::json& j) {
  std::map<std::string, nlohmann::json> out;
  collectLeaves(j, "", out);
  return out;
}

// Crafted files of issue 19.1 (each crashed or hung the app at start).
void makeRunTiny(MainWindow& w, int steps) {
  plab::RunConfig c = w.currentConfig();
  c.steps = steps;
  c.batch_size = 2;
  c.seq_len = 32;
  c.warmup_steps = 1;
  c.eval_every = 0;
  c.eval_batches = 1;
  c.update_window = steps;
  c.device = "cpu";
  w.optimizerPanel()->setFrom(c);
}

}  // namespace

class TestWorkspace : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    // The trash of QFile::moveToTrash goes under ~/.qttest, not the user's.
    QStandardPaths::setTestModeEnabled(true);
  }

  void guiRunIsSavedAndListedByTheNextWindow() {
    QTemporaryDir workspace;
    QString folder;
    {
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      QVERIFY(w.workspaceLabel()->text().contains(QDir::toNativeSeparators(QDir::cleanPath(workspace.path()))));
      QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
      makeRunTiny(w, 3);
      w.startRun();
      QTRY_VERIFY_WITH_TIMEOUT(w.store()->state(0) == RunState::Completed, kRunTimeoutMs);
      folder = w.store()->folder(0);
      QVERIFY(folder.startsWith(QDir::cleanPath(workspace.path()) + "/"));
      for (const char* name : {"config.json", "metrics.jsonl", "summary.json", "run_info.json", "layers.csv"})
        QVERIFY2(QFileInfo(QDir(folder).filePath(name)).size() > 0, name);
    }
    MainWindow again(workspace.path());
    QVERIFY(plab::test::waitForRuns(again));
    QCOMPARE(again.store()->size(), 1);
    QCOMPARE(again.store()->state(0), RunState::Completed);
    QCOMPARE(again.store()->folder(0), folder);
    QCOMPARE(again.store()->record(0).config.name, std::string("run1-bf16-kahan"));
    again.chartPanel()->refreshNow();
    QCOMPARE(again.chartPanel()->lossChart()->trainGraph(0)->dataCount(), 3);
    QCOMPARE(again.comparisonTable()->shownTopLevelRows(), 1);
    QCOMPARE(again.comparisonTable()->cellText(0, ComparisonTable::StatusColumn), QString("completed"));
    QVERIFY(again.comparisonTable()->cellText(0, ComparisonTable::StartedColumn) != "–");
    // The numbering goes on instead of starting at run1 again.
    QTRY_VERIFY_WITH_TIMEOUT(again.modelPicker()->hasOverview(), 60000);
    makeRunTiny(again, 1);
    again.startRun();
    QCOMPARE(again.store()->record(1).config.name, std::string("run2-bf16-kahan"));
    QTRY_VERIFY_WITH_TIMEOUT(again.store()->isFinished(1), kRunTimeoutMs);
  }

  void openRunAddsACliSweepAndRemembersIt() {
    QTemporaryDir workspace, elsewhere;
    const fs::path sweep = path(elsewhere.path()) / "sweep-20250101-000000";
    plab::test::writeStoredRun(sweep / "runs" / "s-fp32", namedConfig("s-fp32", plab::OptimizerMode::Fp32AdamW), 5);
    const fs::path killed = plab::test::writeStoredRun(
        sweep / "runs" / "s-bf16", namedConfig("s-bf16", plab::OptimizerMode::Bf16Plain), 3, "", 0.2);
    plab::test::appendTornLine(killed);
    {
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      QCOMPARE(w.store()->size(), 0);
      QCOMPARE(w.openRunFolder(QString::fromStdString(sweep.string())), 2);
      QVERIFY(plab::test::waitForRuns(w));
      QCOMPARE(w.openRunFolder(QString::fromStdString(sweep.string())), 0);  // already listed
      QCOMPARE(w.store()->size(), 2);
      w.chartPanel()->refreshNow();
      int fp32 = w.store()->record(0).config.mode == plab::OptimizerMode::Fp32AdamW ? 0 : 1;
      QCOMPARE(w.store()->state(fp32), RunState::Completed);
      QCOMPARE(w.store()->state(1 - fp32), RunState::Incomplete);
      QCOMPARE(w.chartPanel()->lossChart()->trainGraph(fp32)->dataCount(), 5);
      QCOMPARE(w.chartPanel()->lossChart()->trainGraph(1 - fp32)->dataCount(), 3);
      QCOMPARE(w.comparisonTable()->cellText(1 - fp32, ComparisonTable::StatusColumn), QString("incomplete"));
      QVERIFY(w.store()->isLinked(0));
    }
    MainWindow again(workspace.path());
    QVERIFY(plab::test::waitForRuns(again));
    QCOMPARE(again.store()->size(), 2);  // linked: listed after a restart
    // Deleting an opened run only unlists it; its files stay.
    QVERIFY(again.deleteRun(0));
    QVERIFY(fs::exists(sweep / "runs" / "s-fp32" / "metrics.jsonl"));
  }

  void renameAndHidePersistWithoutTouchingMetrics() {
    QTemporaryDir workspace;
    const fs::path dir = plab::test::writeStoredRun(path(workspace.path()) / "run1-bf16-sr-20250101-000000",
                                                    namedConfig("run1-bf16-sr", plab::OptimizerMode::Bf16StochasticRounding), 4);
    const QString metrics = QString::fromStdString((dir / "metrics.jsonl").string());
    const QByteArray before = fileBytes(metrics);
    const QDateTime modified = QFileInfo(metrics).lastModified();
    {
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      QCOMPARE(w.store()->size(), 1);
      w.renameRun(0, "sr, lr 1e-4");
      QCOMPARE(w.comparisonTable()->cellText(0, ComparisonTable::NameColumn), QString("sr, lr 1e-4"));
      w.chartPanel()->refreshNow();
      QCOMPARE(w.chartPanel()->lossChart()->trainGraph(0)->name(), QString("sr, lr 1e-4"));
      // Unticking the row hides the run from the charts.
      w.comparisonTable()->setRunChecked(0, false);
      QVERIFY(!w.store()->isVisible(0));
      w.chartPanel()->refreshNow();
      QCOMPARE(w.chartPanel()->lossChart()->trainGraph(0), nullptr);
      QCOMPARE(w.chartPanel()->lossChart()->legend->itemCount(), 0);
    }
    MainWindow again(workspace.path());
    QVERIFY(plab::test::waitForRuns(again));
    QCOMPARE(again.store()->record(0).config.name, std::string("sr, lr 1e-4"));
    QVERIFY(!again.store()->isVisible(0));
    QCOMPARE(again.comparisonTable()->checkState(0), Qt::Unchecked);
    QCOMPARE(fileBytes(metrics), before);
    QCOMPARE(QFileInfo(metrics).lastModified(), modified);
    QVERIFY(fileBytes(QString::fromStdString((dir / "config.json").string())).contains("\"run1-bf16-sr\""));
  }

  // Issue 19.5: a run folder that is a link in the workspace was "owned" by
  // its cleaned path, and the fallback removeRecursively deleted 4/4 files
  // in the link's target.
  void symlinkedRunIsNotDeletedThrough() {
    QTemporaryDir workspace, elsewhere;
    const fs::path target = plab::test::writeStoredRun(path(elsewhere.path()) / "theirs",
                                                       namedConfig("theirs", plab::OptimizerMode::Bf16Plain), 2);
    std::ofstream(target / "notes.txt") << "theirs";
    const auto filesIn = [](const fs::path& d) {
      int n = 0;
      for (const auto& e : fs::recursive_directory_iterator(d)) n += e.is_regular_file() ? 1 : 0;
      return n;
    };
    const int before = filesIn(target);
    QVERIFY(before >= 5);
    const QString link = QDir(workspace.path()).filePath("linked-run");
    fs::create_directory_symlink(target, path(link));
    Workspace ws(workspace.path());
    QVERIFY(!ws.owns(link));
    QVERIFY(!ws.owns(link + "/runs/x"));
    QVERIFY(ws.holdsLink(link));
    QVERIFY(ws.runFolders().contains(QDir::cleanPath(link)));
    // Neither to the trash through the link nor by name: the link alone goes.
    {
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      QCOMPARE(w.store()->size(), 1);
      QVERIFY(w.deleteRun(0));
    }
    QVERIFY(!fs::exists(fs::symlink_status(path(link))));
    QCOMPARE(filesIn(target), before);
    MainWindow again(workspace.path());
    QVERIFY(plab::test::waitForRuns(again));
    QCOMPARE(again.store()->size(), 0);
  }

  void ownsResolvesEveryLinkOnTheWay() {
    QTemporaryDir workspace, elsewhere;
    const fs::path outsideRun = path(elsewhere.path()) / "sub" / "run";
    fs::create_directories(outsideRun);
    fs::create_directory_symlink(path(elsewhere.path()) / "sub", path(workspace.path()) / "sub");
    Workspace ws(workspace.path());
    QVERIFY(!ws.owns(workspace.path() + "/sub/run"));  // a real folder, reached through a link
    QVERIFY(!ws.holdsLink(workspace.path() + "/sub/run"));
    QVERIFY_THROWS_EXCEPTION(plab::Error, ws.removeRun(workspace.path() + "/sub/run", false));
    QVERIFY(fs::exists(outsideRun));
    fs::create_directories(path(workspace.path()) / "real" / "run");
    QVERIFY(ws.owns(workspace.path() + "/real/run"));
    QVERIFY(ws.owns(workspace.path() + "/real/../real/run"));
    QVERIFY(!ws.owns(workspace.path() + "/../elsewhere"));
  }

  // Without a trash, only the files the tool writes go; a folder it did not
  // write is refused whole.
  void deleteWithoutTrashRemovesOnlyTheToolsFiles() {
    QTemporaryDir workspace, elsewhere;
    Workspace ws(workspace.path());
    const fs::path run = plab::test::writeStoredRun(path(workspace.path()) / "r-20250101-000000",
                                                    namedConfig("r", plab::OptimizerMode::Bf16Plain), 2);
    std::ofstream(run / "notes.txt") << "mine";
    std::ofstream(path(elsewhere.path()) / "victim.txt") << "keep";
    fs::create_directory_symlink(path(elsewhere.path()), run / "charts");
    const QString message = ws.removeRun(QString::fromStdString(run.string()), /*useTrash=*/false);
    QVERIFY2(message.contains("kept 1 files") && message.contains("notes.txt"), qPrintable(message));
    QVERIFY(!fs::exists(run / "metrics.jsonl") && !fs::exists(run / "config.json"));
    QVERIFY(fs::exists(run / "notes.txt"));
    QVERIFY(!fs::exists(fs::symlink_status(run / "charts")));
    QVERIFY(fs::exists(path(elsewhere.path()) / "victim.txt"));
    // A folder the tool did not write, with a run's file names.
    const fs::path mine = path(workspace.path()) / "mine";
    fs::create_directories(mine / "charts");
    for (const char* f : {"config.json", "metrics.jsonl", "summary.json", "charts/a.svg"}) std::ofstream(mine / f) << "x";
    try {
      ws.removeRun(QString::fromStdString(mine.string()), false);
      QFAIL("expected a refusal");
    } catch (const plab::ConfigError& e) {
      QVERIFY2(std::string(e.what()).find("not made by Precision Lab") != std::string::npos, e.what());
    }
    QVERIFY(fs::exists(mine / "config.json") && fs::exists(mine / "charts/a.svg"));
    // A marked one goes whole when it holds only the tool's files.
    const fs::path marked = plab::createUniqueRunFolder(path(workspace.path()), "m");
    plab::test::writeStoredRun(marked, namedConfig("m", plab::OptimizerMode::Bf16Plain), 2);
    QVERIFY(ws.removeRun(QString::fromStdString(marked.string()), false).startsWith("deleted "));
    QVERIFY(!fs::exists(marked));
  }

  void deleteRemovesTheRunFolder() {
    QTemporaryDir workspace;
    const fs::path dir = plab::test::writeStoredRun(path(workspace.path()) / "gone-20250101-000000",
                                                    namedConfig("gone", plab::OptimizerMode::Bf16Plain), 2);
    {
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      QCOMPARE(w.store()->size(), 1);
      QVERIFY(w.deleteRun(0));
      QCOMPARE(w.store()->size(), 0);
      QCOMPARE(w.comparisonTable()->shownTopLevelRows(), 0);
      QVERIFY(!fs::exists(dir));
    }
    MainWindow again(workspace.path());
    QVERIFY(plab::test::waitForRuns(again));
    QCOMPARE(again.store()->size(), 0);
  }

  void configSavesAndLoads() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    plab::RunConfig c = w.currentConfig();
    c.steps = 17;
    c.seed = 5;
    c.mode = plab::OptimizerMode::Bf16StochasticRounding;
    c.adamw.lr = 3e-4;
    w.optimizerPanel()->setFrom(c);
    const plab::RunConfig saved = w.currentConfig();
    const QString file = workspace.filePath("my-experiment.json");
    QVERIFY(w.saveConfigTo(file));
    // What the CLI reads.
    const plab::RunConfig fromFile = plab::RunConfig::fromJson(nlohmann::json::parse(fileBytes(file).toStdString()));
    QCOMPARE(fromFile.name, std::string("my-experiment"));
    QCOMPARE(fromFile.steps, int64_t(17));

    c.steps = 3;
    c.mode = plab::OptimizerMode::Fp32AdamW;
    w.optimizerPanel()->setFrom(c);
    QCOMPARE(w.currentConfig().steps, int64_t(3));
    QVERIFY(w.loadConfigFrom(file));
    nlohmann::json a = w.currentConfig().toJson(), b = saved.toJson();
    a.erase("name");
    b.erase("name");
    QCOMPARE(QString::fromStdString(a.dump()), QString::fromStdString(b.dump()));

    QVERIFY(!w.loadConfigFrom(workspace.filePath("missing.json")));
    QVERIFY(w.lastError().contains("missing.json"));
  }

  // Issue 37.4/37.7: Load config reads through the CLI's reader. Before, it
  // parsed the file itself: a key given twice loaded (the last one won), a
  // FIFO blocked the open and /dev/zero filled memory.
  void loadConfigReadsLikeTheCli() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    const fs::path dir = workspace.path().toStdString();
    std::ofstream(dir / "twice.json") << R"({"name": "a", "mode": "fp32", "mode": "bf16"})";
    QVERIFY(!w.loadConfigFrom(QString::fromStdString((dir / "twice.json").string())));
    QVERIFY2(w.lastError().contains("gives 'mode' twice"), qPrintable(w.lastError()));
    std::ofstream(dir / "big-lr.json") << R"({"name": "a", "adamw": {"lr": 1e999}})";
    QVERIFY(!w.loadConfigFrom(QString::fromStdString((dir / "big-lr.json").string())));
    QVERIFY2(w.lastError().contains("number 1e999 in 'adamw.lr'"), qPrintable(w.lastError()));
    plab::test::makeFifo(dir / "fifo.json");
    QVERIFY(!w.loadConfigFrom(QString::fromStdString((dir / "fifo.json").string())));
    QVERIFY2(w.lastError().contains("FIFO"), qPrintable(w.lastError()));
    plab::test::linkToDevZero(dir / "zero.json");
    QVERIFY(!w.loadConfigFrom(QString::fromStdString((dir / "zero.json").string())));
    QVERIFY2(w.lastError().contains("is a device"), qPrintable(w.lastError()));
    QVERIFY(!w.loadConfigFrom(QString::fromStdString((dir / "missing.json").string())));
    QCOMPARE(w.lastError().count("missing.json"), 1);  // the file named once
  }

  // The app's Start and the CLI's default run are the same run: one source
  // of defaults (identical runs once gave different val losses: eval_batches
  // 16 in the CLI, 4 in the app). Fields without a widget come from the
  // loaded config.
  void defaultsAreTheClis() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    nlohmann::json app = w.currentConfig().toJson(), cli = plab::defaultRunConfig().toJson();
    app.erase("name");
    cli.erase("name");
    QCOMPARE(QString::fromStdString(app.dump()), QString::fromStdString(cli.dump()));

    plab::RunConfig loaded = plab::defaultRunConfig();
    loaded.eval_batches = 7;
    loaded.threads = 1;
    loaded.checkpoint_every = 3;
    loaded.adamw.kernels = plab::StepKernels::Reference;
    const QString file = workspace.filePath("advanced.json");
    QFile out(file);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(QByteArray::fromStdString(loaded.toJson().dump()));
    out.close();
    QVERIFY(w.loadConfigFrom(file));
    const plab::RunConfig c = w.currentConfig();
    QCOMPARE(c.eval_batches, int64_t(7));
    QCOMPARE(c.threads, int64_t(1));
    QCOMPARE(c.checkpoint_every, int64_t(3));
    QVERIFY(c.adamw.kernels == plab::StepKernels::Reference);
  }

  // Issue 20.2: every field precision-lab-cli run takes has a widget. A
  // config that differs from the default in every leaf of toJson() is put
  // into the panels (not with applyConfig, which would also make it the base
  // a missing widget falls back to) and comes back from currentConfig()
  // field by field; a new RunConfig field without a widget fails here.
  void everyCliFieldIsEditable() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    const plab::RunConfig want = plab::RunConfig::fromJson(nlohmann::json::parse(R"({
      "name": "every-field",
      "model": {"source": "folder", "path": "/nonexistent/model", "revision": "v2", "tokenizer": "bytes"},
      "data": {"path": "/nonexistent/corpus.jsonl", "text_field": "body", "val_fraction": 0.2, "seed": 5},
      "plan": {"preset": "linear-bf16", "norms_bf16": true, "embeddings_bf16": true,
               "overrides": {"lm_head": "fp32"}},
      "mode": "bf16-sr",
      "adamw": {"lr": 2e-4, "beta1": 0.85, "beta2": 0.98, "eps": 1e-7, "weight_decay": 0.05,
                "moments": "fp32", "kernels": "reference", "torch_step": "for-loop"},
      "steps": 30, "batch_size": 4, "grad_accum": 2, "seq_len": 32, "lr_schedule": "cosine",
      "warmup_steps": 3, "min_lr_ratio": 0.2, "grad_clip": 0.5, "eval_every": 10, "eval_batches": 7,
      "layer_stats_every": 2, "update_window": 8, "checkpoint_every": 15, "seed": 3, "device": "cpu",
      "threads": 1, "reproducible": true
    })"));
    // What the app decides itself: each run's name (runN-mode), its folder
    // in the workspace, and a fresh start (resuming a checkpoint is the CLI's).
    const std::set<std::string> appOwned = {"name", "output_dir", "resume_from"};
    const auto defaults = jsonLeaves(plab::defaultRunConfig().toJson());
    const auto wanted = jsonLeaves(want.toJson());
    for (const auto& [key, value] : defaults)  // "plan.overrides" {} becomes "plan.overrides.lm_head"
      if (!appOwned.count(key))
        QVERIFY2(!wanted.count(key) || wanted.at(key) != value,
                 ("the test's config must change " + key + ": give it a widget too").c_str());

    w.optimizerPanel()->setFrom(want);
    w.datasetPanel()->setDataConfig(want.data);
    w.layerPanel()->setPlan(want.plan);
    w.modelPicker()->setModelSpec(want.model);
    const auto got = jsonLeaves(w.currentConfig().toJson());
    for (const auto& [key, value] : wanted) {
      if (appOwned.count(key)) continue;
      QVERIFY2(got.count(key) && got.at(key) == value,
               (key + ": the app gives " + (got.count(key) ? got.at(key).dump() : "nothing") + ", the file " +
                value.dump()).c_str());
    }
  }

  // The Advanced section's widgets, one by one, reach the config (and the
  // saved file the CLI runs).
  void advancedWidgetsReachTheConfig() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    auto* panel = w.optimizerPanel();
    panel->findChild<QSpinBox*>("evalBatches")->setValue(9);
    panel->findChild<QSpinBox*>("evalEvery")->setValue(25);
    panel->findChild<QSpinBox*>("layerStatsEvery")->setValue(3);
    panel->findChild<QSpinBox*>("updateWindow")->setValue(6);
    panel->findChild<QSpinBox*>("checkpointEvery")->setValue(40);
    panel->findChild<QSpinBox*>("threads")->setValue(1);
    panel->findChild<QComboBox*>("device")->setCurrentText("cpu");
    panel->findChild<QCheckBox*>("reproducible")->setChecked(true);
    panel->findChild<QComboBox*>("stepKernels")->setCurrentText("reference");
    panel->findChild<QComboBox*>("tokenizer")->setCurrentText("bytes");
    panel->findChild<QSpinBox*>("dataSeed")->setValue(11);
    panel->findChild<QSpinBox*>("seed")->setValue(4);
    panel->findChild<QLineEdit*>("lossScaleInit")->setText("1024");
    panel->findChild<QSpinBox*>("lossScaleGrowthInterval")->setValue(50);
    const plab::RunConfig c = w.currentConfig();
    QCOMPARE(c.eval_batches, int64_t(9));
    QCOMPARE(c.eval_every, int64_t(25));
    QCOMPARE(c.layer_stats_every, int64_t(3));
    QCOMPARE(c.update_window, int64_t(6));
    QCOMPARE(c.checkpoint_every, int64_t(40));
    QCOMPARE(c.threads, int64_t(1));
    QCOMPARE(c.device, std::string("cpu"));
    QVERIFY(c.reproducible);
    QVERIFY(c.adamw.kernels == plab::StepKernels::Reference);
    QCOMPARE(c.model.tokenizer, std::string("bytes"));
    QCOMPARE(c.data.seed, uint64_t(11));  // its own, as in the CLI: not tied to the run's seed
    QCOMPARE(c.seed, uint64_t(4));
    QCOMPARE(c.loss_scale_init, 1024.0);
    QCOMPARE(c.loss_scale_growth_interval, int64_t(50));
    for (auto* widget : panel->findChild<QWidget*>("advancedSection")->findChildren<QWidget*>())
      if (qobject_cast<QSpinBox*>(widget) || qobject_cast<QComboBox*>(widget) || qobject_cast<QCheckBox*>(widget) ||
          widget->objectName() == "lossScaleInit")
        QVERIFY2(!widget->toolTip().isEmpty(), qPrintable(widget->objectName() + " has no tooltip"));
    const QString file = workspace.filePath("saved.json");
    QVERIFY(w.saveConfigTo(file));
    const auto saved = nlohmann::json::parse(fileBytes(file).toStdString());
    QCOMPARE(saved.at("eval_batches").get<int>(), 9);
    QCOMPARE(saved.at("adamw").at("kernels").get<std::string>(), std::string("reference"));
  }

  // Issue 20.1: the user measures a run against another fp32 run; the choice
  // is kept in display.json by folder name, survives a restart, and every
  // view says it was chosen by hand and how the config differs.
  void fp32ReferenceChosenByHandPersists() {
    QTemporaryDir workspace;
    const fs::path ws = path(workspace.path());
    plab::RunConfig twin = namedConfig("twin-fp32", plab::OptimizerMode::Fp32AdamW);
    twin.steps = 4;
    plab::RunConfig other = twin;
    other.name = "lr-fp32";
    other.adamw.lr = 1e-3;
    plab::RunConfig bf16 = namedConfig("run-bf16", plab::OptimizerMode::Bf16Plain);
    bf16.steps = 4;
    plab::test::writeStoredRun(ws / "run1-fp32", twin, 4);
    plab::test::writeStoredRun(ws / "run2-fp32", other, 4, "completed", 0.01);
    plab::test::writeStoredRun(ws / "run3-bf16", bf16, 4, "completed", 0.02);
    {
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      QCOMPARE(w.store()->size(), 3);
      const int run = 2;
      QCOMPARE(w.comparisonTable()->cellText(run, ComparisonTable::Fp32TwinColumn), QString("twin-fp32"));
      const auto choices = w.comparisonTable()->fp32ReferenceChoices(run);
      QCOMPARE(choices.size(), size_t(2));
      QCOMPARE(choices[1].first, QString("run2-fp32"));
      QCOMPARE(choices[1].second, QString("lr-fp32 (differs in adamw.lr)"));
      QVERIFY(w.comparisonTable()->fp32ReferenceChoices(0).empty());  // an fp32 run is its own
      w.setFp32Reference(run, "run2-fp32");
    }
    const auto display = plab::readRunDisplay(ws / "run3-bf16");
    QCOMPARE(display.fp32Reference, std::string("run2-fp32"));
    MainWindow again(workspace.path());
    QVERIFY(plab::test::waitForRuns(again));
    const int run = 2;
    const QString twinTip =
        again.comparisonTable()->cellData(run, ComparisonTable::Fp32TwinColumn, Qt::ToolTipRole).toString();
    QCOMPARE(again.comparisonTable()->cellText(run, ComparisonTable::Fp32TwinColumn), QString("lr-fp32 (chosen)"));
    QVERIFY2(twinTip.contains("chosen by hand; its config differs in: adamw.lr"), qPrintable(twinTip));
    const QString verdict = again.comparisonTable()->cellText(run, ComparisonTable::VerdictColumn);
    QVERIFY2(verdict.contains("vs fp32 run lr-fp32 (chosen by hand; differs in: adamw.lr)"), qPrintable(verdict));
    again.chartPanel()->differenceCheckBox()->setChecked(true);
    again.chartPanel()->refreshNow();
    QVERIFY2(again.chartPanel()->lossChart()->trainGraph(run)->name().contains("lr-fp32 (chosen)"),
             qPrintable(again.chartPanel()->lossChart()->trainGraph(run)->name()));
    const std::string html = plab::renderReportHtml(again.store()->visibleRecords(), "t");
    QVERIFY(html.find("lr-fp32 (chosen)") != std::string::npos);
    QVERIFY(html.find("chosen by hand; differs in: adamw.lr") != std::string::npos);
    // Back to automatic: the rule's twin again, and display.json forgets the choice.
    again.setFp32Reference(run, QString());
    QCOMPARE(again.comparisonTable()->cellText(run, ComparisonTable::Fp32TwinColumn), QString("twin-fp32"));
    QVERIFY(plab::readRunDisplay(ws / "run3-bf16").fp32Reference.empty());
  }

  void colourFollowsTheModeInChartTableAndHtml() {
    QTemporaryDir workspace;
    const fs::path ws = path(workspace.path());
    plab::test::writeStoredRun(ws / "a", namedConfig("a-kahan", plab::OptimizerMode::Bf16Kahan), 3);
    plab::test::writeStoredRun(ws / "b", namedConfig("b-fp32", plab::OptimizerMode::Fp32AdamW), 3);
    plab::test::writeStoredRun(ws / "c", namedConfig("c-kahan", plab::OptimizerMode::Bf16Kahan), 3);
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 3);
    w.chartPanel()->refreshNow();
    for (int run = 0; run < 3; ++run) {
      const QColor chart = w.chartPanel()->lossChart()->trainGraph(run)->pen().color();
      QCOMPARE(w.comparisonTable()->cellData(run, ComparisonTable::NameColumn, Qt::ForegroundRole).value<QColor>(), chart);
      QCOMPARE(w.chartPanel()->roundedAwayChart()->runGraph(run)->pen().color(), chart);
      const auto mode = w.store()->record(run).config.mode;
      if (mode == plab::OptimizerMode::Fp32AdamW) QCOMPARE(chart, QColor(0, 0, 0));
    }
    // Two kahan runs: the mode's colour both, the later one dashed (a
    // lighter shade read as another mode's colour).
    std::vector<int> kahan;
    for (int run = 0; run < 3; ++run)
      if (w.store()->record(run).config.mode == plab::OptimizerMode::Bf16Kahan) kahan.push_back(run);
    const plab::Rgb blue = plab::modeColor(plab::OptimizerMode::Bf16Kahan);
    const QPen first = w.chartPanel()->lossChart()->trainGraph(kahan[0])->pen();
    const QPen second = w.chartPanel()->lossChart()->trainGraph(kahan[1])->pen();
    QCOMPARE(first.color(), QColor(blue.r, blue.g, blue.b));
    QCOMPARE(second.color(), QColor(blue.r, blue.g, blue.b));
    QVERIFY(first.style() != second.style());
    // The HTML report uses the same colours and dashes.
    const std::string html = plab::renderReportHtml(w.store()->exportableRecords(), "t");
    QVERIFY(html.find(plab::hexColor(blue)) != std::string::npos);
    QVERIFY(html.find("stroke-dasharray") != std::string::npos);
  }

  void legendListsOnlyShownRunsWithData() {
    QTemporaryDir workspace;
    plab::test::writeStoredRun(path(workspace.path()) / "a", namedConfig("a", plab::OptimizerMode::Fp32AdamW), 3);
    plab::test::writeStoredRun(path(workspace.path()) / "b", namedConfig("b", plab::OptimizerMode::Bf16Plain), 0, "failed");
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QCOMPARE(w.store()->size(), 2);
    w.chartPanel()->refreshNow();
    LossChart* loss = w.chartPanel()->lossChart();
    QCOMPARE(loss->legend->itemCount(), 1);  // the failed run drew nothing
    // Not over the newest data: off in the live panel (one legend above the
    // charts), under the plot when a chart is exported on its own.
    QVERIFY(!loss->legend->visible());
    QVERIFY(!loss->axisRect()->insetLayout()->elements(false).contains(loss->legend));
    RunLegend* legend = w.chartPanel()->runLegend();
    QCOMPARE(legend->entryCount(), 1);
    QVERIFY(legend->text().endsWith("&nbsp;a"));
    QVERIFY(legend->text().contains(QColor(0, 0, 0).name()));  // fp32's colour
    // Hiding the run empties it.
    w.setRunVisible(0, false);
    w.chartPanel()->refreshNow();
    QCOMPARE(legend->entryCount(), 0);
    // A chart on its own (the exported PNGs) keeps its legend, under the plot.
    LossChart alone;
    alone.resize(600, 400);
    alone.showRuns(w.store()->records());
    alone.replot();
    QVERIFY(alone.legend->visible());
    QVERIFY(alone.axisRect()->outerRect().width() > 500);  // the legend never narrows the plot
    QVERIFY(alone.legend->outerRect().top() >= alone.axisRect()->outerRect().bottom());
  }

  void compareAllModesReusesIdenticalRuns() {
    QTemporaryDir workspace;
    QString fp32Folder;
    {
      MainWindow w(workspace.path());
      QVERIFY(plab::test::waitForRuns(w));
      QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
      plab::RunConfig c = w.currentConfig();
      c.mode = plab::OptimizerMode::Fp32AdamW;
      c.name = "earlier-fp32";
      plab::test::writeStoredRun(path(workspace.path()) / "earlier-fp32", c, 2);
    }
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QTRY_VERIFY_WITH_TIMEOUT(w.modelPicker()->hasOverview(), 60000);
    QCOMPARE(w.store()->size(), 1);
    w.setRunVisible(0, false);
    QCOMPARE(w.findIdenticalRun(w.store()->record(0).config), 0);
    plab::RunConfig other = w.store()->record(0).config;
    other.seed += 1;
    QCOMPARE(w.findIdenticalRun(other), -1);

    w.queueComparison(false);
    const int modes = static_cast<int>(plab::allOptimizerModes().size());
    QCOMPARE(w.store()->size(), modes);  // fp32 reused, the others queued
    QVERIFY(w.store()->isVisible(0));     // and shown again
    for (int run = 1; run < modes; ++run)
      QVERIFY(w.store()->record(run).config.mode != plab::OptimizerMode::Fp32AdamW);
    w.stopRuns();
    QTRY_VERIFY_WITH_TIMEOUT(!w.controller()->isBusy(), kRunTimeoutMs);
  }

  void followTurnsOffWhenTheUserZooms() {
    QTemporaryDir workspace;
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY(w.chartPanel()->followCheckBox()->isChecked());
    LossChart* loss = w.chartPanel()->lossChart();
    emit loss->mouseWheel(nullptr);
    QVERIFY(!w.chartPanel()->followCheckBox()->isChecked());
    QVERIFY(!loss->following());
    w.chartPanel()->followCheckBox()->setChecked(true);
    QVERIFY(loss->following());
  }

  // Issue 19.1: a run file of 200 000 '[' crashed the app at every start, a
  // FIFO blocked it forever, a link to /dev/zero or a 300 MB file ate the
  // memory, a torn first metrics line lost the run. Each bad run is now a
  // row "unreadable: <file> <reason>"; nothing in the folders is written.
  void hostileRunFilesShowAsUnreadableAtStart() {
    QTemporaryDir workspace;
    const fs::path ws = path(workspace.path());
    const auto run = [&](const char* name) {
      return plab::test::writeStoredRun(ws / name, namedConfig(name, plab::OptimizerMode::Bf16Plain), 3);
    };
    plab::test::writeDeepNesting(run("deep-config") / "config.json");
    plab::test::makeFifo(run("fifo-summary") / "summary.json");
    plab::test::linkToDevZero(run("zero-info") / "run_info.json");
    plab::test::writeSparse300MB(run("huge-config") / "config.json");
    plab::test::makeFifo(run("fifo-metrics") / "metrics.jsonl");
    const fs::path torn = run("torn-first");
    const std::string lines = [&] {
      std::ifstream in(torn / "metrics.jsonl");
      return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    std::ofstream(torn / "metrics.jsonl", std::ios::trunc) << "{\"step\": 1, \"lo\n" << lines.substr(lines.find('\n') + 1);
    const fs::path named = run("bad-display");
    plab::test::writeDeepNesting(named / "display.json");
    plab::test::linkToDevZero(run("zero-display") / "display.json");
    plab::test::makeFifo(ws / "linked-runs.json");

    QElapsedTimer timer;
    timer.start();
    MainWindow w(workspace.path());
    QVERIFY(plab::test::waitForRuns(w));
    QVERIFY2(timer.elapsed() < 20000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(w.store()->size(), 8);
    const auto row = [&](const char* name) { return w.store()->findFolder(QDir::cleanPath(workspace.path() + "/" + name)); };
    const auto status = [&](const char* name) {
      return w.comparisonTable()->cellText(row(name), ComparisonTable::StatusColumn);
    };
    const struct {
      const char* run;
      const char* text;
    } unreadable[] = {{"deep-config", "unreadable: config.json has JSON nested deeper than 64 levels"},
                      {"fifo-summary", "unreadable: summary.json is a FIFO (named pipe), not a regular file"},
                      {"zero-info", "unreadable: run_info.json is a device, not a regular file"},
                      {"huge-config", "unreadable: config.json is 300 MiB, over the 16 MiB limit"},
                      {"fifo-metrics", "unreadable: metrics.jsonl is a FIFO (named pipe), not a regular file"}};
    for (const auto& u : unreadable) {
      QVERIFY2(row(u.run) >= 0, u.run);
      QCOMPARE(w.store()->state(row(u.run)), RunState::Unreadable);
      QVERIFY2(status(u.run).startsWith(u.text), qPrintable(status(u.run)));
      QCOMPARE(w.comparisonTable()->cellText(row(u.run), ComparisonTable::ModeColumn), QString("–"));
    }
    QCOMPARE(w.store()->state(row("torn-first")), RunState::Completed);
    QCOMPARE(w.store()->record(row("torn-first")).steps.size(), size_t(2));
    QCOMPARE(status("torn-first"), QString("completed (1 line skipped)"));
    QCOMPARE(w.store()->state(row("bad-display")), RunState::Completed);
    QCOMPARE(w.store()->state(row("zero-display")), RunState::Completed);
    QCOMPARE(int(w.store()->visibleRuns().size()), 3);  // never an unreadable run in charts or exports
    w.chartPanel()->refreshNow();
    // Nothing was written over: the bad files are still what they were.
    w.renameRun(row("deep-config"), "renamed");
    QVERIFY(!fs::exists(ws / "deep-config" / "display.json"));
    QCOMPARE(fs::file_size(named / "display.json"), uintmax_t(400000));
    QVERIFY(fs::is_fifo(ws / "linked-runs.json"));
    QVERIFY(fs::is_fifo(ws / "fifo-summary" / "summary.json"));
    QVERIFY(fs::is_symlink(ws / "zero-info" / "run_info.json"));
    Workspace links(workspace.path());  // the unreadable list is not written over by a new link
    QVERIFY_THROWS_EXCEPTION(plab::IoError, links.link(QDir::tempPath()));
    QVERIFY(fs::is_fifo(ws / "linked-runs.json"));
    QCOMPARE(w.store()->size(), 8);
  }
};

PLAB_TEST_MAIN(TestWorkspace)
}  // namespace test_workspace
#include "test_workspace.moc"
