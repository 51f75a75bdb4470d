// Reports from synthetic run records: SVG charts, the self-contained HTML,
// the report folder (config.json re-runnable) and I/O errors.
#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "report/fp32_comparison.h"
#include "report/number_text.h"
#include "report/report_charts.h"
#include "report/report_header.h"
#include "report/run_report.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "util/errors.h"

namespace test_report {

using namespace plab;
namespace fs = std::filesystem;

namespace {

RunRecord syntheticRun(const std::string& name, OptimizerMode mode, int steps) {
  RunRecord r;
  r.config = defaultRunConfig();
  r.config.name = name;
  r.config.mode = mode;
  r.config.steps = steps;
  r.info.runName = name;
  r.info.modelType = "gpt2";
  r.info.device = "cpu";
  r.info.parameterCount = 1000;
  r.info.layers = {"transformer.h.0.attn.c_attn", "transformer.h.0.mlp.c_fc", "lm_head"};
  r.info.fp32Baseline = fp32AdamWBaseline(1000);
  r.info.predictedMemory.weights = 2000;
  r.info.predictedMemory.moments = 4000;
  for (int s = 1; s <= steps; ++s) {
    StepMetrics m;
    m.step = s;
    m.loss = 5.0 * std::exp(-0.05 * s);
    m.roundedAwayFraction = 0.5 / s;
    if (s % 5 == 0) m.valLoss = m.loss + 0.1;
    m.memory = r.info.predictedMemory;
    for (const std::string& l : r.info.layers) m.layers.push_back({l, 0.3, 0.8});
    r.steps.push_back(m);
  }
  r.result.stepsDone = steps;
  r.result.finalLoss = r.steps.back().loss;
  r.result.memory = r.info.predictedMemory;
  r.result.memorySavedFraction = 1.0 - 6000.0 / 16000.0;
  return r;
}

int count(const std::string& s, const std::string& part) {
  int n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

std::string unescapeXml(std::string s) {
  const std::pair<const char*, const char*> entities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities)
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + std::strlen(to)))
      s.replace(p, std::strlen(from), to);
  return s;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

class TestReport : public QObject {
  Q_OBJECT
 private slots:
  void lineChartBasics() {
    ChartSeries a{"fp32 <ref> & co", {1, 2, 3, 4}, {4.0, 3.0, std::nan(""), 2.0}, "", {}};
    const std::string svg = renderSvgLineChart("Loss \"train\"", "step", "loss", {a});
    QVERIFY(svg.rfind("<svg", 0) == 0);
    QCOMPARE(count(svg, "</svg>"), 1);
    QVERIFY(svg.find("fp32 &lt;ref&gt; &amp; co") != std::string::npos);
    QVERIFY(svg.find("<ref>") == std::string::npos);
    QVERIFY(svg.find("Loss &quot;train&quot;") != std::string::npos);
    QVERIFY(svg.find("nan") == std::string::npos);  // the NaN point is skipped
    // The NaN splits the line: a 2-point polyline and a lone point.
    QCOMPARE(count(svg, "<polyline"), 1);
    QCOMPARE(count(svg, "<circle"), 1);
    QVERIFY(svg.find(">step<") != std::string::npos);
    QVERIFY(svg.find("stroke-dasharray") == std::string::npos);  // solid
    // A later run of a mode: dashed, in the curve and the legend, scaled by the width.
    ChartSeries b{"bf16 (2)", {1, 2}, {3.0, 2.0}, "#d55e00", {5, 3}};
    const std::string dashed = renderSvgLineChart("Loss", "step", "loss", {b});
    QCOMPARE(count(dashed, "stroke-dasharray=\"7.5,4.5\""), 1);  // the polyline, 1.5 wide
    QCOMPARE(count(dashed, "stroke-dasharray=\"10,6\""), 1);     // the legend's sample, 2 wide
  }

  void lineChartEdgeCases() {
    const std::string empty = renderSvgLineChart("Empty", "x", "y", {});
    QVERIFY(empty.find("no data") != std::string::npos);
    const std::string single = renderSvgLineChart("One", "x", "y", {{"s", {1}, {2}, "", {}}});
    QCOMPARE(count(single, "<circle"), 1);
    QVERIFY(single.find("nan") == std::string::npos);
    // Log axis: non-positive values cannot be drawn and are skipped.
    const std::string logY = renderSvgLineChart("Log", "x", "y", {{"s", {1, 2, 3}, {0.0, 10, 100}, "", {}}}, true);
    QCOMPARE(count(logY, "<polyline"), 1);
    QVERIFY(logY.find("(log)") != std::string::npos);
    QVERIFY(logY.find("nan") == std::string::npos && logY.find("inf") == std::string::npos);
  }

  void htmlHasChartsAndExactConfig() {
    const RunRecord run = syntheticRun("demo<1>", OptimizerMode::Bf16Kahan, 20);
    const std::string html = renderReportHtml({run}, "Demo & test");
    QVERIFY(html.rfind("<!DOCTYPE html>", 0) == 0);
    QVERIFY(html.find("<style>") != std::string::npos);
    QVERIFY(html.find("<script") == std::string::npos && html.find("http://") == html.find("http://www.w3.org"));
    // loss, val loss, update lost, rounded away, memory, the two layer heatmaps.
    QCOMPARE(count(html, "<svg"), 7);
    QVERIFY(html.find("Demo &amp; test") != std::string::npos);
    // The config in <pre> is the exact JSON once unescaped.
    const size_t a = html.find("<pre>") + 5, b = html.find("</pre>");
    QCOMPARE(nlohmann::json::parse(unescapeXml(html.substr(a, b - a))), run.config.toJson());
    // Heatmap: one rect per layer and step bucket (+ the background).
    const size_t h = html.find("Rounded away per layer (single steps): demo");
    QVERIFY(h != std::string::npos);
    QVERIFY(html.find("Update lost per layer (windows): demo") != std::string::npos);  // both metrics, titled
    QVERIFY(html.find("bf16 + Kahan") != std::string::npos);  // summary table mode label
    // The measured step peak sits beside the predicted bytes.
    RunRecord measured = run;
    measured.result.stepPeakBytes = 12 << 20;
    const std::string withPeak = renderReportHtml({measured}, "t");
    QVERIFY(withPeak.find("step peak above state") != std::string::npos);
    QVERIFY(withPeak.find("<td>12</td><td>-</td></tr>") != std::string::npos);
    measured.result.trainingPeakBytes = 40 << 20;
    const std::string withTrainingPeak = renderReportHtml({measured}, "t");
    QVERIFY(withTrainingPeak.find("measured training peak") != std::string::npos);
    QVERIFY(withTrainingPeak.find("<td>12</td><td>40</td></tr>") != std::string::npos);
    // No fp32 run in this report: the peak saving says so, it is not 0 %.
    QVERIFY(withTrainingPeak.find("measured peak saved vs fp32") != std::string::npos);
    QVERIFY(withTrainingPeak.find("<td>no fp32 twin</td>") != std::string::npos);
  }

  void runReportFolder() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "report";
    const RunRecord run = syntheticRun("folder", OptimizerMode::Bf16Plain, 12);
    writeRunReport(dir, run);
    for (const char* f : {"config.json", "run_info.json", "summary.json", "metrics.jsonl", "metrics.csv", "layers.csv",
                          "report.html", "charts/loss.svg", "charts/val_loss.svg", "charts/update_lost.svg",
                          "charts/rounded_away.svg",
                          "charts/memory.svg", "charts/layers_heatmap.svg"})
      QVERIFY2(fs::is_regular_file(dir / f) && fs::file_size(dir / f) > 0, f);
    std::ifstream cfg(dir / "config.json");
    const RunConfig back = RunConfig::fromJson(nlohmann::json::parse(cfg));
    QCOMPARE(back.toJson(), run.config.toJson());
    QCOMPARE(readMetricsJsonl(dir / "metrics.jsonl").size(), size_t(12));
    std::ifstream summary(dir / "summary.json");
    QCOMPARE(nlohmann::json::parse(summary).at("steps_done").get<int64_t>(), int64_t(12));
    // layers.csv is rebuilt from the steps: header + 3 layers x 12 steps.
    std::ifstream layers(dir / "layers.csv");
    int lines = 0;
    for (std::string l; std::getline(layers, l);) ++lines;
    QCOMPARE(lines, 1 + 3 * 12);
  }

  // The one-line verdict against fp32, on hand-made numbers.
  void verdictAgainstFp32() {
    RunRecord fp32 = syntheticRun("a", OptimizerMode::Fp32AdamW, 10);
    RunRecord bf16 = syntheticRun("b", OptimizerMode::Bf16Plain, 10);
    for (StepMetrics& m : bf16.steps) {
      if (m.valLoss) *m.valLoss += 0.06;
      m.memory = MemoryBreakdown{};
      m.memory.weights = 8000;  // half of the 16 kB fp32 baseline
    }
    bf16.steps[4].updateLost = 0.9;
    bf16.steps[9].updateLost = 0.872;
    QCOMPARE(report::runVerdict(bf16, &fp32),
             std::string("bf16: +0.0600 nats val loss vs fp32 twin a, 88.6 % of the intended update lost, "
                         "50.0 % state memory saved (peak not measured)"));
    // The measured peak beside the state saving, against the same fp32 run.
    fp32.result.trainingPeakBytes = 100 << 20;
    bf16.result.trainingPeakBytes = int64_t(56.2 * (1 << 20));
    QCOMPARE(report::runVerdict(bf16, &fp32),
             std::string("bf16: +0.0600 nats val loss vs fp32 twin a, 88.6 % of the intended update lost, "
                         "50.0 % state memory saved (measured peak 56.2 MiB, 43.8 % below fp32's)"));
    QCOMPARE(report::peakSavingText(bf16, &fp32), std::string("43.8 %"));
    // With the whole process's peaks recorded on both sides, that saving beside it.
    fp32.result.processPeakBytes = 400 << 20;
    bf16.result.processPeakBytes = 340 << 20;
    QCOMPARE(report::peakSavingText(bf16, &fp32), std::string("43.8 % (process 15.0 %)"));
    fp32.result.processPeakBytes.reset();  // an fp32 folder from before it was recorded
    QCOMPARE(report::peakSavingText(bf16, &fp32), std::string("43.8 %"));
    QVERIFY(report::runVerdict(fp32, &fp32).find("(measured peak 100.0 MiB)") != std::string::npos);
    QVERIFY(report::runVerdict(bf16, nullptr).find("no fp32 twin to compare the peak with") != std::string::npos);
    RunRecord fp32Old = fp32;  // a folder from before the peak was recorded
    fp32Old.result.trainingPeakBytes.reset();
    QVERIFY(report::runVerdict(bf16, &fp32Old).find("the fp32 run's peak is not measured") != std::string::npos);
    bf16.result.trainingPeakBytes = 110 << 20;
    QVERIFY(report::runVerdict(bf16, &fp32).find("10.0 % above fp32's") != std::string::npos);
    bf16.result.trainingPeakBytes.reset();
    fp32.result.trainingPeakBytes.reset();
    QVERIFY(report::runVerdict(fp32, &fp32).rfind("fp32: the fp32 reference", 0) == 0);
    QVERIFY(report::runVerdict(bf16, nullptr).find("no fp32 twin") != std::string::npos);
    // A run in progress is compared at the last step both measured.
    RunRecord partial = bf16;
    partial.steps.resize(6);
    partial.result = RunResult{};
    QVERIFY2(report::runVerdict(partial, &fp32).rfind("bf16: +0.0600 nats val loss vs fp32 twin a", 0) == 0,
             report::runVerdict(partial, &fp32).c_str());
    // The twin is found by the whole config except mode and plan (test_fp32_twin).
    std::vector<RunRecord> runs = {fp32, bf16};
    QCOMPARE(report::fp32TwinIndex(runs, 1), std::optional<size_t>(0));
    runs[1].config.seed = 7;
    QVERIFY(!report::fp32TwinIndex(runs, 1));
    RunRecord failed = bf16;
    failed.result.status = RunStatus::Failed;
    failed.result.message = "loss became NaN at step 3";
    QCOMPARE(report::runVerdict(failed, &fp32), std::string("bf16: failed (loss became NaN at step 3)"));
  }

  // A metrics record with a step below 1 (from a hostile file) wrote outside
  // the heatmap's buckets (steps -4..4: a heap corruption); steps near 2^63
  // overflowed the bucket product. Such records have no bucket now.
  void heatmapIgnoresStepsOutsideTheRun() {
    for (int64_t first : {int64_t(-4), int64_t(0), std::numeric_limits<int64_t>::max() - 8}) {
      RunRecord run = syntheticRun("odd-steps", OptimizerMode::Bf16Plain, 9);
      for (size_t i = 0; i < run.steps.size(); ++i) run.steps[i].step = first + int64_t(i);
      const std::string svg = report::renderLayerHeatmap(run);
      QVERIFY(svg.rfind("<svg", 0) == 0 || svg.find("<svg") != std::string::npos);
    }
    // A metrics line with step 0 is refused by the reader, naming the field.
    QVERIFY_THROWS_EXCEPTION(ConfigError, stepMetricsFromJson(nlohmann::json{{"step", 0}, {"loss", 1.0}}));
  }

  void comparisonReport() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    std::vector<RunRecord> runs = {syntheticRun("cmp/fp32", OptimizerMode::Fp32AdamW, 8),
                                   syntheticRun("cmp-bf16", OptimizerMode::Bf16Plain, 8)};
    runs[0].result.trainingPeakBytes = 4000;
    runs[1].result.trainingPeakBytes = 3000;
    writeComparisonReport(dir, runs);
    QVERIFY(fs::exists(dir / "runs" / "cmp_fp32" / "report.html"));
    QVERIFY(fs::exists(dir / "runs" / "cmp-bf16" / "config.json"));
    const std::string csv = readFile(dir / "summary.csv");
    QCOMPARE(count(csv, "\n"), 3);
    QVERIFY(csv.find("cmp/fp32,fp32,completed,8,") != std::string::npos);
    // The state saving, then the measured training peak and its saving vs the fp32 run.
    QVERIFY(csv.find("memory_saved_fraction,training_peak_bytes,peak_saved_fraction,") != std::string::npos);
    QVERIFY(csv.find(",4000,0.0,") != std::string::npos);
    QVERIFY(csv.find(",3000,0.25,") != std::string::npos);
    const std::string html = readFile(dir / "report.html");
    // Overlaid charts (loss, val loss, loss minus fp32, update lost, rounded
    // away, memory) + two layer heatmaps per run (rounded away, update lost).
    QCOMPARE(count(html, "<svg"), 6 + 4);
    QVERIFY(fs::exists(dir / "charts" / "loss_vs_fp32.svg"));
    // A verdict per run, against the fp32 run on the same model, data and seed.
    QVERIFY(html.find("the fp32 reference") != std::string::npos);
    QVERIFY(html.find("bf16: ") != std::string::npos && html.find("nats val loss vs fp32") != std::string::npos);
    QVERIFY(csv.find(",verdict\n") != std::string::npos);
    QCOMPARE(count(html, "<pre>"), 2);
  }

  // Issue 11 item 4: the header is not taken from a first run that failed
  // before its model loaded, and failed runs show as failed.
  void headerNamesTheModelTheRunsShare() {
    RunRecord broken = syntheticRun("broken", OptimizerMode::Bf16Plain, 1);
    broken.info = RunInfo{};  // failed before the model loaded
    broken.steps.clear();
    broken.result = RunResult{};
    broken.config.model.source = "folder";
    broken.config.model.path = "/nowhere";
    broken.result.status = RunStatus::Failed;
    broken.result.message = "cannot open /nowhere/config.json";
    RunRecord other = syntheticRun("other", OptimizerMode::Fp32AdamW, 5);
    other.config.model.source = "folder";
    other.config.model.path = "/elsewhere";
    other.info.modelType = "llama";
    other.info.parameterCount = 77;
    RunRecord nan = syntheticRun("nan", OptimizerMode::Bf16Plain, 5);
    nan.result.status = RunStatus::Failed;  // no message
    const std::vector<RunRecord> runs = {broken, other, syntheticRun("a", OptimizerMode::Fp32AdamW, 5),
                                         syntheticRun("b", OptimizerMode::Bf16Kahan, 5), nan};
    const report::ReportHeader h = report::reportHeader(runs);
    QCOMPARE(h.run, std::optional<size_t>(2));
    QCOMPARE(h.runsOnModel, size_t(3));
    QCOMPARE(h.otherRuns, size_t(2));
    const std::string html = renderReportHtml(runs, "t");
    QVERIFY2(html.find("Model: gpt2, 1000 parameters; device cpu") != std::string::npos, html.c_str());
    QVERIFY(html.find("2 runs were on other models") != std::string::npos);
    QVERIFY(html.find("Model: ,") == std::string::npos);
    QCOMPARE(count(html, "<td class=\"text failed\">failed</td>"), 2);
    QVERIFY(html.find("cannot open /nowhere/config.json") != std::string::npos);
    QCOMPARE(report::runVerdict(nan, &runs[2]), std::string("bf16: failed"));
    // No run loaded a model: said so, not an empty name.
    QCOMPARE(report::reportHeaderLine({broken}), std::string("Model: unknown (no run loaded it)."));
  }

  // Compared losses differ in the fourth decimal: every report keeps it.
  void lossesKeepTheDigitsThatDiffer() {
    RunRecord a = syntheticRun("a", OptimizerMode::Fp32AdamW, 5), b = syntheticRun("b", OptimizerMode::Bf16Kahan, 5);
    a.result.finalLoss = 2.6021;
    b.result.finalLoss = 2.6029;
    b.result.finalValLoss = 2.6;
    const std::string html = renderReportHtml({a, b}, "t");
    QVERIFY(html.find("<td>2.6021</td>") != std::string::npos);
    QVERIFY(html.find("<td>2.6029</td>") != std::string::npos);
    QVERIFY(html.find("<td>2.6000</td>") != std::string::npos);
    QTemporaryDir tmp;
    writeComparisonReport(tmp.path().toStdString(), {a, b});
    const std::string csv = readFile(fs::path(tmp.path().toStdString()) / "summary.csv");
    QVERIFY(csv.find(",2.6021,") != std::string::npos && csv.find(",2.6029,") != std::string::npos);
    QCOMPARE(report::lossText(2.60213), std::string("2.6021"));
    QCOMPARE(report::lossText(0.00123456), std::string("0.00123"));
    QCOMPARE(report::lossDeltaText(-0.0004), std::string("-0.000400"));
    QCOMPARE(report::lossDeltaText(0.06), std::string("+0.0600"));
  }

  // No sign without a digit after it, in any of the shared number texts:
  // a figure that rounds to zero reads "0.0000", never "-0.0000" or "+0.0000".
  void noNegativeZero() {
    QCOMPARE(report::lossDeltaText(-0.0), std::string("0.0000"));
    QCOMPARE(report::lossDeltaText(0.0), std::string("0.0000"));
    QCOMPARE(report::lossText(-0.0), std::string("0.0000"));
    QCOMPARE(report::lossDeltaText(-4e-6), std::string("-4.00e-06"));  // tiny values keep their digits and sign
    QCOMPARE(report::signedFixedText(-0.00001, 4), std::string("0.0000"));
    QCOMPARE(report::signedFixedText(-0.0, 4), std::string("0.0000"));
    QCOMPARE(report::signedFixedText(0.00012, 4), std::string("+0.0001"));
    QCOMPARE(report::signedFixedText(-0.0112, 4), std::string("-0.0112"));
    QCOMPARE(report::fixedText(-0.00004, 2), std::string("0.00"));
    QCOMPARE(report::percentText(-4e-7, 1), std::string("0.0 %"));
    QCOMPARE(report::savingText(0.0, 0), std::string("0 %"));       // fp32 and mixed: "state 0 %"
    QCOMPARE(report::savingText(-0.0001, 0), std::string("0 %"));
    QCOMPARE(report::savingText(0.0001, 0), std::string("0 %"));
    QCOMPARE(report::savingText(0.5, 0), std::string("−50 %"));
    QCOMPARE(report::savingText(-0.125, 1), std::string("+12.5 %"));
  }

  void unwritableTargetsNameThePath() {
    const RunRecord run = syntheticRun("x", OptimizerMode::Bf16Kahan, 3);
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "a-file";
    std::ofstream(file) << "not a folder";
    for (const fs::path& target : {file / "report", fs::path("/dev/full/report")}) {
      try {
        writeRunReport(target, run);
        QFAIL("expected IoError");
      } catch (const IoError& e) {
        QVERIFY2(std::string(e.what()).find(target.string()) != std::string::npos, e.what());
      }
    }
  }
};

PLAB_TEST_APPLESS_MAIN(TestReport)
}  // namespace test_report
#include "test_report.moc"
