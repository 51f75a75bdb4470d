// Run configs: JSON round trip, strict errors naming the key, sweeps, and
// the learning-rate schedule.
#include <QtTest/QtTest>

#include <cmath>
#include <set>

#include "support/error_capture.h"
#include "support/test_registry.h"
#include "train/lr_schedule.h"
#include "train/run_config.h"
#include "util/errors.h"

namespace test_run_config {

using namespace plab;
using nlohmann::json;

using plab::test::errorMessageOf;
using plab::test::mentions;
using plab::test::throwsError;

class TestRunConfig : public QObject {
  Q_OBJECT
 private slots:
  void defaultsRoundTrip() {
    for (const RunConfig& c : {RunConfig{}, defaultRunConfig()}) {
      const json j = c.toJson();
      QCOMPARE(RunConfig::fromJson(j).toJson(), j);
    }
    // An empty object means "all defaults".
    QCOMPARE(RunConfig::fromJson(json::object()).toJson(), RunConfig{}.toJson());
  }

  void everyFieldRoundTrips() {
    RunConfig c;
    c.name = "custom";
    c.model.source = "hub";
    c.model.path = "org/model";
    c.model.revision = "abc123";
    c.data.path = "/tmp/data.jsonl";
    c.data.text_field = "content";
    c.data.val_fraction = 0.25;
    c.data.seed = 9;
    c.plan.preset = PlanPreset::AllBf16;
    c.plan.setSubtree("transformer.h.0", LayerPrecision::Fp32);
    c.mode = OptimizerMode::Bf16StochasticRounding;
    c.adamw.lr = 3e-4;
    c.adamw.beta2 = 0.95;
    c.adamw.moments = MomentPrecision::Fp32;
    c.steps = 17;
    c.batch_size = 3;
    c.grad_accum = 2;
    c.seq_len = 33;
    c.lr_schedule = "constant";
    c.warmup_steps = 0;
    c.min_lr_ratio = 0.5;
    c.grad_clip = 0;
    c.eval_every = 7;
    c.eval_batches = 2;
    c.layer_stats_every = 5;
    c.update_window = 13;
    c.checkpoint_every = 10;
    c.resume_from = "/tmp/out/checkpoint-10";
    c.seed = 1234567890123ULL;
    c.device = "cuda:1";
    c.threads = 3;
    c.output_dir = "/tmp/out";
    const json j = c.toJson();
    const RunConfig back = RunConfig::fromJson(j);
    QCOMPARE(back.toJson(), j);
    QCOMPARE(back.seed, c.seed);
    QCOMPARE(back.model.path, std::string("org/model"));
    QVERIFY(back.mode == OptimizerMode::Bf16StochasticRounding);
    QCOMPARE(back.plan.overrides.size(), size_t(1));
    QCOMPARE(back.update_window, int64_t(13));
    // Every struct field is serialized (25 top-level keys).
    QCOMPARE(j.size(), size_t(25));
    QCOMPARE(j.at("reproducible"), json(false));
  }

  void reproducibleRunsOnOneCpuThread() {
    const RunConfig c = RunConfig::fromJson({{"device", "cpu"}, {"threads", 1}, {"reproducible", true}});
    QVERIFY(c.reproducible);
    QCOMPARE(RunConfig::fromJson(c.toJson()).toJson(), c.toJson());
    QVERIFY(RunConfig::fromJson({{"device", "cpu"}, {"reproducible", true}}).reproducible);  // threads 0
    QVERIFY(!RunConfig::fromJson(json::object()).reproducible);
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"reproducible", true}}); }),
                     "\"device\": \"cpu\""));  // the default device is auto
    QVERIFY(mentions(errorMessageOf<ConfigError>(
                         [] { RunConfig::fromJson({{"device", "cpu"}, {"threads", 2}, {"reproducible", true}}); }),
                     "'threads' 0 or 1"));
    const std::string wrongType = errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"reproducible", 1}}); });
    QVERIFY2(mentions(wrongType, "'reproducible'") && mentions(wrongType, "true or false"), wrongType.c_str());
  }

  void unknownKeysAreNamed() {
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"stepz", 3}}); }), "unknown key 'stepz'"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"model", {{"pth", "x"}}}}); }), "model.pth"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"adamw", {{"lrr", 1}}}}); }), "lrr"));
  }

  void wrongTypesNameKeyAndType() {
    const std::string e1 = errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"steps", "ten"}}); });
    QVERIFY2(mentions(e1, "'steps'") && mentions(e1, "integer"), e1.c_str());
    const std::string e2 = errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"grad_clip", true}}); });
    QVERIFY2(mentions(e2, "'grad_clip'") && mentions(e2, "number"), e2.c_str());
    const std::string e3 = errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"device", 0}}); });
    QVERIFY2(mentions(e3, "'device'") && mentions(e3, "string"), e3.c_str());
    const std::string e4 = errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"seed", -1}}); });
    QVERIFY2(mentions(e4, "'seed'"), e4.c_str());
    const std::string e5 = errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"mode", "bf17"}}); });
    QVERIFY2(mentions(e5, "mode") && mentions(e5, "bf17"), e5.c_str());
    QVERIFY(throwsError<ConfigError>([] { RunConfig::fromJson(json::array()); }));
  }

  void validation() {
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"steps", 0}}); }), "'steps'"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"batch_size", -2}}); }), "'batch_size'"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"seq_len", 0}}); }), "'seq_len'"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"lr_schedule", "linear"}}); }), "'lr_schedule'"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"adamw", {{"lr", 0.0}}}}); }), "lr"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"device", "tpu"}}); }), "'device'"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"model", {{"source", "folder"}}}}); }),
                     "model.path"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([] { RunConfig::fromJson({{"model", {{"source", "ftp"}}}}); }),
                     "model.source"));
  }

  void sweepOverModes() {
    const json file = {{"base", {{"name", "cmp"}, {"steps", 5}}},
                       {"sweep", {{"mode", {"fp32", "bf16", "bf16-kahan"}}}}};
    const auto runs = loadRunConfigs(file);
    QCOMPARE(runs.size(), size_t(3));
    QCOMPARE(runs[0].name, std::string("cmp-fp32"));
    QCOMPARE(runs[2].name, std::string("cmp-bf16-kahan"));
    QVERIFY(runs[1].mode == OptimizerMode::Bf16Plain);
    for (const auto& r : runs) QCOMPARE(r.steps, int64_t(5));
  }

  void sweepProductOverNestedFields() {
    const json file = {{"base", {{"name", "lr"}}}, {"sweep", {{"adamw.lr", {1e-3, 1e-4}}, {"seed", {1, 2}}}}};
    const auto runs = loadRunConfigs(file);
    QCOMPARE(runs.size(), size_t(4));
    std::set<std::string> names;
    for (const auto& r : runs) names.insert(r.name);
    QCOMPARE(names.size(), size_t(4));  // distinct names, one report folder each
    int lr4 = 0, seed2 = 0;
    for (const auto& r : runs) {
      lr4 += r.adamw.lr == 1e-4;
      seed2 += r.seed == 2;
    }
    QCOMPARE(lr4, 2);
    QCOMPARE(seed2, 2);
    QVERIFY(throwsError<ConfigError>([] { loadRunConfigs({{"sweep", {{"stepz", {1, 2}}}}}); }));
    QVERIFY(throwsError<ConfigError>([] { loadRunConfigs({{"sweep", {{"mode", json::array()}}}}); }));
  }

  void runsListAndSingle() {
    const auto runs = loadRunConfigs({{"runs", {{{"name", "a"}}, {{"name", "b"}, {"mode", "fp32"}}}}});
    QCOMPARE(runs.size(), size_t(2));
    QVERIFY(runs[1].mode == OptimizerMode::Fp32AdamW);
    const std::string e = errorMessageOf<ConfigError>([] { loadRunConfigs({{"runs", {{{"name", "a"}}, {{"bogus", 1}}}}}); });
    QVERIFY2(mentions(e, "runs[1]") && mentions(e, "bogus"), e.c_str());
    QCOMPARE(loadRunConfigs({{"name", "single"}}).size(), size_t(1));
  }

  void lrSchedule() {
    RunConfig c;
    c.steps = 100;
    c.warmup_steps = 10;
    c.adamw.lr = 2e-3;
    c.min_lr_ratio = 0.1;
    c.lr_schedule = "cosine";
    QCOMPARE(scheduledLr(c, 1), 2e-4);
    QCOMPARE(scheduledLr(c, 5), 1e-3);
    QCOMPARE(scheduledLr(c, 10), 2e-3);
    QCOMPARE(scheduledLr(c, 11), 2e-3);  // decay starts at the peak
    QVERIFY(std::fabs(scheduledLr(c, 100) - 2e-4) < 1e-15);  // ends at the floor
    // Half-way through the decay: the mean of peak and floor.
    c.steps = 111;  // decay steps 11..111, middle at 61
    QVERIFY(std::fabs(scheduledLr(c, 61) - 1.1e-3) < 1e-12);
    for (int64_t s = 12; s <= c.steps; ++s) QVERIFY(scheduledLr(c, s) <= scheduledLr(c, s - 1));
    c.lr_schedule = "constant";
    QCOMPARE(scheduledLr(c, 50), 2e-3);
    c.warmup_steps = 0;
    QCOMPARE(scheduledLr(c, 1), 2e-3);
  }
};

PLAB_TEST_APPLESS_MAIN(TestRunConfig)
}  // namespace test_run_config
#include "test_run_config.moc"
