// Issue 20.6: a killed, stopped or failed run reads the same everywhere.
// The app's comparison table, the HTML report and the PDF's summary table
// show one status word and the same steps, losses, memory, saving, update
// lost, rounded away and tokens/s for each (report/run_figures.h), and the
// figures of a run without summary.json are what its steps measured,
// computed as the trainer computes its summary.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <filesystem>
#include <regex>

#include "comparison/comparison_table.h"
#include "report/pdf_summary_table.h"
#include "report/run_figures.h"
#include "report/run_folder_reader.h"
#include "run/run_store.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "train/metrics_writer.h"
#include "util/atomic_file.h"

namespace test_run_figures_agree {

using namespace plab;
using namespace plab::ui;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kParameters = 1 << 20;

// A run as the trainer streams it, its steps measuring rounded away
// `rounded` (every 5th step) and alternating between two speeds; summary.json
// only for a run that ended in the trainer ("" = killed).
fs::path writeRun(const fs::path& dir, const std::string& name, const std::string& status, int steps, double rounded,
                  double fastTps, double slowTps) {
  RunConfig c = defaultRunConfig();
  c.name = name;
  c.mode = OptimizerMode::Bf16Plain;
  c.steps = 400;
  c.output_dir = dir.string();
  fs::create_directories(dir);
  writeJsonFileAtomically(dir / "config.json", c.toJson());
  RunInfo info;
  info.runName = name;
  info.parameterCount = kParameters;
  info.fp32Baseline = fp32AdamWBaseline(kParameters);
  info.tokensPerStep = 512;
  writeJsonFileAtomically(dir / "run_info.json", toJson(info));
  std::vector<StepMetrics> written;
  {
    MetricsWriter writer(dir);
    for (int s = 1; s <= steps; ++s) {
      StepMetrics m = test::storedStep(s, 0);
      m.roundedAwayFraction.reset();
      if (s % 5 == 0) m.roundedAwayFraction = rounded;
      m.tokensPerSecond = s % 2 ? fastTps : slowTps;
      m.memory = {};
      m.memory.weights = 2 * kParameters;
      m.memory.gradients = 2 * kParameters;
      m.memory.moments = 4 * kParameters;  // 8 of fp32's 16 bytes a parameter: 50 % saved
      if (s % 20 == 0) {
        m.updateLost = 0.8 + 0.01 * (s % 7);
        m.updateError = 0.5;
        m.updateLostStdError = 0.01;
      }
      writer.write(m);
      written.push_back(m);
    }
  }
  if (!status.empty()) {
    RunResult r = report::resultFromSteps(info, written);  // what the trainer would write
    r.status = status == "failed" ? RunStatus::Failed : RunStatus::Stopped;
    r.message = status == "failed" ? "loss became NaN at step 31" : "stopped by the user";
    writeJsonFileAtomically(dir / "summary.json", toJson(r));
  }
  return dir;
}

// The cells of the HTML summary row of `name`, tags stripped.
QStringList htmlRow(const std::string& html, const std::string& name) {
  const size_t at = html.find(">" + name + "</td>");
  if (at == std::string::npos) return {};
  const size_t end = html.find("</tr>", at);
  const size_t begin = html.rfind("<tr>", at);
  const std::string row = html.substr(begin, end - begin);
  QStringList cells;
  static const std::regex cell("<td[^>]*>([^<]*)</td>");
  for (auto it = std::sregex_iterator(row.begin(), row.end(), cell); it != std::sregex_iterator(); ++it)
    cells << QString::fromStdString((*it)[1].str());
  return cells;
}

}  // namespace

class TestRunFiguresAgree : public QObject {
  Q_OBJECT

 private slots:
  // Killed mid-way, stopped, failed: one row each, read back from disk as
  // the app does at start.
  void tableHtmlAndPdfShowTheSameFigures() {
    QTemporaryDir tmp;
    const fs::path root(tmp.path().toStdString());
    // Rounded away near the 83.9 %, speeds whose mean (1500) is not
    // the trainer's figure (all tokens over all time: 1333).
    writeRun(root / "killed", "killed-bf16", "", 336, 0.839, 2000, 1000);
    writeRun(root / "stopped", "stopped-bf16", "stopped", 254, 0.91, 3000, 1000);
    writeRun(root / "failed", "failed-bf16", "failed", 31, 0.002, 2400, 1600);

    RunStore store;
    for (const char* name : {"killed", "stopped", "failed"}) store.addStoredRun(readRunFolder(root / name), false);
    ComparisonTable table(&store);
    table.refreshAll();
    const std::vector<RunRecord> runs = store.exportableRecords();
    QCOMPARE(runs.size(), size_t(3));
    const std::string html = renderReportHtml(runs, "t");
    const std::vector<QStringList> pdf = pdfSummaryRows(runs);

    const char* const words[] = {"incomplete", "stopped", "failed"};
    for (int i = 0; i < 3; ++i) {
      const auto item = [&](int column) { return table.cellText(i, column); };
      const QStringList h = htmlRow(html, runs[size_t(i)].config.name);
      QCOMPARE(h.size(), 15);
      // HTML: name, mode, twin, status, moments, steps, loss, val loss,
      // memory, state saved, peak saved, lost, error, rounded, tokens/s.
      // PDF: name, mode, status, steps, loss, val loss, memory, state saved,
      // peak saved, lost, rounded, tokens/s.
      const std::vector<std::tuple<QString, QString, QString>> same = {
          {item(ComparisonTable::StatusColumn), h[3], pdf[size_t(i)][2]},
          {item(ComparisonTable::StepsColumn), h[5], pdf[size_t(i)][3]},
          {item(ComparisonTable::LossColumn), h[6], pdf[size_t(i)][4]},
          {item(ComparisonTable::ValLossColumn), h[7], pdf[size_t(i)][5]},
          {item(ComparisonTable::MemoryColumn), h[8], pdf[size_t(i)][6]},
          {item(ComparisonTable::SavedColumn), h[9], pdf[size_t(i)][7]},
          {item(ComparisonTable::UpdateLostColumn), h[11], pdf[size_t(i)][9]},
          {item(ComparisonTable::RoundedColumn), h[13], pdf[size_t(i)][10]},
          {item(ComparisonTable::TokensColumn), h[14], pdf[size_t(i)][11]}};
      for (const auto& [app, inHtml, inPdf] : same) {
        QCOMPARE(inHtml, app);
        QCOMPARE(inPdf, app);
      }
      QCOMPARE(item(ComparisonTable::StatusColumn), QString(words[i]));
      QCOMPARE(item(ComparisonTable::SavedColumn), QString("50.0 %"));
    }
    // The killed run's figures are its steps': not 0 % rounded away, not
    // 0 tokens/s, the steps it reached.
    QCOMPARE(table.cellText(0, ComparisonTable::StepsColumn), QString("336 / 400"));
    QCOMPARE(table.cellText(0, ComparisonTable::RoundedColumn), QString("83.90 %"));
    QCOMPARE(table.cellText(0, ComparisonTable::TokensColumn), QString("1333"));
    QCOMPARE(table.cellText(1, ComparisonTable::TokensColumn), QString("1500"));
    QCOMPARE(table.cellText(2, ComparisonTable::UpdateLostColumn), QString("86.00 %"));  // its one window, at step 20
    // The message lines say the same word.
    QVERIFY(html.find("(incomplete): no summary.json") != std::string::npos);
  }

  // resultFromSteps is the trainer's arithmetic: rounded away over the
  // steps that measured it, tokens/s as tokens over time, update lost over
  // the windows with sqrt(sum se^2)/n, state saved against the fp32 baseline.
  void resultFromStepsIsTheTrainersSummary() {
    RunInfo info;
    info.fp32Baseline = fp32AdamWBaseline(1000);
    std::vector<StepMetrics> steps(4);
    const double tps[] = {1000, 3000, 2000, 4000};
    for (int i = 0; i < 4; ++i) {
      steps[size_t(i)].step = 11 + i;  // resumed at 10
      steps[size_t(i)].loss = 2.0 - 0.1 * i;
      steps[size_t(i)].tokensPerSecond = tps[i];
      steps[size_t(i)].memory.weights = 8000;
    }
    steps[1].roundedAwayFraction = 0.5;
    steps[3].roundedAwayFraction = 0.7;
    steps[1].updateLost = 0.2, steps[1].updateLostStdError = 0.03;
    steps[3].updateLost = 0.4, steps[3].updateLostStdError = 0.04;
    steps[2].valLoss = 1.5;
    const RunResult r = report::resultFromSteps(info, steps);
    QCOMPARE(r.stepsDone, int64_t(14));
    QCOMPARE(r.finalLoss, steps[3].loss);
    QCOMPARE(r.finalValLoss.value_or(0), 1.5);
    QVERIFY(std::abs(r.meanRoundedAwayFraction - 0.6) < 1e-12);
    QVERIFY(std::abs(r.meanTokensPerSecond - 4.0 / (1 / 1000.0 + 1 / 3000.0 + 1 / 2000.0 + 1 / 4000.0)) < 1e-9);
    QVERIFY(std::abs(r.meanUpdateLost.value_or(0) - 0.3) < 1e-12);
    QVERIFY(std::abs(r.meanUpdateLostStdError.value_or(0) - 0.025) < 1e-12);
    QVERIFY(std::abs(r.memorySavedFraction - 0.5) < 1e-12);
  }
};

PLAB_TEST_MAIN(TestRunFiguresAgree)
}  // namespace test_run_figures_agree
#include "test_run_figures_agree.moc"
