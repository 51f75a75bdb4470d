// Hub download into a huggingface_hub-style cache, against a local HTTP
// server (no network): cache layout, sharded checkpoints, resume with
// Range, sha256 checks, HTTP error messages, auth header, cancel.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "hub/hf_cache.h"
#include "hub/hub_download.h"
#include "hub/sha256.h"
#include "support/error_capture.h"
#include "support/local_http_server.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_hub {

using namespace plab;
using plab::test::LocalHttpServer;
using plab::test::ServedFile;
namespace fs = std::filesystem;

using plab::test::errorMessageOf;
using plab::test::mentions;

namespace {

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kRepo = "org/tiny";

std::string randomBytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xFF);
  return s;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

std::string path(const std::string& file, const std::string& repo = kRepo) { return "/" + repo + "/resolve/main/" + file; }

// A served file whose ETag is its sha256, as the Hub does for LFS files.
ServedFile lfsFile(const std::string& body) {
  ServedFile f;
  f.body = body;
  f.headers = {{"X-Repo-Commit", kCommit}, {"X-Linked-Etag", "\"" + sha256Hex(body) + "\""},
               {"ETag", "\"" + sha256Hex(body) + "\""}};
  return f;
}

// A small git file: ETag is an opaque (non-sha256) id.
ServedFile gitFile(const std::string& body, const std::string& etag) {
  ServedFile f;
  f.body = body;
  f.headers = {{"X-Repo-Commit", kCommit}, {"ETag", "W/\"" + etag + "\""}};
  return f;
}

}  // namespace

class TestHub : public QObject {
  Q_OBJECT

  std::unique_ptr<QTemporaryDir> home_;
  std::unique_ptr<LocalHttpServer> server_;
  const std::string config_ = R"({"model_type": "gpt2", "n_layer": 2})";
  const std::string tokenizer_ = R"({"model": {"type": "BPE"}})";
  const std::string weights_ = randomBytes(200000, 1);

  fs::path repoDir() const { return fs::path(home_->path().toStdString()) / "hub" / "models--org--tiny"; }

  void serveBasicRepo() {
    server_->setFile(path("config.json"), gitFile(config_, "c0ffee01"));
    server_->setFile(path("tokenizer.json"), gitFile(tokenizer_, "70ce4e11"));
    server_->setFile(path("model.safetensors"), lfsFile(weights_));
  }

  std::vector<test::LoggedRequest> requestsFor(const std::string& file, const std::string& method) const {
    std::vector<test::LoggedRequest> out;
    for (const auto& r : server_->requests())
      if (r.method == method && r.path == path(file)) out.push_back(r);
    return out;
  }

 private slots:
  void init() {
    home_ = std::make_unique<QTemporaryDir>();
    server_ = std::make_unique<LocalHttpServer>();
    qputenv("HF_HOME", home_->path().toUtf8());
    qunsetenv("HF_HUB_CACHE");
    qunsetenv("HUGGINGFACE_HUB_CACHE");
    qunsetenv("HF_TOKEN");
    qputenv("HF_ENDPOINT", QByteArray::fromStdString(server_->url()));
  }
  void cleanup() {
    server_.reset();
    home_.reset();
  }

  void endpointAndCachePaths() {
    DownloadOptions o;
    QCOMPARE(QString::fromStdString(hubEndpoint(o)), QString::fromStdString(server_->url()));
    o.endpoint = "http://mirror.example/hf//";
    QCOMPARE(QString::fromStdString(hubEndpoint(o)), QString("http://mirror.example/hf"));
    qunsetenv("HF_ENDPOINT");
    QCOMPARE(QString::fromStdString(hubEndpoint(DownloadOptions{})), QString("https://huggingface.co"));
    QVERIFY(hfHubCache() == fs::path(home_->path().toStdString()) / "hub");
    QVERIFY(repoCacheDir("meta-llama/Llama-3.2-1B").filename() == "models--meta-llama--Llama-3.2-1B");
    qputenv("HF_HUB_CACHE", "/elsewhere/cache");
    QVERIFY(hfHubCache() == fs::path("/elsewhere/cache"));
  }

  void downloadLaysOutTheCache() {
    serveBasicRepo();
    std::vector<DownloadProgress> seen;
    DownloadOptions o;
    o.progress = [&](const DownloadProgress& p) {
      seen.push_back(p);
      return true;
    };
    const fs::path snapshot = downloadModel(kRepo, o);
    QVERIFY(snapshot == repoDir() / "snapshots" / kCommit);
    QCOMPARE(QString::fromStdString(readFile(repoDir() / "refs" / "main")), QString::fromStdString(kCommit));

    const std::string sha = sha256Hex(weights_);
    QVERIFY(readFile(repoDir() / "blobs" / sha) == weights_);
    QVERIFY(fs::is_symlink(snapshot / "model.safetensors"));
    QVERIFY(fs::read_symlink(snapshot / "model.safetensors") == fs::path("../../blobs") / sha);
    QVERIFY(readFile(snapshot / "model.safetensors") == weights_);
    QVERIFY(readFile(snapshot / "config.json") == config_);
    QVERIFY(fs::read_symlink(snapshot / "config.json") == fs::path("../../blobs/c0ffee01"));
    QVERIFY(readFile(snapshot / "tokenizer.json") == tokenizer_);
    QVERIFY(!fs::exists(snapshot / "generation_config.json"));  // 404: optional
    for (const auto& entry : fs::directory_iterator(repoDir() / "blobs"))
      QVERIFY(entry.path().extension() != ".incomplete");

    QVERIFY(!seen.empty());
    QCOMPARE(QString::fromStdString(seen.back().file), QString("model.safetensors"));
    QCOMPARE(seen.back().fileBytesDone, uint64_t(weights_.size()));
    QCOMPARE(seen.back().fileBytesTotal, uint64_t(weights_.size()));
    QCOMPARE(seen.back().fileCount, 5);

    QVERIFY(findCachedSnapshot(kRepo).value() == snapshot);
    QVERIFY(findCachedSnapshot(kRepo, kCommit).value() == snapshot);
    QVERIFY(!findCachedSnapshot(kRepo, "v2").has_value());
    QVERIFY(!findCachedSnapshot("org/other").has_value());
    const auto models = listCachedModels();
    QCOMPARE(models.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(models[0].repoId), QString::fromStdString(kRepo));
    QCOMPARE(QString::fromStdString(models[0].revision), QString::fromStdString(kCommit));
    QCOMPARE(QString::fromStdString(models[0].modelType), QString("gpt2"));
    QVERIFY(models[0].hasWeights);
    QCOMPARE(models[0].sizeBytes, uint64_t(config_.size() + tokenizer_.size() + weights_.size()));

    // Everything cached: a second run only asks for metadata.
    server_->clearRequests();
    QVERIFY(downloadModel(kRepo, DownloadOptions{}) == snapshot);
    for (const auto& r : server_->requests()) QCOMPARE(QString::fromStdString(r.method), QString("HEAD"));
  }

  void shardedCheckpointViaIndex() {
    const std::string shard1 = randomBytes(5000, 2), shard2 = randomBytes(7000, 3);
    const std::string index = R"({"metadata": {"total_size": 12000}, "weight_map": {
        "a.weight": "model-00001-of-00002.safetensors", "b.weight": "model-00002-of-00002.safetensors",
        "c.weight": "model-00001-of-00002.safetensors"}})";
    server_->setFile(path("config.json"), gitFile(config_, "c0ffee01"));
    server_->setFile(path("model.safetensors.index.json"), gitFile(index, "1de40001"));
    server_->setFile(path("model-00001-of-00002.safetensors"), lfsFile(shard1));
    server_->setFile(path("model-00002-of-00002.safetensors"), lfsFile(shard2));
    const fs::path snapshot = downloadModel(kRepo, DownloadOptions{});
    QVERIFY(readFile(snapshot / "model-00001-of-00002.safetensors") == shard1);
    QVERIFY(readFile(snapshot / "model-00002-of-00002.safetensors") == shard2);
    QVERIFY(readFile(snapshot / "model.safetensors.index.json") == index);
    QCOMPARE(requestsFor("model-00001-of-00002.safetensors", "GET").size(), std::size_t(1));
    QVERIFY(listCachedModels().at(0).hasWeights);
  }

  void resumesAnInterruptedTransfer() {
    serveBasicRepo();
    ServedFile cut = lfsFile(weights_);
    cut.abortAfterBytes = 70000;
    server_->setFile(path("model.safetensors"), cut);
    DownloadOptions once;
    once.maxAttempts = 1;  // no automatic retry: resume happens on the next run
    const std::string msg = errorMessageOf<HubError>([&] { downloadModel(kRepo, once); });
    QVERIFY2(mentions(msg, "model.safetensors") && mentions(msg, "resume"), msg.c_str());
    const fs::path partial = repoDir() / "blobs" / (sha256Hex(weights_) + ".incomplete");
    QVERIFY(fs::exists(partial));
    const uint64_t have = fs::file_size(partial);
    QVERIFY(have > 0 && have <= 70000);

    server_->clearRequests();
    const fs::path snapshot = downloadModel(kRepo, DownloadOptions{});
    const auto gets = requestsFor("model.safetensors", "GET");
    QCOMPARE(gets.size(), std::size_t(1));
    QCOMPARE(QString::fromStdString(gets[0].headers.at("range")), QString("bytes=%1-").arg(have));
    QVERIFY(readFile(snapshot / "model.safetensors") == weights_);
    QCOMPARE(QString::fromStdString(sha256File(snapshot / "model.safetensors")),
             QString::fromStdString(sha256Hex(weights_)));
    QVERIFY(!fs::exists(partial));
  }

  void sha256MismatchIsAnError() {
    serveBasicRepo();
    ServedFile wrong = lfsFile(weights_);
    const std::string otherSha = sha256Hex("something else");
    wrong.headers["X-Linked-Etag"] = "\"" + otherSha + "\"";
    server_->setFile(path("model.safetensors"), wrong);
    const std::string msg = errorMessageOf<HubError>([] { downloadModel(kRepo, DownloadOptions{}); });
    QVERIFY2(mentions(msg, "sha256") && mentions(msg, otherSha) && mentions(msg, "model.safetensors"), msg.c_str());
    QVERIFY(!fs::exists(repoDir() / "blobs" / otherSha));
    QVERIFY(!fs::exists(repoDir() / "blobs" / (otherSha + ".incomplete")));
  }

  void httpErrorsExplainThemselves() {
    std::string msg = errorMessageOf<HubError>([] { downloadModel(kRepo, DownloadOptions{}); });
    QVERIFY2(mentions(msg, "404") && mentions(msg, server_->url() + path("config.json")), msg.c_str());

    ServedFile gated;
    gated.forcedStatus = 401;
    server_->setFile(path("config.json"), gated);
    msg = errorMessageOf<HubError>([] { downloadModel(kRepo, DownloadOptions{}); });
    QVERIFY2(mentions(msg, "401") && mentions(msg, "HF_TOKEN"), msg.c_str());

    serveBasicRepo();
    ServedFile broken;
    broken.forcedStatus = 500;
    server_->setFile(path("model.safetensors"), broken);
    DownloadOptions quickRetries;
    quickRetries.retryDelayMs = 10;
    msg = errorMessageOf<HubError>([&] { downloadModel(kRepo, quickRetries); });
    QVERIFY2(mentions(msg, "500") && mentions(msg, "model.safetensors"), msg.c_str());

    // Nothing listening: the message names the endpoint.
    std::string deadUrl;
    {
      LocalHttpServer gone;
      deadUrl = gone.url();
    }
    DownloadOptions o;
    o.endpoint = deadUrl;
    msg = errorMessageOf<HubError>([&] { downloadModel(kRepo, o); });
    QVERIFY2(mentions(msg, deadUrl), msg.c_str());
  }

  void tokenIsSentAsBearer() {
    serveBasicRepo();
    qputenv("HF_TOKEN", "hf_from_env");
    downloadModel(kRepo, DownloadOptions{});
    QVERIFY(!server_->requests().empty());
    for (const auto& r : server_->requests())
      QCOMPARE(QString::fromStdString(r.headers.at("authorization")), QString("Bearer hf_from_env"));

    server_->clearRequests();
    DownloadOptions o;
    o.token = "hf_explicit";
    downloadModel(kRepo, o);
    for (const auto& r : server_->requests())
      QCOMPARE(QString::fromStdString(r.headers.at("authorization")), QString("Bearer hf_explicit"));

    qunsetenv("HF_TOKEN");
    server_->clearRequests();
    downloadModel(kRepo, DownloadOptions{});
    for (const auto& r : server_->requests()) QVERIFY(!r.headers.count("authorization"));
  }

  void progressCallbackCancels() {
    serveBasicRepo();
    DownloadOptions o;
    int calls = 0;
    o.progress = [&](const DownloadProgress& p) {
      ++calls;
      return p.file != "model.safetensors";  // cancel at the first weights chunk
    };
    const std::string msg = errorMessageOf<HubError>([&] { downloadModel(kRepo, o); });
    QVERIFY2(mentions(msg, "cancelled"), msg.c_str());
    QVERIFY(calls > 0);
    const fs::path partial = repoDir() / "blobs" / (sha256Hex(weights_) + ".incomplete");
    QVERIFY(fs::exists(partial));  // kept for resume
    const uint64_t have = fs::file_size(partial);
    QVERIFY(have > 0 && have < weights_.size());

    server_->clearRequests();
    const fs::path snapshot = downloadModel(kRepo, DownloadOptions{});
    QCOMPARE(QString::fromStdString(requestsFor("model.safetensors", "GET").at(0).headers.at("range")),
             QString("bytes=%1-").arg(have));
    QVERIFY(readFile(snapshot / "model.safetensors") == weights_);
  }

  void withoutCommitHeaderTheRevisionNamesTheSnapshot() {
    ServedFile config;
    config.body = config_;
    config.headers = {{"ETag", "\"abc\""}};
    server_->setFile(path("config.json"), config);
    ServedFile weights;
    weights.body = weights_;
    server_->setFile(path("model.safetensors"), weights);  // no ETag at all
    const fs::path snapshot = downloadModel(kRepo, DownloadOptions{});
    QVERIFY(snapshot == repoDir() / "snapshots" / "main");
    QVERIFY(readFile(snapshot / "model.safetensors") == weights_);
    QVERIFY(findCachedSnapshot(kRepo).value() == snapshot);
  }

  void sha256KnownVectors() {
    QCOMPARE(QString::fromStdString(sha256Hex("")),
             QString("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    QCOMPARE(QString::fromStdString(sha256Hex("abc")),
             QString("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    QCOMPARE(QString::fromStdString(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
             QString("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    QCOMPARE(QString::fromStdString(sha256Hex(std::string(1000000, 'a'))),
             QString("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
  }
};

PLAB_TEST_GUILESS_MAIN(TestHub)
}  // namespace test_hub
#include "test_hub.moc"
