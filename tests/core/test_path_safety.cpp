// Every read and write stays inside its folder: Hub revisions and repo ids
// are validated like git and huggingface_hub do, run names cannot move the
// report folder, and a shard index cannot name a file elsewhere or a FIFO.
#include <QtTest/QtTest>

#include <sys/stat.h>
#include <torch/torch.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <thread>

#include "hub/hf_cache.h"
#include "hub/hub_download.h"
#include "hub/hub_names.h"
#include "model/safetensors.h"
#include "support/cli_process.h"
#include "support/test_registry.h"
#include "train/run_config.h"
#include "util/errors.h"

namespace test_path_safety {

using namespace plab;
namespace fs = std::filesystem;

namespace {

bool acceptedRepoId(const std::string& id) {
  try {
    validateRepoId(id);
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

bool acceptedRevision(const std::string& r) {
  try {
    validateRevision(r);
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

void writeIndex(const fs::path& dir, const std::string& shard) {
  std::ofstream(dir / "model.safetensors.index.json")
      << nlohmann::json{{"weight_map", {{"w", shard}}}}.dump();
}

// Runs f on its own thread: a FIFO opened for reading used to block forever.
std::string errorWithin(const std::function<void()>& f, std::chrono::seconds limit) {
  auto result = std::make_shared<std::promise<std::string>>();
  std::future<std::string> done = result->get_future();
  std::thread([f, result] {
    try {
      f();
      result->set_value("");
    } catch (const std::exception& e) {
      result->set_value(e.what());
    }
  }).detach();
  if (done.wait_for(limit) != std::future_status::ready) return "TIMEOUT";
  return done.get();
}

}  // namespace

class TestPathSafety : public QObject {
  Q_OBJECT
 private slots:
  void repoIdsLikeHuggingfaceHub() {
    for (const char* ok : {"gpt2", "openai-community/gpt2", "Qwen/Qwen2.5-0.5B", "a_b/c.d", "org/x_1"})
      QVERIFY2(acceptedRepoId(ok), ok);
    for (const char* bad : {"", "..", "../x", "org/..", "org/../x", "/abs/x", "a/b/c", "a--b/c", "org/x.git",
                            "-org/x", "org/x.", "org/ x", "org/x\n", "org\\x"})
      QVERIFY2(!acceptedRepoId(bad), bad);
    QVERIFY(!acceptedRepoId(std::string(97, 'a')));
  }

  void revisionsLikeGit() {
    for (const char* ok : {"main", "v1.0", "refs/pr/1", "0123456789abcdef0123456789abcdef01234567", "my-branch"})
      QVERIFY2(acceptedRevision(ok), ok);
    for (const char* bad : {"", "..", "../../../../x", "a/../b", "/abs", "a//b", "a/", ".hidden", "a/.b", "x.lock",
                            "a b", "a:b", "a~1", "a^", "a?", "a*", "a[", "a\\b", "@", "a@{1}", "a\x01"})
      QVERIFY2(!acceptedRevision(bad), bad);
  }

  // Used to write refs/<revision> and snapshot links outside HF_HOME.
  void downloadRefusesATraversingRevision() {
    QTemporaryDir home;
    qputenv("HF_HOME", home.path().toUtf8());
    qunsetenv("HF_HUB_CACHE");
    DownloadOptions options;
    options.endpoint = "http://127.0.0.1:9";  // never reached
    options.revision = "../../../../x";
    QVERIFY_THROWS_EXCEPTION(ConfigError, downloadModel("org/name", options));
    options.revision = "main";
    QVERIFY_THROWS_EXCEPTION(ConfigError, downloadModel("../../x", options));
    QVERIFY_THROWS_EXCEPTION(ConfigError, findCachedSnapshot("org/name", "../../x"));
  }

  void runConfigRefusesTraversingHubNames() {
    nlohmann::json j = defaultRunConfig().toJson();
    j["model"] = {{"source", "hub"}, {"path", "org/name"}, {"revision", "../../../../x"}};
    QVERIFY_THROWS_EXCEPTION(ConfigError, RunConfig::fromJson(j));
    j["model"] = {{"source", "hub"}, {"path", "../../x"}, {"revision", "main"}};
    QVERIFY_THROWS_EXCEPTION(ConfigError, RunConfig::fromJson(j));
  }

  // ../outside.safetensors and /etc/passwd used to be read.
  void shardIndexCannotLeaveTheModelFolder() {
    QTemporaryDir tmp;
    const fs::path root = tmp.path().toStdString(), model = root / "model";
    fs::create_directories(model);
    writeSafetensors(root / "outside.safetensors", {{"w", torch::ones({2})}});
    const std::vector<std::string> shards = {"../outside.safetensors", (root / "outside.safetensors").string(),
                                             "/etc/passwd"};
    for (const std::string& shard : shards) {
      writeIndex(model, shard);
      try {
        SafetensorsCheckpoint ckpt(model);
        QFAIL(qPrintable("read " + QString::fromStdString(shard)));
      } catch (const SafetensorsError& e) {
        QVERIFY2(std::string(e.what()).find("not a file name") != std::string::npos, e.what());
      }
    }
  }

  void fifoShardFailsInsteadOfHanging() {
    QTemporaryDir tmp;
    const fs::path model = tmp.path().toStdString();
    QCOMPARE(::mkfifo((model / "shard.safetensors").c_str(), 0600), 0);
    writeIndex(model, "shard.safetensors");
    const std::string viaIndex = errorWithin([&] { SafetensorsCheckpoint ckpt(model); }, std::chrono::seconds(10));
    QVERIFY2(viaIndex.find("not a regular file") != std::string::npos, viaIndex.c_str());
    fs::remove(model / "model.safetensors.index.json");
    QCOMPARE(::mkfifo((model / "model.safetensors").c_str(), 0600), 0);
    const std::string single = errorWithin([&] { SafetensorsCheckpoint ckpt(model); }, std::chrono::seconds(10));
    QVERIFY2(single.find("not a regular file") != std::string::npos, single.c_str());
  }

  // A run named ../../x (or /abs/x) put its default report folder outside
  // ./runs.
  void runNameCannotMoveTheReportFolder() {
    if (plab::test::cliPath().isEmpty()) QSKIP("PLAB_CLI not set (run through ctest)");
    QTemporaryDir tmp;
    const fs::path work = fs::path(tmp.path().toStdString()) / "a" / "b";
    const fs::path workspace = work / "runs";  // runs without --out go to the workspace
    fs::create_directories(work);
    std::ofstream(work / "run.json") << R"({"name": "../../escaped", "steps": 1})";
    const QByteArray saved = qgetenv("PLAB_WORKSPACE");
    qputenv("PLAB_WORKSPACE", QByteArray::fromStdString(workspace.string()));
    const plab::test::CliOutcome o =
        plab::test::runCli({"run", "run.json", "--no-pdf"}, QString::fromStdString(work.string()));
    qputenv("PLAB_WORKSPACE", saved);
    QVERIFY2(o.exitCode == 0, o.describe());
    int inside = 0;
    for (const auto& e : fs::directory_iterator(workspace)) inside += fs::exists(e.path() / "summary.json");
    QCOMPARE(inside, 1);
    // runs/../../escaped-<time> would land in a/
    for (const auto& e : fs::directory_iterator(work.parent_path()))
      QVERIFY2(e.path().filename().string().find("escaped") == std::string::npos, e.path().c_str());
  }
};

PLAB_TEST_GUILESS_MAIN(TestPathSafety)
}  // namespace test_path_safety
#include "test_path_safety.moc"
