// MetricsWriter streams records to disk and reads them back; a torn last
// line is tolerated; a full disk raises IoError.
#include <QtTest/QtTest>

#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "util/errors.h"

namespace test_metrics_writer {

using namespace plab;
namespace fs = std::filesystem;

namespace {

StepMetrics sample(int64_t step) {
  StepMetrics m;
  m.step = step;
  m.loss = 5.0 / double(step) + 1.0 / 3.0;  // not exactly representable in few digits
  m.gradNorm = 0.1 * step;
  m.lr = 1e-3 * std::pow(0.9, double(step));
  m.tokensPerSecond = 12345.678;
  m.elapsedSeconds = 0.123 * step;
  if (step % 2 == 0) m.valLoss = 4.25 + 1e-9 * step;
  m.memory.weights = 1000 + step;
  m.memory.gradients = 2000;
  m.memory.moments = 4000;
  m.memory.kahan = 500;
  if (step != 3) {  // a statistics step: the totals are measured with the layers
    m.roundedAwayFraction = 1.0 / (step + 2.0);
    m.updateRatio = 0.7;
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
      QVERIFY(got.roundedAwayFraction == want.roundedAwayFraction);  // both unset on step 3
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

  // A step that measured no statistics writes none: no key in metrics.jsonl,
  // empty cells in metrics.csv (same header), and reads back unset.
  void unmeasuredStatisticsAreAbsentNotRepeated() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "run";
    {
      MetricsWriter w(dir);
      for (int i = 1; i <= 4; ++i) w.write(sample(i));
    }
    std::ifstream jsonl(dir / "metrics.jsonl");
    std::vector<nlohmann::json> rows;
    for (std::string line; std::getline(jsonl, line);) rows.push_back(nlohmann::json::parse(line));
    QCOMPARE(rows.size(), size_t(4));
    QVERIFY(rows[1].contains("rounded_away_fraction"));
    QVERIFY(!rows[2].contains("rounded_away_fraction") && !rows[2].contains("update_ratio"));
    QVERIFY(!rows[2].contains("update_lost") && !rows[2].contains("update_lost_se"));
    std::ifstream csv(dir / "metrics.csv");
    std::vector<std::string> lines;
    for (std::string line; std::getline(csv, line);) lines.push_back(line);
    QCOMPARE(lines.size(), size_t(5));
    const auto cells = [](const std::string& line) {
      std::vector<std::string> out(1);
      for (char c : line) {
        if (c == ',') out.emplace_back();
        else out.back().push_back(c);
      }
      return out;
    };
    const auto header = cells(lines[0]);
    const auto step3 = cells(lines[3]);
    QCOMPARE(step3.size(), header.size());
    for (size_t c = 0; c < header.size(); ++c)
      if (header[c] == "rounded_away" || header[c] == "update_ratio" || header[c] == "update_lost") {
        QVERIFY2(step3[c].empty(), header[c].c_str());
        QVERIFY(!cells(lines[2])[c].empty() || header[c] == "update_lost");
      }
    const auto back = readMetricsJsonl(dir / "metrics.jsonl");
    QVERIFY(!back[2].roundedAwayFraction && !back[2].updateRatio);
    QCOMPARE(*back[3].roundedAwayFraction, 1.0 / 6.0);
  }

  // Files written before repeated the last measured totals on steps without
  // layer statistics: read back, those repeats are unset; measured ones stay.
  void oldFilesDropRepeatedTotals() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "metrics.jsonl";
    {
      std::ofstream out(file);
      const char* layer = R"([{"layer":"h.0","rounded_away_fraction":0.4,"update_ratio":0.6}])";
      for (int step = 1; step <= 6; ++step) {
        const bool stats = step == 1 || step == 5;
        out << R"({"step":)" << step << R"(,"loss":2.0,"grad_norm":1.0,"lr":1e-4,"rounded_away_fraction":)"
            << (step < 5 ? 0.4 : 0.3) << R"(,"update_ratio":0.6,"tokens_per_second":1.0,"elapsed_seconds":1.0,)"
            << R"("layers":)" << (stats ? layer : "[]")
            << (step == 4 ? R"(,"update_lost":0.25,"update_error":0.5,"window_layers":[{"layer":"h.0","update_lost":0.25,"update_error":0.5}])" : "")
            << "}\n";
      }
    }
    const auto steps = readMetricsJsonl(file);
    QCOMPARE(steps.size(), size_t(6));
    for (const StepMetrics& m : steps) {
      const bool stats = m.step == 1 || m.step == 5;
      QCOMPARE(m.roundedAwayFraction.has_value(), stats);
      QCOMPARE(m.updateRatio.has_value(), stats);
    }
    QCOMPARE(*steps[0].roundedAwayFraction, 0.4);
    QCOMPARE(*steps[4].roundedAwayFraction, 0.3);
    QCOMPARE(*steps[3].updateLost, 0.25);  // windows were never repeated
    QVERIFY(!steps[3].updateLostStdError && !steps[3].windowLayers[0].updateLostStdError);
    QVERIFY(!steps[4].updateLost);
  }

  // A run resumed into a metrics.csv written before mem_scales existed keeps
  // that file's columns: every row as wide as its header, and its
  // mem_moments still holding the scales, so the parts add up to mem_total.
  void resumedOldCsvKeepsItsColumns() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "run";
    fs::create_directories(dir);
    const std::string oldHeader =
        "step,loss,val_loss,grad_norm,lr,rounded_away,update_ratio,update_lost,update_error,tokens_per_s,elapsed_s,"
        "mem_weights,mem_gradients,mem_moments,mem_master,mem_kahan,mem_total";
    std::ofstream(dir / "metrics.csv") << oldHeader << "\n";
    StepMetrics m = sample(1);
    m.memory.scales = 64;
    MetricsWriter(dir).write(m);
    std::ifstream in(dir / "metrics.csv");
    std::string header, row;
    std::getline(in, header);
    std::getline(in, row);
    QCOMPARE(header, oldHeader);
    const auto cells = [](const std::string& line) {
      std::vector<std::string> out;
      std::stringstream s(line);
      for (std::string c; std::getline(s, c, ',');) out.push_back(c);
      return out;
    };
    const std::vector<std::string> names = cells(header), values = cells(row);
    QCOMPARE(values.size(), names.size());
    QCOMPARE(values[13], std::to_string(m.memory.moments + m.memory.scales));  // mem_moments
    QCOMPARE(values.back(), std::to_string(m.memory.total()));

    // A new file names the column and keeps the scales apart.
    const fs::path fresh = fs::path(tmp.path().toStdString()) / "fresh";
    MetricsWriter(fresh).write(m);
    std::ifstream in2(fresh / "metrics.csv");
    std::getline(in2, header);
    std::getline(in2, row);
    QVERIFY(header.find("mem_scales") != std::string::npos);
    QCOMPARE(cells(row).size(), cells(header).size());
    QCOMPARE(cells(row)[13], std::to_string(m.memory.moments));
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

  void corruptMiddleLineIsSkippedAndCounted() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "metrics.jsonl";
    {
      std::ofstream out(file);
      out << "{broken\n" << toJson(sample(1)).dump() << "\n{broken\n" << toJson(sample(2)).dump() << "\n";
    }
    size_t skipped = 0;
    QCOMPARE(readMetricsJsonl(file, &skipped).size(), size_t(2));
    QCOMPARE(skipped, size_t(2));
    std::ofstream(file, std::ios::app) << "{\"step\": 3";  // a torn last line is not counted
    QCOMPARE(readMetricsJsonl(file, &skipped).size(), size_t(2));
    QCOMPARE(skipped, size_t(2));
  }

  void validJsonThatIsNotAStepIsAnError() {
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "metrics.jsonl";
    {
      std::ofstream out(file);
      out << toJson(sample(1)).dump() << "\n{\"step\": -5}\n" << toJson(sample(2)).dump() << "\n";
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

PLAB_TEST_APPLESS_MAIN(TestMetricsWriter)
}  // namespace test_metrics_writer
#include "test_metrics_writer.moc"
