// Run folders are never overwritten without a word: a non-empty --out is
// refused unless --overwrite, a folder being written is locked, and default
// folder names are unique per run.
#include <QtTest/QtTest>
#include <unistd.h>

#include <fstream>
#include <set>

#include "support/cli_process.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "util/errors.h"
#include "util/run_folder.h"
#include "util/tool_files.h"
#include "util/workspace_folder.h"

namespace test_run_folder {

using namespace plab;
using plab::test::CliOutcome;
using plab::test::runCli;
namespace fs = std::filesystem;

namespace {
QString str(const fs::path& p) { return QString::fromStdString(p.string()); }

void write(const fs::path& file, const std::string& text = "x") {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::string read(const fs::path& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every regular file under dir (not through links), relative to it.
std::set<std::string> filesUnder(const fs::path& dir) {
  std::set<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it)
    if (it->is_regular_file() || it->is_symlink()) out.insert(it->path().lexically_relative(dir).string());
  return out;
}

// Sorted and joined, so that a failed comparison shows the names.
QString listed(const std::set<std::string>& names) {
  QStringList out;
  for (const std::string& n : names) out << QString::fromStdString(n);
  return out.join(", ");
}

// What the issue's user had: a folder no run wrote, holding files with the
// names a run writes, and one other.
void writeUsersOwnFolder(const fs::path& dir) {
  for (const char* f : {"config.json", "summary.csv", "display.json", "report.html", "runs/a/config.json",
                        "runs/a/metrics.jsonl", "charts/loss.svg", "checkpoint-final/model.safetensors", "notes.txt"})
    write(dir / f, std::string("mine: ") + f);
}

// The pid of no process: above any pid_max (2^22).
constexpr const char* kDeadPid = "999999999";

const char* const kToolRunInfo = R"({"run_name": "old", "optimizer_mode": "bf16", "parameter_count": 10})";
}  // namespace

class TestRunFolder : public QObject {
  Q_OBJECT
 private slots:
  void nonEmptyFolderIsRefusedUnlessOverwrite() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "run";
    { RunFolderLock first(dir, false); }
    std::ofstream(dir / "metrics.jsonl") << "{\"step\": 1}\n";
    std::ofstream(dir / "notes.txt") << "mine";
    std::ofstream(dir / ".tokens-123-0.tmp") << "left by a crash before the token file was unlinked";
    try {
      RunFolderLock second(dir, false);
      QFAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      QVERIFY2(std::string(e.what()).find("--overwrite") != std::string::npos, e.what());
    }
    { RunFolderLock replaced(dir, true); }
    QVERIFY(!fs::exists(dir / "metrics.jsonl"));  // what a run wrote goes
    QVERIFY(!fs::exists(dir / ".tokens-123-0.tmp"));
    QVERIFY(fs::exists(dir / "notes.txt"));       // what it did not write stays
  }

  // Issue 19.4: --overwrite removed config.json, summary.csv, display.json,
  // report.html, runs/, charts/ and checkpoint-final/ of a folder no run
  // wrote; only notes.txt survived.
  void overwriteRefusesAFolderTheToolDidNotWrite() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "mine";
    writeUsersOwnFolder(dir);
    const std::set<std::string> before = filesUnder(dir);
    try {
      RunFolderLock lock(dir, true);
      QFAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      const std::string m = e.what();
      QVERIFY2(m.find("not made by Precision Lab") != std::string::npos && m.find(dir.string()) != std::string::npos &&
                   m.find("nothing in it was removed") != std::string::npos,
               e.what());
    }
    QCOMPARE(listed(filesUnder(dir)), listed(before));  // not even a lock file left behind
    QCOMPARE(read(dir / "runs/a/metrics.jsonl"), std::string("mine: runs/a/metrics.jsonl"));
  }

  void cliOverwriteRefusesAFolderTheToolDidNotWrite() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "mine";
    writeUsersOwnFolder(dir);
    const std::set<std::string> before = filesUnder(dir);
    const CliOutcome o = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "1", "--no-pdf", "--out",
                                 str(dir), "--overwrite"});
    QVERIFY2(o.exitCode == 2 && o.err.contains("not made by Precision Lab") && o.err.contains(str(dir)),
             o.describe());
    QCOMPARE(listed(filesUnder(dir)), listed(before));
  }

  // In a folder the tool marked: only the names it writes go, links are
  // removed themselves and never followed, everything else stays.
  void overwriteRemovesOnlyWhatTheToolWrites() {
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    const fs::path dir = root / "run", outside = root / "outside";
    { RunFolderLock first(dir, false); }
    QVERIFY(fs::is_regular_file(dir / kRunFolderMarkerName));
    for (const char* f : {"config.json", "run_info.json", "summary.json", "summary.csv", "metrics.jsonl", "metrics.csv",
                          "layers.csv", "report.html", "report.pdf", "display.json", "charts/loss.svg",
                          "charts/loss.png", "checkpoint-3/model.safetensors", "checkpoint-3/optimizer.safetensors",
                          "checkpoint-3/trainer_state.json", "checkpoint-3/config.json", "checkpoint-3/tokenizer.json",
                          "checkpoint-3/tokenizer_config.json", "checkpoint-3/special_tokens_map.json",
                          "checkpoint-3/vocab.json", "checkpoint-3/merges.txt", "checkpoint-3/generation_config.json",
                          "runs/a/metrics.jsonl",
                          "runs/a/charts/memory.svg", ".summary.json.tmp-12-0", "checkpoint-3/model.safetensors.tmp.77"})
      write(dir / f);
    for (const char* f : {"notes.txt", "charts/my-notes.txt", "checkpoint-final/model.safetensors",
                          "checkpoint-3/README.md", "runs/a/notes.md", "runs/readme.txt", "summary.json.bak"})
      write(dir / f, "mine");
    // Links at names the tool writes, to files and folders of someone else's.
    write(outside / "victim.json", "keep");
    write(outside / "dir/one.svg", "keep");
    write(outside / "dir/two.safetensors", "keep");
    fs::create_symlink(outside / "victim.json", dir / "layers.csv.link-target-is-not-a-tool-name");
    fs::create_symlink(outside / "dir", dir / "runs/b");
    fs::create_symlink(outside / "dir", dir / "checkpoint-9");
    fs::remove(dir / "metrics.csv");
    fs::create_symlink(outside / "victim.json", dir / "metrics.csv");
    { RunFolderLock replaced(dir, true); }
    const std::set<std::string> expected = {kRunFolderMarkerName, kRunFolderLockName, "notes.txt",
                                            "charts/my-notes.txt", "checkpoint-final/model.safetensors",
                                            "checkpoint-3/README.md", "runs/a/notes.md", "runs/readme.txt",
                                            "summary.json.bak", "layers.csv.link-target-is-not-a-tool-name",
                                            "runs/b"};
    QCOMPARE(listed(filesUnder(dir)), listed(expected));
    QCOMPARE(listed(filesUnder(outside)), listed((std::set<std::string>{"victim.json", "dir/one.svg", "dir/two.safetensors"})));
    QVERIFY(!fs::exists(fs::symlink_status(dir / "checkpoint-9")));  // the link went, its target stayed
    QCOMPARE(read(outside / "victim.json"), std::string("keep"));
  }

  // Before the marker: a folder counts as a run's when its run_info.json is
  // one (a regular file, not a link), or every runs/<run>/ of a sweep is.
  void foldersFromBeforeTheMarker() {
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    write(root / "old/run_info.json", kToolRunInfo);
    write(root / "old/metrics.jsonl");
    write(root / "old/notes.txt");
    QCOMPARE(runFolderOriginProblem(root / "old"), std::string());
    { RunFolderLock lock(root / "old", true); }
    QVERIFY(!fs::exists(root / "old/metrics.jsonl") && fs::exists(root / "old/notes.txt"));
    QVERIFY(fs::is_regular_file(root / "old" / kRunFolderMarkerName));  // marked from now on

    write(root / "sweep/runs/a/run_info.json", kToolRunInfo);
    write(root / "sweep/runs/b/run_info.json", kToolRunInfo);
    write(root / "sweep/summary.csv");
    QCOMPARE(runFolderOriginProblem(root / "sweep"), std::string());
    QCOMPARE(runFolderOriginProblem(root / "sweep/runs/a"), std::string());
    write(root / "sweep/runs/c/notes.txt");  // one folder that is not a run: the sweep is not recognised
    QVERIFY(!runFolderOriginProblem(root / "sweep").empty());

    write(root / "other/run_info.json", R"({"run_name": "not ours"})");
    write(root / "other/metrics.jsonl");
    QVERIFY(!runFolderOriginProblem(root / "other").empty());
    QVERIFY_THROWS_EXCEPTION(ConfigError, RunFolderLock(root / "other", true));
    QVERIFY(fs::exists(root / "other/metrics.jsonl"));

    // A marker or run_info.json that is a link, or a folder that is one, does not count.
    write(root / "real/run_info.json", kToolRunInfo);
    write(root / "linked/metrics.jsonl");
    fs::create_symlink(root / "real/run_info.json", root / "linked/run_info.json");
    QVERIFY(!runFolderOriginProblem(root / "linked").empty());
    { RunFolderLock mark(root / "marked", false); }
    write(root / "fake/metrics.jsonl");
    fs::create_symlink(root / "marked" / kRunFolderMarkerName, root / "fake" / kRunFolderMarkerName);
    QVERIFY(!runFolderOriginProblem(root / "fake").empty());
    fs::create_symlink(root / "marked", root / "link-to-marked");
    QVERIFY2(runFolderOriginProblem(root / "link-to-marked").find("symbolic link") != std::string::npos,
             runFolderOriginProblem(root / "link-to-marked").c_str());
    // A marker that says another tool.
    write(root / "foreign/metrics.jsonl");
    write(root / "foreign" / kRunFolderMarkerName, R"({"tool": "something else"})");
    QVERIFY(!runFolderOriginProblem(root / "foreign").empty());
  }

  void newFoldersAreMarked() {
    QTemporaryDir tmp;
    const fs::path dir = createUniqueRunFolder(tmp.path().toStdString(), "r");
    QVERIFY(fs::is_regular_file(dir / kRunFolderMarkerName));
    QCOMPARE(runFolderOriginProblem(dir), std::string());
    QVERIFY(read(dir / kRunFolderMarkerName).find("\"tool\": \"Precision Lab\"") != std::string::npos);
  }

  // The app's delete without a trash: only the tool's files go, never through a link.
  void deleteRunFolderKeepsWhatIsNotTheTools() {
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    const fs::path a = createUniqueRunFolder(root, "a"), b = createUniqueRunFolder(root, "b");
    for (const fs::path& d : {a, b})
      for (const char* f : {"config.json", "metrics.jsonl", "charts/loss.svg", "checkpoint-2/model.safetensors"})
        write(d / f);
    write(b / "notes.txt", "mine");
    write(root / "outside/keep.txt", "keep");
    fs::create_symlink(root / "outside", b / "charts/more");
    QVERIFY(deleteRunFolder(a).empty());
    QVERIFY(!fs::exists(a));
    const std::vector<fs::path> kept = deleteRunFolder(b);
    QCOMPARE(kept.size(), size_t(2));
    QCOMPARE(listed(filesUnder(b)), listed((std::set<std::string>{"notes.txt", "charts/more"})));
    QCOMPARE(read(root / "outside/keep.txt"), std::string("keep"));
    writeUsersOwnFolder(root / "mine");
    const std::set<std::string> before = filesUnder(root / "mine");
    QVERIFY_THROWS_EXCEPTION(ConfigError, deleteRunFolder(root / "mine"));
    QCOMPARE(listed(filesUnder(root / "mine")), listed(before));
    const fs::path held = createUniqueRunFolder(root, "held");
    RunFolderLock lock(held, false);
    QVERIFY_THROWS_EXCEPTION(ConfigError, deleteRunFolder(held));  // a run is writing into it
  }

  // Issue 19.7: a kill during a checkpoint left model.safetensors.tmp.<pid>.
  void temporariesOfAKilledRunAreCleaned() {
    QTemporaryDir tmp;
    const fs::path dir = createUniqueRunFolder(tmp.path().toStdString(), "killed");
    const std::string dead = kDeadPid, alive = std::to_string(::getpid());
    write(dir / "metrics.jsonl");
    write(dir / ("checkpoint-4/model.safetensors.tmp." + dead));
    write(dir / "checkpoint-4/config.json");
    write(dir / ("checkpoint-8/model.safetensors.tmp." + dead));  // killed before anything else landed
    write(dir / ("checkpoint-4/optimizer.safetensors.tmp." + alive));  // this process: maybe being written
    write(dir / (".summary.json.tmp-" + dead + "-3"));
    write(dir / (".tokens-" + dead + "-0.tmp"));
    write(dir / (".qt-report-tmp-" + dead + "/charts/loss.png"));
    write(dir / ("runs/a/checkpoint-2/trainer_state.json.tmp." + dead));
    write(dir / ("notes.tmp." + dead), "mine: not a name the tool writes");
    QCOMPARE(removeLeftoversOfKilledRuns(dir), 6);
    QCOMPARE(listed(filesUnder(dir)), listed((std::set<std::string>{kRunFolderMarkerName, "metrics.jsonl", "checkpoint-4/config.json",
                                                     "checkpoint-4/optimizer.safetensors.tmp." + alive,
                                                     "notes.tmp." + dead})));
    QVERIFY(!fs::exists(dir / "checkpoint-8"));
    // Not in a folder of someone else's.
    write(fs::path(tmp.path().toStdString()) / "mine/checkpoint-1" / ("model.safetensors.tmp." + dead));
    QCOMPARE(removeLeftoversOfKilledRuns(fs::path(tmp.path().toStdString()) / "mine"), 0);
    // The next write of a checkpoint file clears its own stale temporaries
    // (writeSafetensors and the checkpoint's config.json call this first).
    write(dir / "checkpoint-4" / ("model.safetensors.tmp." + dead));
    write(dir / "checkpoint-4" / ("model.safetensors.tmp." + alive));
    write(dir / "checkpoint-4" / ("optimizer.safetensors.tmp." + dead));
    removeStaleTemporariesOf(dir / "checkpoint-4/model.safetensors");
    QVERIFY(!fs::exists(dir / "checkpoint-4" / ("model.safetensors.tmp." + dead)));
    QVERIFY(fs::exists(dir / "checkpoint-4" / ("model.safetensors.tmp." + alive)));
    QVERIFY(fs::exists(dir / "checkpoint-4" / ("optimizer.safetensors.tmp." + dead)));  // another file's
  }

  // Issue 19.7, through the CLI: resuming from a run that was killed while
  // writing its next checkpoint removes the half-written files it left.
  void cliResumeRemovesAKilledCheckpointsTemporaries() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString();
    // A constant schedule: raising the steps of a cosine one would change its learning rates (refused).
    write(root / "run.json", R"({"name": "k", "steps": 2, "seq_len": 16, "batch_size": 2, "eval_batches": 1,
                                 "checkpoint_every": 2, "mode": "bf16", "threads": 1, "lr_schedule": "constant",
                                 "warmup_steps": 0})");
    const CliOutcome first = runCli({"run", str(root / "run.json"), "--out", str(root / "a"), "--no-pdf"});
    QVERIFY2(first.exitCode == 0, first.describe());
    const std::string dead = kDeadPid;
    write(root / "a" / ("checkpoint-4/model.safetensors.tmp." + dead), std::string(4096, 'w'));
    write(root / "a" / ("checkpoint-2/optimizer.safetensors.tmp." + dead));
    const CliOutcome resumed = runCli({"run", "--resume", str(root / "a" / "checkpoint-2"), "--steps", "3", "--out",
                                       str(root / "b"), "--no-pdf"});
    QVERIFY2(resumed.exitCode == 0, resumed.describe());
    QVERIFY(!fs::exists(root / "a" / "checkpoint-4"));
    QVERIFY(!fs::exists(root / "a" / ("checkpoint-2/optimizer.safetensors.tmp." + dead)));
    QVERIFY(fs::exists(root / "a" / "checkpoint-2/model.safetensors"));
    // Resuming into the checkpoint's own folder with --overwrite would clear
    // the checkpoint before reading it (the run failed, and the first run's
    // results were gone): refused, nothing removed.
    const std::set<std::string> before = filesUnder(root / "a");
    const CliOutcome over = runCli({"run", "--resume", str(root / "a" / "checkpoint-2/"), "--steps", "3", "--out",
                                    str(root / "a" / "." ), "--overwrite", "--no-pdf"});
    QVERIFY2(over.exitCode == 2 && over.err.contains("which this run reads"), over.describe());
    QCOMPARE(listed(filesUnder(root / "a")), listed(before));
  }

  void lockedFolderIsRefused() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    RunFolderLock held(dir, false);
    try {
      RunFolderLock other(dir, true);
      QFAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      QVERIFY2(std::string(e.what()).find("in use") != std::string::npos, e.what());
    }
  }

  void uniqueFolderNames() {
    QTemporaryDir tmp;
    const fs::path parent = tmp.path().toStdString();
    std::set<fs::path> made;
    for (int i = 0; i < 5; ++i) made.insert(createUniqueRunFolder(parent, "same"));
    QCOMPARE(made.size(), size_t(5));
  }

  // Two runs into one --out both exited 0, the second silently replacing the
  // first one's results.
  void cliRefusesASecondRunIntoTheSameFolder() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path out = fs::path(tmp.path().toStdString()) / "run";
    const QStringList args = {"run", "--default", "--mode", "bf16-kahan", "--steps", "2", "--no-pdf", "--out", str(out)};
    const CliOutcome first = runCli(args);
    QVERIFY2(first.exitCode == 0, first.describe());
    const auto before = fs::last_write_time(out / "metrics.jsonl");
    const CliOutcome second = runCli(args);
    QVERIFY2(second.exitCode == 2 && second.err.contains("--overwrite"), second.describe());
    QVERIFY(fs::last_write_time(out / "metrics.jsonl") == before);
    QCOMPARE(readMetricsJsonl(out / "metrics.jsonl").size(), size_t(2));
    const CliOutcome replaced = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "3", "--no-pdf", "--out", str(out), "--overwrite"});
    QVERIFY2(replaced.exitCode == 0, replaced.describe());
    QCOMPARE(readMetricsJsonl(out / "metrics.jsonl").size(), size_t(3));
  }

  void cliRefusesALockedFolder() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path out = tmp.path().toStdString();
    RunFolderLock held(out, false);  // as a run in another process would
    const CliOutcome o = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "1", "--no-pdf", "--overwrite", "--out", str(out)});
    QVERIFY2(o.exitCode == 2 && o.err.contains("in use"), o.describe());
  }

  // Without --out, every CLI run gets a new folder in the workspace the app lists.
  void cliDefaultFoldersAreUniqueInTheWorkspace() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const QByteArray saved = qgetenv("PLAB_WORKSPACE");
    const fs::path workspace = fs::path(tmp.path().toStdString()) / "ws";
    qputenv("PLAB_WORKSPACE", QByteArray::fromStdString(workspace.string()));
    for (int i = 0; i < 2; ++i) {
      const CliOutcome o = runCli({"run", "--default", "--mode", "bf16-kahan", "--steps", "1", "--no-pdf"}, tmp.path());
      QVERIFY2(o.exitCode == 0, o.describe());
    }
    qputenv("PLAB_WORKSPACE", saved);
    int folders = 0;
    for (const auto& e : fs::directory_iterator(workspace)) {
      QVERIFY(fs::exists(e.path() / "metrics.jsonl"));
      ++folders;
    }
    QCOMPARE(folders, 2);
    QVERIFY(!fs::exists(fs::path(tmp.path().toStdString()) / "runs"));
  }

  // The CLI's default workspace is the app's: the same folder under Linux's data location.
  void defaultWorkspaceFollowsXdg() {
    const QByteArray savedWorkspace = qgetenv("PLAB_WORKSPACE"), savedXdg = qgetenv("XDG_DATA_HOME");
    qunsetenv("PLAB_WORKSPACE");
    qputenv("XDG_DATA_HOME", "/data/x");
    QCOMPARE(QString::fromStdString(defaultWorkspaceFolder().string()),
             QString("/data/x/Precision Lab/Precision Lab/workspace"));
    qputenv("PLAB_WORKSPACE", "/elsewhere");
    QCOMPARE(QString::fromStdString(defaultWorkspaceFolder().string()), QString("/elsewhere"));
    qputenv("PLAB_WORKSPACE", savedWorkspace);
    qputenv("XDG_DATA_HOME", savedXdg);
    if (savedXdg.isEmpty()) qunsetenv("XDG_DATA_HOME");
  }
};

PLAB_TEST_GUILESS_MAIN(TestRunFolder)
}  // namespace test_run_folder
#include "test_run_folder.moc"
