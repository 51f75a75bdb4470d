// The rule that tells runs apart (issue 20.3), without Qt widgets: a run's
// colour is its mode's, a later run of a mode gets a dash pattern of its
// own, "later" and " (2)" follow the order the runs started (their folders'
// stamps), never the list order, and file stems are unique.
#include <QtTest/QtTest>

#include <set>

#include "report/fp32_twin.h"
#include "report/mode_colors.h"
#include "report/run_order.h"
#include "report/run_relations.h"
#include "support/test_registry.h"
#include "train/run_config.h"
#include "util/utc_time.h"

namespace test_run_order {

using namespace plab;

namespace {

RunRecord run(const std::string& name, OptimizerMode mode, const std::string& folder,
              const std::string& startedAt = "") {
  RunRecord r;
  r.config = defaultRunConfig();
  r.config.name = name;
  r.config.mode = mode;
  r.config.output_dir = folder;
  r.info.startedAt = startedAt;
  return r;
}

std::vector<std::string> folders(const std::vector<RunRecord>& runs, const std::vector<size_t>& order) {
  std::vector<std::string> out;
  for (size_t i : order) out.push_back(runs[i].config.output_dir);
  return out;
}

}  // namespace

class TestRunOrder : public QObject {
  Q_OBJECT
 private slots:
  void startOrderReadsTheFolderStamp() {
    const std::vector<RunRecord> runs = {
        run("queued", OptimizerMode::Bf16Plain, ""),
        run("b", OptimizerMode::Bf16Plain, "/ws/b-20260102-090000"),
        run("a", OptimizerMode::Bf16Plain, "/ws/zzz-20260101-120000"),
        run("a", OptimizerMode::Bf16Plain, "/ws/zzz-20260101-120000-2"),  // made in the same second
        run("cli", OptimizerMode::Bf16Plain, "/ws/sweep/runs/cli"),       // no stamp: before stamped, by path
        run("cli2", OptimizerMode::Bf16Plain, "/ws/another/"),
    };
    QCOMPARE(folders(runs, report::startOrder(runs)),
             (std::vector<std::string>{"/ws/another/", "/ws/sweep/runs/cli", "/ws/zzz-20260101-120000",
                                       "/ws/zzz-20260101-120000-2", "/ws/b-20260102-090000", ""}));
    // Any list order gives the same start order.
    std::vector<RunRecord> reversed(runs.rbegin(), runs.rend());
    QCOMPARE(folders(reversed, report::startOrder(reversed)), folders(runs, report::startOrder(runs)));
  }

  // run_info.json's started_at (every run the trainer writes) orders runs
  // whose folder names carry no stamp (a sweep's runs/<name>/, --out) among
  // the stamped ones, to the millisecond; it wins over a folder's stamp.
  void startOrderReadsTheRunsOwnStartTime() {
    const std::vector<RunRecord> runs = {
        run("app2", OptimizerMode::Bf16Plain, "/ws/app2-20260101-120000", "2026-01-01T12:00:00.900Z"),
        run("late", OptimizerMode::Bf16Plain, "/ws/sweep/runs/late", "2026-01-01T12:00:00.400Z"),
        run("early", OptimizerMode::Bf16Plain, "/ws/sweep/runs/early", "2026-01-01T11:00:00Z"),
        run("app1", OptimizerMode::Bf16Plain, "/ws/app1-20260101-100000"),  // from before started_at
        run("old", OptimizerMode::Bf16Plain, "/ws/old/runs/x"),              // neither: first, by path
        run("bad", OptimizerMode::Bf16Plain, "/ws/bad-20260101-090000", "yesterday"),  // unreadable: the folder's
        // The folder says 13:00 (made while queued); the run started at 11:30.
        run("queued", OptimizerMode::Bf16Plain, "/ws/q-20260101-130000", "2026-01-01T11:30:00.000000001Z"),
    };
    QCOMPARE(folders(runs, report::startOrder(runs)),
             (std::vector<std::string>{"/ws/old/runs/x", "/ws/bad-20260101-090000", "/ws/app1-20260101-100000",
                                       "/ws/sweep/runs/early", "/ws/q-20260101-130000", "/ws/sweep/runs/late",
                                       "/ws/app2-20260101-120000"}));
  }

  // Issue 35: opening a CLI sweep made after the runs on show leaves their
  // styles alone (its folders used to sort first and shift every repeat).
  void openingALaterSweepKeepsTheShownStyles() {
    std::vector<RunRecord> runs = {run("a", OptimizerMode::Bf16Plain, "/ws/a-20260101-100000", "2026-01-01T10:00:00.100Z"),
                                   run("b", OptimizerMode::Bf16Plain, "/ws/b-20260101-100500", "2026-01-01T10:05:00.100Z"),
                                   run("f", OptimizerMode::Fp32AdamW, "/ws/f-20260101-101000", "2026-01-01T10:10:00.100Z")};
    const std::vector<RunStyle> before = runStyles(runs);
    for (const char* mode : {"fp32", "bf16"})
      runs.push_back(run(std::string("sw-") + mode, optimizerModeFromId(mode), std::string("/ws/sweep/runs/sw-") + mode,
                         std::string("2026-01-01T11:0") + (mode[0] == 'f' ? "0" : "1") + ":00.000Z"));
    const std::vector<RunStyle> after = runStyles(runs);
    for (size_t i = 0; i < before.size(); ++i) QVERIFY2(after[i] == before[i], runs[i].config.name.c_str());
    QCOMPARE(after[3].repeat, 1);  // the sweep's fp32 after f
    QCOMPARE(after[4].repeat, 2);  // its bf16 after a and b
    QVERIFY(report::relateRuns(runs).styles == after);  // what the app's table and charts use
  }

  void utcStampsRoundTrip() {
    const std::string now = utcTimestampNow();
    QCOMPARE(now.size(), size_t(24));  // 2026-01-02T09:00:00.123Z
    const std::string key = sortableUtcStamp(now);
    QCOMPARE(key.size(), size_t(17));
    QCOMPARE(key.substr(0, 4), now.substr(0, 4));
    QCOMPARE(key.substr(14), now.substr(20, 3));
    QCOMPARE(sortableUtcStamp("2026-01-02T09:00:00Z"), std::string("20260102090000000"));
    QCOMPARE(sortableUtcStamp("2026-01-02T09:00:00.5Z"), std::string("20260102090000500"));
    for (const char* bad : {"", "Z", "2026-01-02 09:00:00Z", "2026-01-02T09:00:00", "2026-01-02T09:00:00.Z",
                            "2026-01-02T09:00:00.1234567890Z", "2026-01-02T09:0a:00Z", "2026-01-02T09:00:00+01:00"})
      QVERIFY2(sortableUtcStamp(bad).empty(), bad);
  }

  void repeatsFollowTheStartOrderAndKeepTheModeColour() {
    std::vector<RunRecord> runs = {run("late", OptimizerMode::Bf16Plain, "/ws/late-20260101-110000"),
                                   run("near", OptimizerMode::Bf16Nearest, "/ws/near-20260101-100500"),
                                   run("early", OptimizerMode::Bf16Plain, "/ws/early-20260101-100000")};
    const std::vector<RunStyle> styles = runStyles(runs);
    QCOMPARE(styles[2].repeat, 0);  // started first
    QCOMPARE(styles[0].repeat, 1);
    QCOMPARE(styles[1].repeat, 0);  // the only one of its mode
    QVERIFY(styles[0].color == modeColor(OptimizerMode::Bf16Plain));
    QVERIFY(styles[2].color == modeColor(OptimizerMode::Bf16Plain));
    QVERIFY(!(styles[0].color == styles[1].color));
    std::swap(runs[0], runs[2]);
    const std::vector<RunStyle> swapped = runStyles(runs);
    QVERIFY(swapped[0] == styles[2] && swapped[2] == styles[0] && swapped[1] == styles[1]);
  }

  // Every mode its own colour; every repeat its own dash pattern.
  void patternsAndColoursAreAllDistinct() {
    std::set<std::string> colours;
    for (OptimizerMode m : {OptimizerMode::Fp32AdamW, OptimizerMode::Bf16Plain, OptimizerMode::Bf16Nearest,
                            OptimizerMode::Bf16Kahan, OptimizerMode::Bf16StochasticRounding,
                            OptimizerMode::Fp32MasterWeights})
      colours.insert(hexColor(modeColor(m)));
    QCOMPARE(colours.size(), size_t(6));
    QVERIFY(repeatDashPattern(0).empty());
    QCOMPARE(repeatStyleName(0), std::string("solid"));
    std::set<std::vector<double>> patterns;
    std::set<std::string> names;
    for (int k = 0; k < 40; ++k) {
      const std::vector<double> p = repeatDashPattern(k);
      QCOMPARE(p.size() % 2, size_t(0));  // dash, gap pairs
      patterns.insert(p);
      names.insert(repeatStyleName(k));
    }
    QCOMPARE(patterns.size(), size_t(40));
    QCOMPARE(names.size(), size_t(40));
  }

  // " (2)" goes to the run that started second, whatever the list order.
  void labelsAndFileStemsAreStableAndUnique() {
    std::vector<RunRecord> runs = {run("run", OptimizerMode::Bf16Plain, "/ws/run-20260101-110000"),
                                   run("run", OptimizerMode::Fp32AdamW, "/ws/run-20260101-100000"),
                                   run("run (2)", OptimizerMode::Bf16Kahan, "/ws/x-20260101-120000"),
                                   run("run_", OptimizerMode::Bf16Kahan, "/ws/y-20260101-130000")};
    QCOMPARE(report::runLabel(runs, 1), std::string("run"));
    QCOMPARE(report::runLabel(runs, 0), std::string("run (2)"));
    const std::vector<std::string> stems = report::uniqueFileStems(runs);
    QCOMPARE(std::set<std::string>(stems.begin(), stems.end()).size(), runs.size());
    QCOMPARE(stems[1], std::string("run"));
    QCOMPARE(stems[0], std::string("run__2_"));
    QCOMPARE(stems[2], std::string("run__2_-2"));  // "run (2)" by name maps to the same stem
    // Without folders (tests, queued runs): the list order.
    std::vector<RunRecord> plain = {run("a", OptimizerMode::Bf16Plain, ""), run("a", OptimizerMode::Bf16Plain, "")};
    QCOMPARE(report::runLabel(plain, 1), std::string("a (2)"));
    QCOMPARE(runStyles(plain)[1].repeat, 1);
  }
};

PLAB_TEST_MAIN(TestRunOrder)
}  // namespace test_run_order
#include "test_run_order.moc"
