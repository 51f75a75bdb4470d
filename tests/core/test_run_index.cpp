// A run folder's index (report/run_index.h) and its scalar steps
// (report/scalar_steps.h): read back, it is the folder read in full without
// the per-layer records, and it is trusted only while the folder's files
// are the ones it was made from.
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>
#include <limits>
#include <thread>

#include "report/run_index.h"
#include "report/run_order.h"
#include "report/scalar_steps.h"
#include "support/hostile_files.h"
#include "support/run_folders.h"
#include "support/test_registry.h"
#include "util/errors.h"
#include "util/json_file.h"

namespace test_run_index {

using namespace plab;
namespace fs = std::filesystem;

namespace {

using plab::test::namedConfig;

// Every field the index keeps, as JSON: what must equal the full read.
nlohmann::json listedView(const StoredRun& run) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepMetrics& m : report::scalarSteps(run.record.steps)) steps.push_back(toJson(m));
  nlohmann::json info = toJson(run.record.info);
  info.erase("modules");
  return {{"config", run.record.config.toJson()}, {"info", info},          {"result", toJson(run.record.result)},
          {"status", storedRunStatusId(run.status)}, {"started", run.startedAt}, {"steps", steps},
          {"incomplete", run.record.incomplete},      {"skipped", run.metricsLinesSkipped},
          {"display", run.display.name},              {"reference", run.record.fp32Reference}};
}

// The next write lands with another modification time.
void tick() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

}  // namespace

class TestRunIndex : public QObject {
  Q_OBJECT
 private slots:
  void scalarStepsRoundTripEveryField() {
    std::vector<StepMetrics> steps;
    for (int s = 1; s <= 7; ++s) {
      StepMetrics m = test::storedStep(s, 0.01);
      if (s == 3) m.loss = std::nan("");            // a diverged step stays NaN
      if (s % 3 == 0) m.updateLost = 0.25 * s, m.updateLostStdError = 0.01, m.updatePending = 0.001;
      if (s == 5) m.lossScale = 65536, m.stepSkipped = true, m.gradFp16ZeroShare = 0.1, m.gradFp16FlushShare = 0.2;
      if (s > 4) m.memory.kahan = 1 << 20;         // the state changes once
      if (s == 6) m.roundedAwayFraction.reset();    // a step without statistics
      steps.push_back(m);
    }
    const report::PackedSteps packed = report::packScalarSteps(steps);
    QCOMPARE(packed.columns.size(), steps.size() * report::kPackedStepBytes);
    const std::vector<StepMetrics> back =
        report::unpackScalarSteps(nlohmann::json::parse(packed.sparse.dump()), packed.columns);
    QCOMPARE(back.size(), steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      QCOMPARE(toJson(back[i]).dump(), toJson(report::scalarStep(steps[i])).dump());
      QVERIFY(back[i].layers.empty());
    }
    QVERIFY(std::isnan(back[2].loss));
    QVERIFY(!back[5].roundedAwayFraction.has_value());
  }

  void scalarStepsRefuseWhatTheyDidNotWrite() {
    const report::PackedSteps good = report::packScalarSteps({test::storedStep(1, 0), test::storedStep(2, 0)});
    using Change = std::function<void(report::PackedSteps&)>;
    for (const auto& [what, change] : std::vector<std::pair<const char*, Change>>{
             {"columns cut", [](report::PackedSteps& p) { p.columns.pop_back(); }},
             {"columns of another step count", [](report::PackedSteps& p) { p.columns += p.columns.substr(0, 8); }},
             {"steps backwards",
              [](report::PackedSteps& p) {
                p.columns = report::packScalarSteps({test::storedStep(2, 0), test::storedStep(1, 0)}).columns;
              }},
             {"step zero", [](report::PackedSteps& p) { p.columns.replace(0, 8, std::string(8, '\0')); }},
             {"position out of range", [](report::PackedSteps& p) { p.sparse["val_loss"] = {{"at", {5}}, {"value", {1.0}}}; }},
             {"text for a number", [](report::PackedSteps& p) { p.sparse["val_loss"] = {{"at", {1}}, {"value", {"x"}}}; }},
             {"not an object", [](report::PackedSteps& p) { p.sparse = nlohmann::json::array(); }},
             {"no memory", [](report::PackedSteps& p) { p.sparse.erase("memory"); }}}) {
      report::PackedSteps bad = good;
      change(bad);
      QVERIFY_THROWS_EXCEPTION(ConfigError, report::unpackScalarSteps(bad.sparse, bad.columns));
      Q_UNUSED(what);
    }
    // Every bit of a figure comes back: infinities and the last digit too.
    std::vector<StepMetrics> steps = {test::storedStep(1, 0), test::storedStep(2, 0)};
    steps[0].loss = std::numeric_limits<double>::infinity();
    steps[1].loss = 2.0000000000000004;
    const report::PackedSteps packed = report::packScalarSteps(steps);
    const auto back = report::unpackScalarSteps(packed.sparse, packed.columns);
    QVERIFY(std::isinf(back[0].loss));
    QCOMPARE(back[1].loss, 2.0000000000000004);
  }

  void indexReadsAsTheFolderWithoutLayerRecords() {
    QTemporaryDir tmp;
    const fs::path root(tmp.path().toStdString());
    const std::vector<std::pair<std::string, std::string>> kinds = {{"done", "completed"}, {"stopped", "stopped"},
                                                                    {"failed", "failed"}};
    for (const auto& [name, status] : kinds) {
      const fs::path dir = test::writeStoredRun(root / name, namedConfig(name, OptimizerMode::Bf16Kahan), 9, status, 0.02);
      writeRunDisplay(dir, {"shown as " + name, true, "ref-fp32"});
      report::indexRunFolder(dir);
      const auto indexed = report::readRunIndex(dir);
      QVERIFY2(indexed.has_value(), name.c_str());
      QCOMPARE(listedView(*indexed).dump(), listedView(readRunFolder(dir)).dump());
      const report::ListedRun listed = report::readRunForListing(dir, false);
      QVERIFY(listed.fromIndex);
      QVERIFY(listed.run.record.steps.front().layers.empty());
      QCOMPARE(listed.run.record.steps.size(), size_t(9));
    }
  }

  void aChangedFolderIsReadAgainNotFromItsIndex() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "run",
                                              namedConfig("run", OptimizerMode::Bf16Plain), 5);
    report::indexRunFolder(dir);
    QVERIFY(report::readRunIndex(dir).has_value());
    tick();
    // A resumed run appends to its metrics: the index no longer describes it.
    { std::ofstream(dir / "metrics.jsonl", std::ios::app) << toJson(test::storedStep(6, 0)).dump() << "\n"; }
    QVERIFY(!report::readRunIndex(dir).has_value());
    const report::ListedRun listed = report::readRunForListing(dir, /*writeMissingIndex=*/true);
    QVERIFY(!listed.fromIndex);
    QCOMPARE(listed.run.record.steps.size(), size_t(6));
    // ... and is indexed again for next time.
    const auto again = report::readRunIndex(dir);
    QVERIFY(again.has_value());
    QCOMPARE(again->record.steps.size(), size_t(6));
    tick();
    writeJsonFileAtomically(dir / "summary.json", {{"status", "failed"}, {"message", "edited"}});
    QVERIFY(!report::readRunIndex(dir).has_value());
  }

  void aRunStillGoingIsNotIndexedButListed() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "live",
                                              namedConfig("live", OptimizerMode::Bf16StochasticRounding), 4, "");
    const report::ListedRun listed = report::readRunForListing(dir, true);
    QCOMPARE(listed.run.status, StoredRunStatus::Incomplete);
    QVERIFY(!fs::exists(dir / report::kRunIndexFileName));
    QCOMPARE(listed.run.record.steps.size(), size_t(4));
  }

  void aHostileIndexIsIgnoredAndTheFolderRead() {
    QTemporaryDir tmp;
    const fs::path root(tmp.path().toStdString());
    int n = 0;
    for (const auto& make : std::vector<std::function<void(const fs::path&)>>{
             [](const fs::path& f) { std::ofstream(f) << "{\"format\": \"precision-lab run index\", \"version\": 1"; },
             [](const fs::path& f) { test::writeDeepNesting(f); },
             [](const fs::path& f) { test::makeFifo(f); },
             [](const fs::path& f) { test::linkToDevZero(f); },
             [](const fs::path& f) { std::ofstream(f) << "[1, 2, 3]"; }}) {
      const fs::path dir =
          test::writeStoredRun(root / ("run" + std::to_string(n++)), namedConfig("r", OptimizerMode::Fp32AdamW), 3);
      make(dir / report::kRunIndexFileName);
      QVERIFY(!report::readRunIndex(dir).has_value());
      const report::ListedRun listed = report::readRunForListing(dir, false);
      QVERIFY(!listed.fromIndex);
      QCOMPARE(listed.run.record.steps.size(), size_t(3));
    }
    // An index with valid stamps but lies inside is still what the tool wrote
    // only if it parses: a forged status is refused.
    const fs::path forged = test::writeStoredRun(root / "forged", namedConfig("f", OptimizerMode::Fp32AdamW), 3);
    report::indexRunFolder(forged);
    nlohmann::json j = nlohmann::json::parse(std::ifstream(forged / report::kRunIndexFileName));
    j["status"] = "exploded";
    { std::ofstream(forged / report::kRunIndexFileName, std::ios::trunc) << j.dump(); }
    QVERIFY(!report::readRunIndex(forged).has_value());
    // ... and so is one whose columns are not the ones it was written with:
    // changed, cut, missing, or not a regular file.
    const fs::path columns = forged / report::kRunIndexColumnsFileName;
    for (const auto& spoil : std::vector<std::function<void()>>{
             [&] { std::fstream(columns, std::ios::in | std::ios::out | std::ios::binary).put('\x7f'); },
             [&] { fs::resize_file(columns, fs::file_size(columns) - 8); },
             [&] { fs::remove(columns); },
             [&] { fs::remove(columns), test::makeFifo(columns); }}) {
      fs::remove(columns);
      report::indexRunFolder(forged);
      QVERIFY(report::readRunIndex(forged).has_value());
      spoil();
      QVERIFY(!report::readRunIndex(forged).has_value());
      QCOMPARE(report::readRunForListing(forged, false).run.record.steps.size(), size_t(3));
    }
  }

  // A sweep's runs/<name>/ carry no stamp in their names: listed from their
  // indexes, their run_info.json's started_at must still order them.
  void theIndexKeepsTheStartTime() {
    QTemporaryDir tmp;
    const fs::path runs = fs::path(tmp.path().toStdString()) / "sweep" / "runs";
    const std::vector<std::pair<std::string, std::string>> started = {{"a-bf16", "2026-01-02T09:00:05.250Z"},
                                                                      {"b-fp32", "2026-01-02T09:00:05.100Z"}};
    std::vector<RunRecord> listed;
    for (const auto& [name, at] : started) {
      const fs::path dir = test::writeStoredRun(runs / name, namedConfig(name, OptimizerMode::Fp32AdamW), 3);
      nlohmann::json info = readJsonFile(dir / "run_info.json").value;
      info["started_at"] = at;
      writeJsonFileAtomically(dir / "run_info.json", info);
      report::indexRunFolder(dir);
      const report::ListedRun run = report::readRunForListing(dir, false);
      QVERIFY(run.fromIndex);
      QCOMPARE(run.run.record.info.startedAt, at);
      listed.push_back(run.run.record);
    }
    // b-fp32 started first although its folder name sorts after a-bf16's.
    QCOMPARE(report::startOrder(listed), (std::vector<size_t>{1, 0}));

    // An index from before version 2 may lack started_at: the folder is read instead.
    const fs::path old = runs / "a-bf16";
    nlohmann::json j = readJsonFile(old / report::kRunIndexFileName).value;
    j["version"] = 1;
    j["info"].erase("started_at");
    writeJsonFileAtomically(old / report::kRunIndexFileName, j);
    const report::ListedRun reread = report::readRunForListing(old, false);
    QVERIFY(!reread.fromIndex);
    QCOMPARE(reread.run.record.info.startedAt, std::string("2026-01-02T09:00:05.250Z"));
  }

  // An index of version 2 (columns of JSON numbers inside): not read; listing the
  // workspace's run reads the folder and indexes it again in this version.
  void anOlderIndexIsRebuiltWhenListed() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "old",
                                              namedConfig("old", OptimizerMode::Bf16Kahan), 5);
    report::indexRunFolder(dir);
    nlohmann::json j = readJsonFile(dir / report::kRunIndexFileName).value;
    QCOMPARE(j.at("version").get<int>(), report::kRunIndexVersion);
    j["version"] = 2;
    nlohmann::json loss = nlohmann::json::array();
    for (int s = 1; s <= 5; ++s) loss.push_back(test::storedStep(s, 0).loss);
    j["steps"]["loss"] = loss;  // how version 2 wrote a column, in index.json itself
    j.erase("columns");
    writeJsonFileAtomically(dir / report::kRunIndexFileName, j);
    fs::remove(dir / report::kRunIndexColumnsFileName);
    QVERIFY(!report::readRunIndex(dir).has_value());
    const report::ListedRun listed = report::readRunForListing(dir, /*writeMissingIndex=*/true);
    QVERIFY(!listed.fromIndex);
    QCOMPARE(listed.run.record.steps.size(), size_t(5));
    QCOMPARE(readJsonFile(dir / report::kRunIndexFileName).value.at("version").get<int>(), report::kRunIndexVersion);
    const report::ListedRun again = report::readRunForListing(dir, false);
    QVERIFY(again.fromIndex);
    QCOMPARE(listedView(again.run).dump(), listedView(readRunFolder(dir)).dump());
  }

  void theReportWriterIndexesTheFolder() {
    QTemporaryDir tmp;
    const fs::path dir = test::writeStoredRun(fs::path(tmp.path().toStdString()) / "cli",
                                              namedConfig("cli", OptimizerMode::Bf16Kahan), 6);
    const StoredRun run = readRunFolder(dir);
    writeRunReport(dir, run.record);  // what the CLI does when a run ends
    QVERIFY(report::readRunIndex(dir).has_value());
  }
};

PLAB_TEST_MAIN(TestRunIndex)
}  // namespace test_run_index
#include "test_run_index.moc"
