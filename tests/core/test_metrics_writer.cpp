// MetricsWriter streams records to disk and reads them back; a torn last
// line is tolerated; a full disk raises IoError.
#include <QtTest/QtTest>

#include <cmath>
#include <fstream>

#include "train/metrics_writer.h"
#include "util/errors.h"

using namespace plab;
namespace fs = std::filesystem;

namespace {

StepMetrics sample(int64_t step) {
  StepMetrics m;
  m.step = step;
  m.loss = 5.0 / double(step) + 1.0 / 3.0;  // not exactly representable in few digits
  m.gradNorm = 0.1 * step;
  m.lr = 1e-3 * std::pow(0.9, double(step));
  m.roundedAwayFraction = 1.0 / (step + 2.0);
  m.updateRatio = 0.7;
  m.tokensPerSecond = 12345.678;
  m.elapsedSeconds = 0.123 * step;
  if (step % 2 == 0) m.valLoss = 4.25 + 1e-9 * step;
  m.memory.weights = 1000 + step;
  m.memory.gradients = 2000;
  m.memory.moments = 4000;
  m.memory.kahan = 500;
  if (step != 3) {
    m.layers.push_back({"transformer.h.0.attn.c_attn", 0.25 + 1e-7 * step, 0.9});
    m.layers.push_back({"lm_head", 0.0, 1.0});
  }
  return m;
}

int countLines(const fs::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

class TestMetricsWriter : public QObject {
  Q_OBJECT
 private slots:
  void writeAndReadBack() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "run";
    const int n = 6;
    {
      MetricsWriter w(dir);
      for (int i = 1; i <= n; ++i) {
        w.write(sample(i));
        // Flushed every record: the line is on disk before the next write.
        QCOMPARE(countLines(dir / "metrics.jsonl"), i);
      }
    }
    const auto back = readMetricsJsonl(dir / "metrics.jsonl");
    QCOMPARE(int(back.size()), n);
    for (int i = 1; i <= n; ++i) {
      const StepMetrics want = sample(i);
      const StepMetrics& got = back[i - 1];
      QCOMPARE(got.step, want.step);
      QCOMPARE(got.loss, want.loss);  // exact: JSON keeps full double precision
      QCOMPARE(got.lr, want.lr);
      QCOMPARE(got.roundedAwayFraction, want.roundedAwayFraction);
      QCOMPARE(got.valLoss.has_value(), want.valLoss.has_value());
      if (want.valLoss) QCOMPARE(*got.valLoss, *want.valLoss);
      QCOMPARE(got.memory.total(), want.memory.total());
      QCOMPARE(got.layers.size(), want.layers.size());
      for (size_t l = 0; l < want.layers.size(); ++l) {
        QCOMPARE(got.layers[l].layer, want.layers[l].layer);
        QCOMPARE(got.layers[l].roundedAwayFraction, want.layers[l].roundedAwayFraction);
      }
    }
    QCOMPARE(countLines(dir / "metrics.csv"), n + 1);      // header + one per step
    QCOMPARE(countLines(dir / "layers.csv"), 2 * (n - 1) + 1);  // step 3 has no layer stats
    std::ifstream csv(dir / "metrics.csv");
    std::string header;
    std::getline(csv, header);
    QVERIFY(header.rfind("step,loss,val_loss,grad_norm,lr,rounded_away,update_ratio,update_lost,update_error,"
                         "tokens_per_s,elapsed_s,mem_", 0) == 0);
  }

  void nonFiniteLossRoundTripsAsNaN() {
    StepMetrics m = sample(1);
    m.loss = std::nan("");
    m.gradNorm = INFINITY;
    const StepMetrics back = stepMetricsFromJson(nlohmann::json::parse(toJson(m).dump()));
    QVERIFY(std::isnan(back.loss));
    QVERIFY(!std::isfinite(back.gradNorm));
  }

  void tornLastLineIsSkipped() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    {
      MetricsWriter w(dir);
      for (int i = 1; i <= 3; ++i) w.write(sample(i));
    }
    {
      std::ofstream torn(dir / "metrics.jsonl", std::ios::app);
      torn << "{\"step\": 4, \"loss\": 1.2";  // a crash mid-write
    }
    QCOMPARE(readMetricsJsonl(dir / "metrics.jsonl").size(), size_t(3));
  }

  void corruptMiddleLineIsAnError() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "metrics.jsonl";
    {
      std::ofstream out(file);
      out << toJson(sample(1)).dump() << "\n{broken\n" << toJson(sample(2)).dump() << "\n";
    }
    try {
      readMetricsJsonl(file);
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("line 2") != std::string::npos, e.what());
    }
  }

  void fullDiskRaisesIoError() {
    if (!fs::exists("/dev/full")) QSKIP("/dev/full not available");
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    fs::create_symlink("/dev/full", dir / "metrics.jsonl");
    MetricsWriter w(dir);
    try {
      w.write(sample(1));
      QFAIL("expected IoError");
    } catch (const IoError& e) {
      const std::string msg = e.what();
      QVERIFY2(msg.find("metrics.jsonl") != std::string::npos, e.what());
      QVERIFY2(msg.find("No space") != std::string::npos || msg.find("write") != std::string::npos, e.what());
    }
  }

  void uncreatableFolderRaisesIoError() {
    if (!fs::exists("/dev/full")) QSKIP("/dev/full not available");
    try {
      MetricsWriter w("/dev/full/run");
      QFAIL("expected IoError");
    } catch (const IoError& e) {
      QVERIFY2(std::string(e.what()).find("/dev/full/run") != std::string::npos, e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestMetricsWriter)
#include "test_metrics_writer.moc"
