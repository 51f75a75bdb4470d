// The runs table's filter (report/run_query.h) over a run's fields
// (report/run_fields.h), and the groups it is grouped into
// (report/run_groups.h): what each term matches, and a seed group's mean
// and 95 % interval against a hand computation.
#include <QtTest/QtTest>

#include <cmath>

#include "report/fp32_twin.h"
#include "report/paired_gap.h"
#include "report/run_groups.h"
#include "report/run_query.h"
#include "report/run_relations.h"
#include "report/source_labels.h"
#include "support/test_registry.h"

namespace test_run_query {

using namespace plab;
using namespace plab::report;

namespace {

RunRecord finishedRun(const std::string& name, OptimizerMode mode, uint64_t seed, double finalVal,
                      const std::string& model = "gpt2") {
  RunRecord r;
  r.config = defaultRunConfig();
  r.config.name = name;
  r.config.mode = mode;
  r.config.seed = seed;
  r.config.steps = 2;
  r.config.model.path = model;
  r.config.output_dir = "/ws/" + name;
  for (int s = 1; s <= 2; ++s) {
    StepMetrics m;
    m.step = s;
    m.loss = finalVal + 0.1;
    if (s == 2) m.valLoss = finalVal;
    r.steps.push_back(m);
  }
  r.result.status = RunStatus::Completed;
  r.result.stepsDone = 2;
  r.result.finalLoss = finalVal + 0.1;
  r.result.finalValLoss = finalVal;
  return r;
}

bool matches(const std::string& filter, const RunRecord& run, const std::string& status = "completed") {
  return matchesQuery(parseRunQuery(filter), runFields(run, status, "folder-20250101-000000"));
}

}  // namespace

class TestRunQuery : public QObject {
  Q_OBJECT
 private slots:
  void wordsMatchNameModeStatusAndFolder() {
    const RunRecord r = finishedRun("run3-bf16-kahan", OptimizerMode::Bf16Kahan, 1, 2.0);
    QVERIFY(matches("", r));
    QVERIFY(matches("  KAHAN  run3 ", r));
    QVERIFY(!matches("kahan fp32", r));
    QVERIFY(!matches("-kahan", r));
    QVERIFY(matches("-sr", r));
    QVERIFY(matches("COMPLETED", r));
    QVERIFY(matches("20250101", r));
    QVERIFY(matches("-", r));  // a lone dash is a word
  }

  void fieldsCompareAsTextOrNumbers() {
    RunRecord r = finishedRun("a", OptimizerMode::Bf16StochasticRounding, 3, 2.31, "models/llama-tiny");
    r.config.adamw.lr = 3e-5;
    r.config.plan.gemm_format = GemmFormat::Mxfp8;
    QVERIFY(matches("mode:bf16-sr", r));
    QVERIFY(matches("mode:bf16", r));      // contains
    QVERIFY(!matches("mode=bf16", r));     // exactly
    QVERIFY(matches("mode=bf16-sr", r));
    QVERIFY(matches("lr<1e-4", r));
    QVERIFY(!matches("lr>=1e-4", r));
    QVERIFY(matches("adamw.lr=0.00003", r));  // a number equals however it is written
    QVERIFY(matches("lr:3e-5", r));
    QVERIFY(matches("model:llama", r));
    QVERIFY(matches("seed>=3 seed<=3 seed!=4", r));
    QVERIFY(matches("format=mxfp8", r));
    QVERIFY(matches("val_loss<2.4 loss>2.4", r));
    QVERIFY(matches("-model:gpt2", r));
    QVERIFY(matches("name:\"a\"", r));
    RunRecord plain = finishedRun("b", OptimizerMode::Fp32AdamW, 1, 2.2);
    QVERIFY(matches("format=bf16", plain));  // a plan without a format multiplies in bf16
    QVERIFY(!matches("update_lost>0", plain));  // a figure it does not have matches no order
    QVERIFY(matches("status:running", plain, "running"));
  }

  void unknownFieldsAreNamedAndMatchNothing() {
    const RunQuery q = parseRunQuery("lrr:3 mode:fp32 plan.overrides.lm_head:fp32");
    QCOMPARE(q.unknownFields, std::vector<std::string>{"lrr"});
    QVERIFY(!matchesQuery(q, runFields(finishedRun("a", OptimizerMode::Fp32AdamW, 1, 2), "completed", "f")));
  }

  void seedFamiliesGroupWithTheirPairedGap() {
    // Two configs over three seeds, each with its fp32 twin: the groups and
    // the gap's mean and interval computed by hand.
    std::vector<RunRecord> runs;
    const double fp32[] = {2.30, 2.28, 2.33};
    const double bf16[] = {2.36, 2.33, 2.40};
    for (uint64_t s = 1; s <= 3; ++s) {
      runs.push_back(finishedRun("fp32-s" + std::to_string(s), OptimizerMode::Fp32AdamW, s, fp32[s - 1]));
      runs.push_back(finishedRun("bf16-s" + std::to_string(s), OptimizerMode::Bf16Plain, s, bf16[s - 1]));
    }
    const RunRelations relations = relateRuns(runs);
    std::vector<size_t> all(runs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    Grouping seeds;
    seeds.kind = Grouping::Kind::SeedFamily;
    const std::vector<RunGroup> groups = groupRuns(runs, std::vector<const RunFields*>(runs.size()), relations, all, seeds);
    QCOMPARE(groups.size(), size_t(2));
    QCOMPARE(groups[1].members, (std::vector<size_t>{1, 3, 5}));
    QCOMPARE(groups[1].label, std::string("bf16 × 3 seeds"));
    const GroupFigures f = groupFigures(runs, relations, groups[1].members);
    QCOMPARE(f.count, 3);
    // By hand: differences 0.06, 0.05, 0.07; mean 0.06; sd 0.01; t(2) 4.303; half 4.303 * 0.01 / sqrt(3).
    QVERIFY(f.gapToFp32.has_value());
    QVERIFY(std::fabs(f.gapToFp32->mean - 0.06) < 1e-12);
    QVERIFY(std::fabs(f.gapToFp32->sd - 0.01) < 1e-12);
    QVERIFY(std::fabs((f.gapToFp32->ciHigh - f.gapToFp32->mean) - 4.303 * 0.01 / std::sqrt(3.0)) < 1e-12);
    QVERIFY(f.gapIsValidation);
    // The same figure the verdict's paired test gives.
    const auto paired = pairedGap(runs, relations, 5);
    QVERIFY(paired.has_value());
    QCOMPARE(paired->total.mean, f.gapToFp32->mean);
    QCOMPARE(paired->total.ciLow, f.gapToFp32->ciLow);
    QVERIFY(std::fabs(f.finalValLoss->mean - (2.36 + 2.33 + 2.40) / 3) < 1e-12);
    QCOMPARE(estimateText(*f.gapToFp32, 4, false, true), std::string("+0.0600 ± 0.0248"));
  }

  // A model built from a config is named by its folder, never "config.json".
  void sourcesHaveShortNames() {
    QCOMPARE(modelSourceLabel("embedded", ""), std::string("embedded tiny-gpt2"));
    QCOMPARE(modelSourceLabel("config", "/w/.tiny-llama/config.json"), std::string(".tiny-llama"));
    QCOMPARE(modelSourceLabel("local", "/models/qwen2-0.5b/"), std::string("qwen2-0.5b"));
    QCOMPARE(modelSourceLabel("hub", "openai-community/gpt2"), std::string("openai-community/gpt2"));
    QCOMPARE(dataSourceLabel(""), std::string("default corpus"));
    QCOMPARE(dataSourceLabel("/data/wiki.jsonl"), std::string("wiki.jsonl"));
    RunRecord run = finishedRun("x", OptimizerMode::Bf16Kahan, 1, 2.3);
    run.config.model.source = "config";
    run.config.model.path = "/w/.tiny-llama/config.json";
    const RunFields f = runFields(run, "completed", "x");
    QCOMPARE(fieldValueLabel("model", f.find("model")), std::string(".tiny-llama"));
    QCOMPARE(fieldValueLabel("mode", f.find("mode")), std::string("bf16-kahan"));
    QCOMPARE(fieldValueLabel("lr", f.find("lr")), std::string("lr=5e-05"));
  }

  void groupingByFieldsNamesTheValues() {
    std::vector<RunRecord> runs = {finishedRun("a", OptimizerMode::Fp32AdamW, 1, 2.3),
                                   finishedRun("b", OptimizerMode::Bf16Plain, 1, 2.4, "llama"),
                                   finishedRun("c", OptimizerMode::Fp32AdamW, 2, 2.2, "llama")};
    const RunRelations relations = relateRuns(runs);
    std::vector<RunFields> fields;
    for (const RunRecord& r : runs) fields.push_back(runFields(r, "completed", r.config.name));
    std::vector<const RunFields*> pointers;
    for (const RunFields& f : fields) pointers.push_back(&f);
    const Grouping g = parseGrouping("mode, model");
    QCOMPARE(g.fields, (std::vector<std::string>{"mode", "model.path"}));
    const auto groups = groupRuns(runs, pointers, relations, {0, 1, 2}, g);
    QCOMPARE(groups.size(), size_t(3));
    QCOMPARE(groups[0].label, std::string("fp32 · gpt2"));  // the values of common fields, not their paths
    const auto byMode = groupRuns(runs, pointers, relations, {0, 1, 2}, parseGrouping("mode"));
    QCOMPARE(byMode.size(), size_t(2));
    QCOMPARE(byMode[0].members, (std::vector<size_t>{0, 2}));
    QCOMPARE(parseGrouping("seeds").kind, Grouping::Kind::SeedFamily);
    QCOMPARE(parseGrouping(" none ").kind, Grouping::Kind::None);
  }

  // A group row's fp32-twin cell says what holds for the group: its twins'
  // seed family, one twin, a count of twins from several configs, or none.
  void aGroupNamesTheFp32RunsItsRunsAreMeasuredAgainst() {
    std::vector<RunRecord> runs;
    for (uint64_t s = 1; s <= 3; ++s) {
      runs.push_back(finishedRun("fp32-s" + std::to_string(s), OptimizerMode::Fp32AdamW, s, 2.3));
      runs.push_back(finishedRun("bf16-s" + std::to_string(s), OptimizerMode::Bf16Plain, s, 2.35));
    }
    RunRecord other = finishedRun("fp32-lr", OptimizerMode::Fp32AdamW, 1, 2.2);
    other.config.adamw.lr = 1e-3;
    runs.push_back(other);  // 6
    RunRecord otherBf16 = finishedRun("bf16-lr", OptimizerMode::Bf16Plain, 1, 2.25);
    otherBf16.config.adamw.lr = 1e-3;
    runs.push_back(otherBf16);  // 7
    RunRecord lonely = finishedRun("bf16-lonely", OptimizerMode::Bf16Plain, 1, 2.25);
    lonely.config.adamw.lr = 7e-3;
    runs.push_back(lonely);  // 8: no fp32 run with its lr
    const RunRelations relations = relateRuns(runs);
    QCOMPARE(groupFp32TwinText(runs, relations, {1, 3, 5}).cell, std::string("fp32 × 3 seeds"));
    QCOMPARE(groupFp32TwinText(runs, relations, {1}).cell, std::string("fp32-s1"));
    QCOMPARE(groupFp32TwinText(runs, relations, {0, 2, 4}).cell, std::string("themselves"));
    QCOMPARE(groupFp32TwinText(runs, relations, {8}).cell, std::string("no fp32 twin"));
    QCOMPARE(groupFp32TwinText(runs, relations, {}).cell, std::string("–"));
    // Mode bf16 over two lrs: four twins of two configs; the lonely run has none.
    const GroupTwinText byMode = groupFp32TwinText(runs, relations, {1, 3, 5, 7, 8});
    QCOMPARE(byMode.cell, std::string("4 fp32 runs (4 of 5 runs)"));
    QVERIFY2(byMode.tip.find("fp32-s1, fp32-s2, fp32-s3, fp32-lr") != std::string::npos, byMode.tip.c_str());
    QVERIFY2(byMode.tip.find("1 runs have none") != std::string::npos, byMode.tip.c_str());
    // A group holding fp32 runs too: they are their own reference.
    const GroupTwinText mixed = groupFp32TwinText(runs, relations, {0, 1});
    QCOMPARE(mixed.cell, std::string("fp32-s1 (1 of 2 runs)"));
    QVERIFY2(mixed.tip.find("1 fp32 runs are their own reference") != std::string::npos, mixed.tip.c_str());
  }

  // Relating with each run's keys kept (the app's store) gives what
  // relating from scratch gives.
  void relationsFromKeptKeysEqualAFreshRelate() {
    std::vector<RunRecord> runs;
    for (uint64_t s = 1; s <= 2; ++s)
      for (auto mode : {OptimizerMode::Fp32AdamW, OptimizerMode::Bf16Kahan, OptimizerMode::Fp32MasterWeights})
        runs.push_back(finishedRun(std::string(optimizerModeId(mode)) + "-s" + std::to_string(s), mode, s, 2.3));
    runs[1].config.plan.gemm_format = GemmFormat::Fp8E4m3;
    std::vector<RunKeys> keys;
    for (const RunRecord& r : runs) keys.push_back(runKeys(r.config));
    std::vector<const RunKeys*> pointers;
    for (const RunKeys& k : keys) pointers.push_back(&k);
    const RunRelations fresh = relateRuns(runs), kept = relateRuns(runs, pointers);
    QCOMPARE(kept.twins, fresh.twins);
    QCOMPARE(kept.familyKeys, fresh.familyKeys);
    QCOMPARE(kept.mixedFamilyKeys, fresh.mixedFamilyKeys);
    QCOMPARE(kept.gemmReferenceKeys, fresh.gemmReferenceKeys);
    QCOMPARE(kept.labels, fresh.labels);
    // The keys are the documented ones.
    QCOMPARE(keys[1].twin, fp32TwinKey(runs[1].config).dump());
    QCOMPARE(keys[1].family, familyKey(runs[1].config).dump());
    QCOMPARE(kept.mixedFamilyOf(4), (std::vector<size_t>{2, 5}));
    QVERIFY(kept.gemmReferenceKeys[1] != kept.familyKeys[1]);
    QCOMPARE(kept.gemmReferenceKeys[1], kept.gemmReferenceKeys[4]);
  }

  void relationsGiveThePerRunAnswers() {
    std::vector<RunRecord> runs;
    for (uint64_t s = 1; s <= 3; ++s) {
      runs.push_back(finishedRun("same", OptimizerMode::Fp32AdamW, s, 2.3));
      runs.push_back(finishedRun("same", OptimizerMode::Bf16Kahan, s, 2.31));
    }
    runs[3].fp32Reference = "same";  // chosen by hand: the folder named "same" (all share it here)
    const RunRelations relations = relateRuns(runs);
    for (size_t i = 0; i < runs.size(); ++i) QCOMPARE(relations.labels[i], runLabel(runs, i));
    QCOMPARE(relations.labels[1], std::string("same (2)"));
    // Each seed's twin is the fp32 run of its seed; one chosen by hand is
    // the first run of that folder name beside it (here: all share it).
    QCOMPARE(relations.twins[1], std::optional<size_t>(0));
    QCOMPARE(relations.twins[5], std::optional<size_t>(4));
    QCOMPARE(relations.twins[3], std::optional<size_t>(0));
    QCOMPARE(relations.twins[2], std::optional<size_t>(2));  // fp32 is its own
    QCOMPARE(relations.familyOf(1), (std::vector<size_t>{1, 3, 5}));
    runs[0].result.status = RunStatus::Failed;  // a failed fp32 run is nobody's twin
    QCOMPARE(relateRuns(runs).twins[1], std::optional<size_t>());
  }
};

PLAB_TEST_MAIN(TestRunQuery)
}  // namespace test_run_query
#include "test_run_query.moc"
