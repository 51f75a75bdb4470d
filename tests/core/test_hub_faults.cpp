// Downloads against a misbehaving loopback server: a 500 or a dropped
// connection is retried (resuming), a server that drips bytes times out, a
// body past its announced size (or an endless one with no size) is refused,
// and an absurd announced size is a clear error. Every case is bounded in
// bytes and seconds.
#include <QElapsedTimer>
#include <QtTest/QtTest>

#include <filesystem>

#include "hub/hub_download.h"
#include "hub/sha256.h"
#include "support/error_capture.h"
#include "support/local_http_server.h"
#include "support/test_registry.h"
#include "util/errors.h"

namespace test_hub_faults {

using namespace plab;
using plab::test::errorMessageOf;
using plab::test::LocalHttpServer;
using plab::test::mentions;
using plab::test::ServedFile;
namespace fs = std::filesystem;

namespace {

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kRepo = "org/faulty";

std::string path(const std::string& file) { return "/" + kRepo + "/resolve/main/" + file; }

ServedFile served(const std::string& body, bool lfs) {
  ServedFile f;
  f.body = body;
  f.headers = {{"X-Repo-Commit", kCommit}};
  if (lfs) f.headers["X-Linked-Etag"] = "\"" + sha256Hex(body) + "\"";
  return f;
}

}  // namespace

class TestHubFaults : public QObject {
  Q_OBJECT
  std::unique_ptr<QTemporaryDir> home_;
  std::unique_ptr<LocalHttpServer> server_;
  const std::string weights_ = std::string(100000, 'w');

  DownloadOptions quick() const {
    DownloadOptions o;
    o.retryDelayMs = 10;
    return o;
  }
  int count(const std::string& file, const std::string& method) const {
    int n = 0;
    for (const auto& r : server_->requests()) n += r.method == method && r.path == path(file);
    return n;
  }
  fs::path blobs() const { return fs::path(home_->path().toStdString()) / "hub" / "models--org--faulty" / "blobs"; }

 private slots:
  void init() {
    home_ = std::make_unique<QTemporaryDir>();
    server_ = std::make_unique<LocalHttpServer>();
    qputenv("HF_HOME", home_->path().toUtf8());
    qunsetenv("HF_HUB_CACHE");
    qunsetenv("HF_TOKEN");
    qputenv("HF_ENDPOINT", QByteArray::fromStdString(server_->url()));
    server_->setFile(path("config.json"), served(R"({"model_type": "gpt2"})", false));
  }
  void cleanup() {
    server_.reset();
    home_.reset();
  }

  void serverErrorsAreRetried() {
    ServedFile flaky = served(weights_, true);
    flaky.failNextRequests = 2;  // the HEAD and the first GET get 500s... or two HEADs
    server_->setFile(path("model.safetensors"), flaky);
    const fs::path snapshot = downloadModel(kRepo, quick());
    QCOMPARE(fs::file_size(snapshot / "model.safetensors"), uintmax_t(weights_.size()));
    QVERIFY(count("model.safetensors", "HEAD") + count("model.safetensors", "GET") >= 4);
  }

  void droppedConnectionResumesAtOnce() {
    ServedFile cut = served(weights_, true);
    cut.abortAfterBytes = 30000;
    server_->setFile(path("model.safetensors"), cut);
    const fs::path snapshot = downloadModel(kRepo, quick());
    QCOMPARE(fs::file_size(snapshot / "model.safetensors"), uintmax_t(weights_.size()));
    QCOMPARE(count("model.safetensors", "GET"), 2);
  }

  void drippingServerTimesOut() {
    ServedFile drip = served(weights_, true);
    drip.dripDelayMs = 500;  // 4 bytes/s
    server_->setFile(path("model.safetensors"), drip);
    DownloadOptions o = quick();
    o.lowSpeedBytesPerSecond = 100;
    o.lowSpeedSeconds = 2;
    QElapsedTimer clock;
    clock.start();
    const std::string msg = errorMessageOf<HubError>([&] { downloadModel(kRepo, o); });
    QVERIFY2(mentions(msg, "too slow") && mentions(msg, "model.safetensors"), msg.c_str());
    QVERIFY2(clock.elapsed() < 30000, qPrintable(QString::number(clock.elapsed())));
  }

  // Used to be saved whole (3 GB as model.safetensors, exit 0).
  void endlessBodyWithoutSizeIsRefused() {
    ServedFile endless = served(std::string(3 << 20, 'e'), false);
    endless.omitContentLength = true;
    server_->setFile(path("model.safetensors"), endless);
    DownloadOptions o = quick();
    o.maxBytesWithoutSize = 1 << 20;
    const std::string msg = errorMessageOf<HubError>([&] { downloadModel(kRepo, o); });
    QVERIFY2(mentions(msg, "no size announced"), msg.c_str());
    for (const auto& e : fs::directory_iterator(blobs()))
      QVERIFY2(fs::file_size(e.path()) <= (1u << 20), e.path().c_str());
  }

  void bodyPastItsAnnouncedSizeIsRefused() {
    ServedFile liar = served(weights_, false);
    liar.headers["X-Linked-Size"] = "1000";
    server_->setFile(path("model.safetensors"), liar);
    const std::string msg = errorMessageOf<HubError>([&] { downloadModel(kRepo, quick()); });
    QVERIFY2(mentions(msg, "more than the 1000 bytes"), msg.c_str());
  }

  // Used to end in "error: stoull".
  void absurdAnnouncedSizeIsAClearError() {
    ServedFile huge = served(weights_, false);
    huge.headers["X-Linked-Size"] = "100000000000000000000000";
    server_->setFile(path("model.safetensors"), huge);
    const std::string msg = errorMessageOf<HubError>([&] { downloadModel(kRepo, quick()); });
    QVERIFY2(mentions(msg, "not a plausible size"), msg.c_str());
  }
};

PLAB_TEST_GUILESS_MAIN(TestHubFaults)
}  // namespace test_hub_faults
#include "test_hub_faults.moc"
