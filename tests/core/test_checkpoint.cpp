// saveCheckpoint/loadPretrained: bit-exact round trips, the original gpt2
// naming (no "transformer." prefix, attention mask buffers, a stored tied
// lm_head), bf16 files, and errors that name the tensor and both shapes.
// Resuming (train/checkpoint.h): every file of a real run's checkpoint-N
// folder, altered one field at a time, is refused with a message naming the
// file and the field, before a step is trained; the unaltered copy resumes.
// A byte changed in any file is refused by its checksum (checksums.json)
// before anything is read; the other checks are reached by sealing the
// altered folder again (the checksums guard against rot, not against a
// hand that recomputes them). A resume whose config or data would train
// another trajectory is refused naming the field (issue 37.5, 37.6).
#include <QtTest/QtTest>
#include <sys/stat.h>
#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "model/bf16_linear.h"
#include "model/model_factory.h"
#include "model/safetensors.h"
#include "support/error_capture.h"
#include "support/test_registry.h"
#include "support/tiny_models.h"
#include "train/checkpoint.h"
#include "train/checkpoint_manifest.h"
#include "train/trainer.h"
#include "util/errors.h"
#include "util/resources.h"

namespace test_checkpoint {

using namespace plab;
namespace fs = std::filesystem;

using plab::test::errorMessageOf;
using plab::test::mentions;

namespace {

void writeConfig(const fs::path& dir, const ModelConfig& c) {
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << c.toJson().dump(2);
}

using Named = std::vector<std::pair<std::string, torch::Tensor>>;

Named parametersOf(CausalLM& m) {
  Named out;
  for (const auto& p : m.named_parameters()) out.emplace_back(p.key(), p.value().detach().clone());
  return out;
}

void expectSameWeights(CausalLM& a, CausalLM& b) {
  const auto pb = b.named_parameters();
  QCOMPARE(a.named_parameters().size(), pb.size());
  for (const auto& p : a.named_parameters()) {
    QVERIFY2(pb.contains(p.key()), p.key().c_str());
    QVERIFY2(pb[p.key()].scalar_type() == torch::kFloat32, p.key().c_str());
    QVERIFY2(torch::equal(p.value().to(torch::kFloat32), pb[p.key()]), p.key().c_str());
  }
}

nlohmann::json readJson(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

void writeText(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::trunc) << text; }

Named tensorsOf(const fs::path& file) {
  const SafetensorsFile f(file);
  Named out;
  for (const std::string& name : f.names()) out.emplace_back(name, f.load(name));
  return out;
}

// A run short enough for a test: the embedded tiny GPT-2, 4 steps, a
// checkpoint every 2.
RunConfig shortRun(const fs::path& out) {
  RunConfig c = defaultRunConfig();
  c.name = "resume-test";
  c.mode = OptimizerMode::Bf16Kahan;
  c.steps = 4;
  c.batch_size = 2;
  c.seq_len = 16;
  c.warmup_steps = 0;
  c.eval_every = 0;
  c.eval_batches = 1;
  c.layer_stats_every = 1;
  c.update_window = 2;
  c.checkpoint_every = 2;
  c.device = "cpu";
  c.threads = 1;
  c.output_dir = out.string();
  return c;
}

struct Resumed {
  RunResult result;
  int64_t stepsTrained = 0;
  int64_t firstStep = 0;
};

Resumed resumeFrom(const fs::path& checkpoint, const fs::path& out, const std::function<void(RunConfig&)>& edit = {}) {
  RunConfig c = shortRun(out);
  if (edit) edit(c);
  c.resume_from = checkpoint.string();
  Trainer t(c);
  Resumed r;
  Trainer::Callbacks cb;
  cb.onStep = [&](const StepMetrics& m) {
    if (r.stepsTrained++ == 0) r.firstStep = m.step;
  };
  r.result = t.run(cb);
  return r;
}

}  // namespace

class CheckpointTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  fs::path dir(const std::string& name) const { return fs::path(tmp_.path().toStdString()) / name; }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void roundTripIsBitExact() {
    for (const ModelConfig& c : {test::tinyGpt2Config(), test::tinyLlamaConfig()}) {
      auto model = createModel(c, 17);
      const fs::path d = dir("rt-" + c.model_type);
      saveCheckpoint(*model, d);
      QVERIFY(fs::exists(d / "config.json"));
      SafetensorsFile file(d / "model.safetensors");
      QVERIFY(!file.contains("lm_head.weight") || c.family == ArchitectureFamily::Llama);  // tied: stored once
      auto loaded = loadPretrained(d);
      QCOMPARE(loaded->config().parameterCount(), c.parameterCount());
      QCOMPARE(loaded->config().model_type, c.model_type);
      // Resuming compares config.json read back with the run's model config, field by field.
      QCOMPARE(loaded->config().toJson(), c.toJson());
      expectSameWeights(*model, *loaded);
      const torch::Tensor ids = torch::randint(0, c.vocab_size, {1, 9}, torch::kInt64);
      QVERIFY(torch::equal(model->forward(ids), loaded->forward(ids)));
    }
  }

  void bf16CheckpointLoadsAsFp32() {
    auto model = createModel(test::tinyLlamaConfig(), 3);
    model->to(torch::kBFloat16);
    const fs::path d = dir("bf16");
    saveCheckpoint(*model, d);
    SafetensorsFile file(d / "model.safetensors");
    QCOMPARE(file.entry("model.norm.weight").dtype, std::string("BF16"));
    auto loaded = loadPretrained(d);
    expectSameWeights(*model, *loaded);  // bf16 values are exact in fp32
  }

  // The original openai-community/gpt2 file: "h.0.attn.c_attn.weight",
  // "wte.weight", causal-mask buffers "h.N.attn.bias", and no prefix.
  void gpt2WithoutTransformerPrefix() {
    const ModelConfig c = test::tinyGpt2Config();
    auto source = createModel(c, 21);
    Named stripped;
    for (auto& [name, t] : parametersOf(*source)) stripped.emplace_back(name.substr(std::string("transformer.").size()), t);
    for (int l = 0; l < 2; ++l) {
      stripped.emplace_back("h." + std::to_string(l) + ".attn.bias", torch::ones({1, 1, 32, 32}).tril());
      stripped.emplace_back("h." + std::to_string(l) + ".attn.masked_bias", torch::tensor(-1e4f));
    }
    stripped.emplace_back("lm_head.weight", source->named_parameters()["transformer.wte.weight"].detach().clone());
    const fs::path d = dir("gpt2-original");
    writeConfig(d, c);
    writeSafetensors(d / "model.safetensors", stripped);
    auto loaded = loadPretrained(d);
    expectSameWeights(*source, *loaded);
  }

  void fp16WeightsAreConverted() {
    const ModelConfig c = test::tinyGpt2Config();
    auto source = createModel(c, 5);
    Named half;
    for (auto& [name, t] : parametersOf(*source)) half.emplace_back(name, t.to(torch::kFloat16));
    const fs::path d = dir("fp16");
    writeConfig(d, c);
    writeSafetensors(d / "model.safetensors", half);
    auto loaded = loadPretrained(d);
    for (const auto& p : loaded->named_parameters()) {
      QCOMPARE(p.value().scalar_type(), torch::kFloat32);
      QVERIFY(torch::equal(p.value(), source->named_parameters()[p.key()].to(torch::kFloat16).to(torch::kFloat32)));
    }
  }

  void missingWeightIsNamed() {
    const ModelConfig c = test::tinyGpt2Config();
    Named tensors;
    for (auto& [name, t] : parametersOf(*createModel(c, 1)))
      if (name != "transformer.h.1.mlp.c_fc.bias") tensors.emplace_back(name, t);
    const fs::path d = dir("missing");
    writeConfig(d, c);
    writeSafetensors(d / "model.safetensors", tensors);
    const std::string msg = errorMessageOf<ModelError>([&] { loadPretrained(d); });
    QVERIFY2(mentions(msg, "model.safetensors"), msg.c_str());
    QVERIFY2(mentions(msg, "missing tensor 'transformer.h.1.mlp.c_fc.bias'"), msg.c_str());
    QVERIFY2(mentions(msg, "[128]"), msg.c_str());
  }

  void wrongShapeNamesBothShapes() {
    const ModelConfig c = test::tinyLlamaConfig();
    Named tensors;
    for (auto& [name, t] : parametersOf(*createModel(c, 1)))
      tensors.emplace_back(name, name == "model.layers.0.self_attn.k_proj.weight" ? torch::zeros({32, 32}) : t);
    const fs::path d = dir("shape");
    writeConfig(d, c);
    writeSafetensors(d / "model.safetensors", tensors);
    const std::string msg = errorMessageOf<ModelError>([&] { loadPretrained(d); });
    QVERIFY2(mentions(msg, "'model.layers.0.self_attn.k_proj.weight'"), msg.c_str());
    QVERIFY2(mentions(msg, "[32, 32]") && mentions(msg, "[16, 32]"), msg.c_str());
  }

  void shardedCheckpointLoads() {
    const ModelConfig c = test::tinyLlamaConfig();
    auto source = createModel(c, 8);
    const Named all = parametersOf(*source);
    const Named first(all.begin(), all.begin() + 7), second(all.begin() + 7, all.end());
    const fs::path d = dir("sharded");
    writeConfig(d, c);
    writeSafetensors(d / "model-00001-of-00002.safetensors", first);
    writeSafetensors(d / "model-00002-of-00002.safetensors", second);
    nlohmann::json map;
    for (const auto& [n, t] : first) map[n] = "model-00001-of-00002.safetensors";
    for (const auto& [n, t] : second) map[n] = "model-00002-of-00002.safetensors";
    std::ofstream(d / "model.safetensors.index.json") << nlohmann::json({{"weight_map", map}}).dump();
    auto loaded = loadPretrained(d);
    expectSameWeights(*source, *loaded);
  }

  void brokenConfigOrMissingWeightsFile() {
    const fs::path d = dir("no-weights");
    writeConfig(d, test::tinyGpt2Config());
    QVERIFY(mentions(errorMessageOf<ModelError>([&] { loadPretrained(d); }), "model.safetensors"));
    const fs::path e = dir("no-config");
    fs::create_directories(e);
    QVERIFY_EXCEPTION_THROWN(loadPretrained(e), ConfigError);
  }

  // ---- Resuming: a real run's checkpoint-2, copied and altered per case ----

  void runWithCheckpoints() {
    Trainer t(shortRun(dir("run")));
    const RunResult r = t.run({});
    QVERIFY2(r.status == RunStatus::Completed, r.message.c_str());
    QVERIFY(fs::is_regular_file(dir("run") / "checkpoint-2" / "trainer_state.json"));
    // Every parameter stepped at every step: the counts the check asks for.
    const nlohmann::json state = readJson(dir("run") / "checkpoint-2" / "trainer_state.json");
    QCOMPARE(state.at("step").get<int64_t>(), int64_t(2));
    for (const auto& [name, count] : state.at("optimizer").at("params").items()) QCOMPARE(count.get<int64_t>(), int64_t(2));
    // The bf16 products' CPU path, for a resume to multiply alike.
    QVERIFY(state.at("cpu_bf16_gemm") == "native" || state.at("cpu_bf16_gemm") == "upcast");
    // The whole effective config, its data by content; the checksums of every file.
    const nlohmann::json& trajectory = state.at("trajectory");
    QCOMPARE(trajectory.at("adamw").at("lr").get<double>(), 5e-5);
    QCOMPARE(trajectory.at("data").at("file").at("embedded").get<std::string>(), std::string("data/corpus.txt"));
    QVERIFY(!trajectory.contains("name") && !trajectory.contains("output_dir") && !trajectory.contains("eval_every"));
    const nlohmann::json manifest = readJson(dir("run") / "checkpoint-2" / kCheckpointManifestName);
    // model, config.json, optimizer, trainer state, and the byte tokenizer's
    // tokenizer.json and tokenizer_config.json (a checkpoint is a model folder)
    QCOMPARE(manifest.at("files").size(), size_t(6));
    QVERIFY(manifest.at("files").contains("tokenizer.json"));
    QCOMPARE(manifest.at("files").at("optimizer.safetensors").at("bytes").get<uint64_t>(),
             uint64_t(fs::file_size(dir("run") / "checkpoint-2" / "optimizer.safetensors")));
  }

  void unalteredCheckpointResumes() {
    const Resumed r = resumeFrom(copyOfCheckpoint("intact", [](const fs::path&) {}), dir("intact-out"));
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QCOMPARE(r.firstStep, int64_t(3));
    QCOMPARE(r.stepsTrained, int64_t(2));
    // What may change on a resume: the name, the cadence of evaluation and
    // checkpoints, and (the schedule constant, warmup done) the step count.
    const Resumed longer = resumeFrom(copyOfCheckpoint("longer", [](const fs::path&) {}), dir("longer-out"),
                                      [](RunConfig& c) {
                                        c.steps = 6;
                                        c.name = "renamed";
                                        c.eval_every = 1;
                                        c.checkpoint_every = 0;
                                      });
    QVERIFY2(longer.result.status == RunStatus::Completed, longer.result.message.c_str());
    QCOMPARE(longer.stepsTrained, int64_t(4));
  }

  // Per-layer quantized moment stores (plan.moments): the uint8 codes and
  // their scales go into the checkpoint and a resume continues the run it
  // interrupted bit for bit (a quantized store's codes were refused as
  // "U8 ... keeps it in Byte" before, run-wide stores too).
  void quantizedMomentStoresResumeBitForBit() {
    const auto withStores = [](RunConfig& c) {
      c.mode = OptimizerMode::Bf16StochasticRounding;
      c.plan.setMomentSubtree("transformer.h.0", MomentPrecision::Dynamic8bit);
      c.plan.setMomentSubtree("transformer.h.1.mlp", MomentPrecision::Dynamic4bit);
    };
    RunConfig whole = shortRun(dir("stores"));
    withStores(whole);
    Trainer t(whole);
    const RunResult uninterrupted = t.run({});
    QVERIFY2(uninterrupted.status == RunStatus::Completed, uninterrupted.message.c_str());
    const SafetensorsFile saved(dir("stores") / "checkpoint-2" / "optimizer.safetensors");
    QCOMPARE(saved.entry("transformer.h.0.mlp.c_fc.weight.exp_avg").dtype, std::string("U8"));
    QVERIFY(saved.contains("transformer.h.1.mlp.c_fc.weight.exp_avg_sq.scale"));
    QCOMPARE(saved.entry("transformer.h.1.attn.c_attn.weight.exp_avg").dtype, std::string("BF16"));  // the run's bf16-sr
    const Resumed r = resumeFrom(dir("stores") / "checkpoint-2", dir("stores-resumed"), withStores);
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QCOMPARE(r.firstStep, int64_t(3));
    QCOMPARE(r.result.finalLoss, uninterrupted.finalLoss);
    QVERIFY(r.result.finalValLoss && uninterrupted.finalValLoss);
    QCOMPARE(*r.result.finalValLoss, *uninterrupted.finalValLoss);
  }

  // A resumed run takes the bf16 product path its checkpoint names, not a
  // new measurement; a value other than the two paths is refused.
  void resumeTakesTheCheckpointsBf16Path() {
    if (std::getenv("PLAB_BF16_GEMM")) QSKIP("PLAB_BF16_GEMM forces the path in this environment");
    const std::string recorded =
        readJson(dir("run") / "checkpoint-2" / "trainer_state.json").at("cpu_bf16_gemm").get<std::string>();
    const std::string other = recorded == "native" ? "upcast" : "native";
    const fs::path d = copyOfCheckpoint("other-path", [&](const fs::path& c) {
      editState(c, [&](nlohmann::json& j) { j["cpu_bf16_gemm"] = other; });
      fs::remove(c / kCheckpointManifestName);
      writeCheckpointManifest(c);
    });
    const Resumed r = resumeFrom(d, dir("other-path-out"));
    QVERIFY2(r.result.status == RunStatus::Completed, r.result.message.c_str());
    QVERIFY((cpuBf16GemmPath() == Bf16GemmPath::Native) == (other == "native"));
    QVERIFY2(mentions(describeCpuBf16GemmPath(), "as the run that wrote the checkpoint"), describeCpuBf16GemmPath().c_str());
    expectRefused("bad-path", [](const fs::path& c) { editState(c, [](nlohmann::json& j) { j["cpu_bf16_gemm"] = "fast"; }); },
                  "trainer_state.json", "'cpu_bf16_gemm' must be \"native\" or \"upcast\", not \"fast\"");
  }

  // A checkpoint of an earlier version, without the trajectory (or the checksums).
  void checkpointWithoutTrajectoryIsRefused() {
    expectRefused("without-trajectory", [](const fs::path& d) { editState(d, [](nlohmann::json& j) { j.erase("trajectory"); }); },
                  "trainer_state.json", "'trajectory' is missing");
    expectRefused("without-checksums", [](const fs::path& d) { fs::remove(d / kCheckpointManifestName); },
                  "checkpoint-2", "has no checksums.json", "checkpoint-2", /*seal=*/false);
  }

  // Issue 37.6: flipped bytes inside optimizer.safetensors resumed without a word.
  void rotIsRefusedBeforeAnythingIsRead() {
    expectRefused("flipped-byte", [](const fs::path& d) {
                    std::fstream f(d / "optimizer.safetensors", std::ios::in | std::ios::out | std::ios::binary);
                    const auto at = std::streamoff(fs::file_size(d / "optimizer.safetensors") - 100);
                    f.seekg(at);
                    char c = 0;
                    f.get(c);
                    f.seekp(at);
                    f.put(char(c ^ 0x10));
                  },
                  "optimizer.safetensors", "its sha256 is", "checkpoint-2", /*seal=*/false);
    expectRefused("truncated-model", [](const fs::path& d) {
                    fs::resize_file(d / "model.safetensors", fs::file_size(d / "model.safetensors") - 8);
                  },
                  "model.safetensors", "checksums.json records", "checkpoint-2", /*seal=*/false);
    expectRefused("state-edited", [](const fs::path& d) { editState(d, [](nlohmann::json& j) { j["step"] = 1; }); },
                  "trainer_state.json", "checksums.json records", "checkpoint-2", /*seal=*/false);
    expectRefused("file-added", [](const fs::path& d) { writeText(d / "extra.safetensors", "x"); },
                  "extra.safetensors", "is not listed in checksums.json", "checkpoint-2", /*seal=*/false);
    expectRefused("file-removed", [](const fs::path& d) { fs::remove(d / "config.json"); },
                  "config.json", "is missing (checksums.json lists it)", "checkpoint-2", /*seal=*/false);
    expectRefused("manifest-not-json", [](const fs::path& d) { writeText(d / kCheckpointManifestName, "{\"files\": "); },
                  "checksums.json", "is not valid JSON", "checkpoint-2", /*seal=*/false);
    expectRefused("manifest-path", [](const fs::path& d) {
                    nlohmann::json m = readJson(d / kCheckpointManifestName);
                    m["files"]["../config.json"] = m["files"]["config.json"];
                    writeText(d / kCheckpointManifestName, m.dump());
                  },
                  "checksums.json", "'../config.json' is not the name of a file", "checkpoint-2", /*seal=*/false);
    expectRefused("manifest-digest", [](const fs::path& d) {
                    nlohmann::json m = readJson(d / kCheckpointManifestName);
                    m["files"]["config.json"]["sha256"] = "xyz";
                    writeText(d / kCheckpointManifestName, m.dump());
                  },
                  "checksums.json", "must be 64 lowercase hex digits", "checkpoint-2", /*seal=*/false);
  }

  // Issue 37.5: a resume with another corpus, data seed, validation split,
  // tokenizer, schedule, clipping or warmup trained on (exit 0, another
  // loss curve). Each is refused naming the field.
  void trajectoryChangesAreRefused_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("expected");
    QTest::newRow("data.path") << "data.path" << "'data.path' (the data file's content) is {\"bytes\":";
    QTest::newRow("data.seed") << "data.seed" << "'data.seed' is 5 in this run, the checkpoint's run trained with 0";
    QTest::newRow("val_fraction") << "data.val_fraction" << "'data.val_fraction' is 0.2 in this run";
    QTest::newRow("tokenizer") << "model.tokenizer" << "'model.tokenizer' is \"bytes\" in this run, the checkpoint's run trained with \"auto\"";
    QTest::newRow("lr_schedule") << "lr_schedule" << "'lr_schedule' is \"cosine\" in this run";
    QTest::newRow("grad_clip") << "grad_clip" << "'grad_clip' is 0.5 in this run, the checkpoint's run trained with 1.0";
    QTest::newRow("warmup_steps") << "warmup_steps" << "'warmup_steps' is 3 in this run, the checkpoint's run trained with 0";
    QTest::newRow("lr") << "adamw.lr" << "'adamw.lr' is 0.001 in this run, the checkpoint's run trained with 5e-05";
    // A per-layer moment store: 8bit and fp8 codes even have the same
    // shapes, so the trajectory, not the tensor check, must refuse it.
    QTest::newRow("plan.moments") << "plan.moments" << "'plan.moments";
  }
  void trajectoryChangesAreRefused() {
    QFETCH(QString, field);
    QFETCH(QString, expected);
    const fs::path corpus = dir("other-corpus.txt");
    if (!fs::exists(corpus)) {
      std::string text(embeddedResource("data/corpus.txt"));
      text[text.size() / 2] = text[text.size() / 2] == 'e' ? 'a' : 'e';  // one letter of another corpus
      writeText(corpus, text);
    }
    const std::string f = field.toStdString();
    const std::string name = "changed-" + QByteArray(QTest::currentDataTag()).toStdString();
    const Resumed r = resumeFrom(copyOfCheckpoint(name, [](const fs::path&) {}), dir(name) / "out", [&](RunConfig& c) {
      if (f == "data.path") c.data.path = corpus.string();
      if (f == "data.seed") c.data.seed = 5;
      if (f == "data.val_fraction") c.data.val_fraction = 0.2;
      if (f == "model.tokenizer") c.model.tokenizer = "bytes";
      if (f == "lr_schedule") c.lr_schedule = "cosine";
      if (f == "grad_clip") c.grad_clip = 0.5;
      if (f == "warmup_steps") c.warmup_steps = 3;
      if (f == "adamw.lr") c.adamw.lr = 1e-3;
      if (f == "plan.moments") c.plan.setMomentSubtree("transformer.h.0", MomentPrecision::Fp8);
    });
    qInfo("%s: %s", f.c_str(), r.result.message.c_str());
    QVERIFY2(r.result.status == RunStatus::Failed && r.result.configError, r.result.message.c_str());
    QCOMPARE(r.stepsTrained, int64_t(0));
    QVERIFY2(mentions(r.result.message, "trainer_state.json: 'trajectory': "), r.result.message.c_str());
    QVERIFY2(mentions(r.result.message, expected.toStdString()), r.result.message.c_str());
  }

  // With a cosine schedule the step count sets every later learning rate:
  // a resume with more steps would train another curve from its first step.
  void stepsOfACosineScheduleMustStay() {
    RunConfig cosine = shortRun(dir("cosine"));
    cosine.lr_schedule = "cosine";
    Trainer t(cosine);
    QVERIFY(t.run({}).status == RunStatus::Completed);
    const auto resumeCosine = [&](int64_t steps, const std::string& out) {
      return resumeFrom(dir("cosine") / "checkpoint-2", dir(out), [&](RunConfig& c) {
        c.lr_schedule = "cosine";
        c.steps = steps;
      });
    };
    const Resumed longer = resumeCosine(6, "cosine-6");
    QVERIFY2(longer.result.status == RunStatus::Failed && longer.stepsTrained == 0, longer.result.message.c_str());
    QVERIFY2(mentions(longer.result.message, "'steps' is 6 in this run, the checkpoint's run had 4") &&
                 mentions(longer.result.message, "the learning rate of step 2 is"),
             longer.result.message.c_str());
    const Resumed same = resumeCosine(4, "cosine-4");
    QVERIFY2(same.result.status == RunStatus::Completed && same.stepsTrained == 2, same.result.message.c_str());
  }

  // The cases: -5 trained steps -4..4 and crashed; 2^63-1 and 1e30
  // trained from step -2^63 with a negative lr.
  void stepOutOfRangeOrNotAnInteger_data() {
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("expected");
    QTest::newRow("-5") << "-5" << "'step' is -5; a checkpoint is written after step 1";
    QTest::newRow("0") << "0" << "'step' is 0;";
    QTest::newRow("2^63-1") << "9223372036854775807" << "'step' is 9223372036854775807, beyond the run's 4 steps";
    QTest::newRow("2^64-1") << "18446744073709551615" << "'step' is 18446744073709551615, beyond any step count";
    QTest::newRow("1e30") << "1e30" << "'step' must be an integer, not 1e+30";
    QTest::newRow("2.0") << "2.0" << "'step' must be an integer, not 2.0";
    QTest::newRow("2.5") << "2.5" << "'step' must be an integer";
    QTest::newRow("string") << "\"2\"" << "'step' must be an integer, not \"2\"";
    QTest::newRow("null") << "null" << "'step' must be an integer";
    QTest::newRow("finished") << "4" << "'step' is 4: the run's 4 steps all ended there; raise 'steps'";
  }
  void stepOutOfRangeOrNotAnInteger() {
    QFETCH(QString, value);
    QFETCH(QString, expected);
    const std::string literal = value.toStdString();
    expectRefused("step-" + QByteArray(QTest::currentDataTag()).toHex().toStdString(),
                  [&](const fs::path& d) {
                    // Written as text: 1e30 and 2.0 must reach the reader as the user wrote them.
                    std::string text = readJson(d / "trainer_state.json").dump();
                    const auto at = text.rfind("\"step\":2");  // keys sorted: the top-level one is last
                    QVERIFY(at != std::string::npos);
                    text.replace(at, 8, "\"step\":" + literal);
                    writeText(d / "trainer_state.json", text);
                  },
                  "trainer_state.json", expected.toStdString());
  }

  void stepInAFolderOfAnotherStep() {
    expectRefused("renamed", [](const fs::path&) {}, "trainer_state.json", "'step' is 2 in a folder named checkpoint-3",
                  "checkpoint-3");
  }

  void stepCountsMustAgree() {
    // The case: a step that disagrees with the optimizer's counts.
    expectRefused("step-not-counts", [](const fs::path& d) { editState(d, [](nlohmann::json& j) { j["step"] = 3; }); },
                  "trainer_state.json", "'optimizer.step' is 2, 'step' is 3", "checkpoint-3");
    expectRefused("one-count", [](const fs::path& d) {
                    editState(d, [](nlohmann::json& j) { j["optimizer"]["params"]["transformer.wte.weight"] = 1; });
                  },
                  "trainer_state.json", "'optimizer.params.transformer.wte.weight' is 1, 'step' is 2");
    expectRefused("missing-count", [](const fs::path& d) {
                    editState(d, [](nlohmann::json& j) { j["optimizer"]["params"].erase("transformer.wte.weight"); });
                  },
                  "trainer_state.json", "'optimizer.params' has no step count for 'transformer.wte.weight'");
    expectRefused("unknown-count", [](const fs::path& d) {
                    editState(d, [](nlohmann::json& j) { j["optimizer"]["params"]["ghost.weight"] = 2; });
                  },
                  "trainer_state.json", "'optimizer.params' counts 'ghost.weight'");
    expectRefused("count-as-float", [](const fs::path& d) {
                    editState(d, [](nlohmann::json& j) { j["optimizer"]["params"]["transformer.wte.weight"] = 2.0; });
                  },
                  "trainer_state.json", "'optimizer.params.transformer.wte.weight' must be an integer");
  }

  void malformedStateFile() {
    expectRefused("unknown-field", [](const fs::path& d) { editState(d, [](nlohmann::json& j) { j["extra"] = 1; }); },
                  "trainer_state.json", "unknown field 'extra'");
    expectRefused("no-sampler", [](const fs::path& d) { editState(d, [](nlohmann::json& j) { j.erase("data_sampler"); }); },
                  "trainer_state.json", "'data_sampler' is missing");
    expectRefused("short-sampler", [](const fs::path& d) {
                    editState(d, [](nlohmann::json& j) { j["data_sampler"] = "1 2 3"; });
                  },
                  "trainer_state.json", "'data_sampler' is not a saved std::mt19937_64 state");
    expectRefused("long-sampler", [](const fs::path& d) {
                    editState(d, [](nlohmann::json& j) { j["data_sampler"] = j["data_sampler"].get<std::string>() + " 7"; });
                  },
                  "trainer_state.json", "'data_sampler' is not a saved std::mt19937_64 state");
    expectRefused("zero-sampler", [](const fs::path& d) {
                    std::string zeros;
                    for (size_t i = 0; i < std::mt19937_64::state_size; ++i) zeros += "0 ";
                    editState(d, [&](nlohmann::json& j) { j["data_sampler"] = zeros + "312"; });
                  },
                  "trainer_state.json", "'data_sampler' is not a saved std::mt19937_64 state");
    expectRefused("not-json", [](const fs::path& d) { writeText(d / "trainer_state.json", "{\"step\": 2,"); },
                  "trainer_state.json", "is not valid JSON");
    expectRefused("deep", [](const fs::path& d) {
                    writeText(d / "trainer_state.json", std::string(100000, '[') + std::string(100000, ']'));
                  },
                  "trainer_state.json", "trainer_state.json");
    expectRefused("array", [](const fs::path& d) { writeText(d / "trainer_state.json", "[2]"); },
                  "trainer_state.json", "the file must be a JSON object");
    expectRefused("too-large", [](const fs::path& d) {
                    std::ofstream(d / "trainer_state.json", std::ios::trunc) << std::string(kMaxTrainerStateBytes + 1, ' ');
                  },
                  "trainer_state.json", "more than a trainer state can be");
    expectRefused("fifo", [](const fs::path& d) {
                    fs::remove(d / "trainer_state.json");
                    QCOMPARE(::mkfifo((d / "trainer_state.json").c_str(), 0600), 0);
                  },
                  "trainer_state.json", "is not a regular file", "checkpoint-2", /*seal=*/false);
  }

  void runSettingsMustMatch() {
    expectRefused("seed", [](const fs::path& d) { editState(d, [](nlohmann::json& j) { j["trajectory"]["seed"] = 7; }); },
                  "trainer_state.json", "'seed' is 0 in this run, the checkpoint's run trained with 7");
    expectRefused("mode", [](const fs::path& d) {
                    editState(d, [](nlohmann::json& j) { j["trajectory"]["mode"] = "bf16-sr"; });
                  },
                  "trainer_state.json", "'mode' is \"bf16-kahan\" in this run, the checkpoint's run trained with \"bf16-sr\"");
    expectRefused("trajectory-steps", [](const fs::path& d) {
                    editState(d, [](nlohmann::json& j) { j["trajectory"]["steps"] = -1; });
                  },
                  "trainer_state.json", "'steps' must be the checkpoint's run's step count, not -1");
  }

  // The case: another model's checkpoint in the run folder resumed
  // with exit 0 while config.json named the first model.
  void anotherModelsCheckpoint() {
    expectRefused("other-model", [](const fs::path& d) { saveCheckpoint(*createModel(test::tinyGpt2Config(), 1), d); },
                  "config.json", "the run's model has");
    // A whole checkpoint of another run (model, optimizer state and counts
    // all of one piece), as in the issue.
    const fs::path otherRun = dir("other-run");
    fs::create_directories(otherRun);
    ModelConfig wider = test::tinyGpt2Config();
    wider.raw["vocab_size"] = 512;  // room for the byte tokenizer
    wider.raw["n_embd"] = 64;
    writeConfig(otherRun / "model", ModelConfig::fromJson(wider.raw));
    RunConfig other = shortRun(otherRun / "out");
    other.model.source = "config";
    other.model.path = (otherRun / "model" / "config.json").string();
    Trainer t(other);
    const RunResult trained = t.run({});
    QVERIFY2(trained.status == RunStatus::Completed, trained.message.c_str());
    expectRefused("other-run", [&](const fs::path& d) {
                    fs::remove_all(d);
                    fs::copy(otherRun / "out" / "checkpoint-2", d, fs::copy_options::recursive);
                  },
                  "config.json", "it is another model's checkpoint (");
    // Without its config.json, the tensors give it away.
    expectRefused("other-weights", [](const fs::path& d) {
                    saveCheckpoint(*createModel(test::tinyGpt2Config(), 1), d);
                    fs::remove(d / "config.json");
                  },
                  "model.safetensors", "has shape");
    expectRefused("other-architecture", [](const fs::path& d) {
                    saveCheckpoint(*createModel(test::tinyLlamaConfig(), 1), d);
                    fs::remove(d / "config.json");
                  },
                  "model.safetensors", "is missing");
  }

  void modelTensorsMustMatch() {
    expectRefused("weight-dtype", [](const fs::path& d) {
                    Named t = tensorsOf(d / "model.safetensors");
                    for (auto& [name, tensor] : t)
                      if (name == "transformer.h.0.mlp.c_fc.weight") tensor = tensor.to(torch::kFloat32);
                    writeSafetensors(d / "model.safetensors", t);
                  },
                  "model.safetensors", "tensor 'transformer.h.0.mlp.c_fc.weight' is F32, the run's model keeps it in BF16");
    expectRefused("extra-weight", [](const fs::path& d) {
                    Named t = tensorsOf(d / "model.safetensors");
                    t.emplace_back("lm_head.weight", torch::zeros({2, 2}));
                    writeSafetensors(d / "model.safetensors", t);
                  },
                  "model.safetensors", "unknown tensor 'lm_head.weight'");
  }

  // The case: unknown tensors in optimizer.safetensors were ignored.
  void optimizerTensorsMustMatch() {
    expectRefused("unknown-tensor", [](const fs::path& d) {
                    Named t = tensorsOf(d / "optimizer.safetensors");
                    t.emplace_back("evil", torch::zeros({3}));
                    writeSafetensors(d / "optimizer.safetensors", t);
                  },
                  "optimizer.safetensors", "unknown tensor 'evil'");
    expectRefused("master-in-kahan-run", [](const fs::path& d) {
                    Named t = tensorsOf(d / "optimizer.safetensors");
                    t.emplace_back("transformer.wte.weight.master", torch::zeros({1}));
                    writeSafetensors(d / "optimizer.safetensors", t);
                  },
                  "optimizer.safetensors", "unknown tensor 'transformer.wte.weight.master'");
    expectRefused("missing-kahan", [](const fs::path& d) {
                    Named t;
                    for (auto& [name, tensor] : tensorsOf(d / "optimizer.safetensors"))
                      if (name != "transformer.h.1.attn.c_proj.weight.kahan") t.emplace_back(name, tensor);
                    writeSafetensors(d / "optimizer.safetensors", t);
                  },
                  "optimizer.safetensors", "tensor 'transformer.h.1.attn.c_proj.weight.kahan' is missing");
    expectRefused("moment-dtype", [](const fs::path& d) {
                    Named t = tensorsOf(d / "optimizer.safetensors");
                    for (auto& [name, tensor] : t)
                      if (name == "transformer.wpe.weight.exp_avg") tensor = tensor.to(torch::kFloat16);
                    writeSafetensors(d / "optimizer.safetensors", t);
                  },
                  "optimizer.safetensors", "tensor 'transformer.wpe.weight.exp_avg' is F16");
    expectRefused("moment-shape", [](const fs::path& d) {
                    Named t = tensorsOf(d / "optimizer.safetensors");
                    for (auto& [name, tensor] : t)
                      if (name == "transformer.ln_f.bias.exp_avg_sq") tensor = tensor.reshape({1, -1});
                    writeSafetensors(d / "optimizer.safetensors", t);
                  },
                  "optimizer.safetensors", "tensor 'transformer.ln_f.bias.exp_avg_sq' has shape [1, ");
    expectRefused("torn", [](const fs::path& d) { fs::resize_file(d / "optimizer.safetensors", 100); },
                  "optimizer.safetensors", "optimizer.safetensors");
  }

 private:
  // checkpoint-2 of the run, copied to <name>/<folder> and altered by `alter`.
  fs::path copyOfCheckpoint(const std::string& name, const std::function<void(const fs::path&)>& alter,
                            const std::string& folder = "checkpoint-2") const {
    if (!fs::is_directory(dir("run") / "checkpoint-2")) qFatal("runWithCheckpoints must run first");
    const fs::path d = dir(name) / folder;
    fs::create_directories(d.parent_path());
    fs::copy(dir("run") / "checkpoint-2", d, fs::copy_options::recursive);
    alter(d);
    return d;
  }

  static void editState(const fs::path& d, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = readJson(d / "trainer_state.json");
    edit(j);
    writeText(d / "trainer_state.json", j.dump());
  }

  // Resuming from the altered copy fails before any step, naming the file
  // and the field. `seal`: the alteration gets its checksums, so that the
  // checks after them are reached.
  void expectRefused(const std::string& name, const std::function<void(const fs::path&)>& alter,
                     const std::string& file, const std::string& field, const std::string& folder = "checkpoint-2",
                     bool seal = true) {
    const fs::path checkpoint = copyOfCheckpoint(name, [&](const fs::path& d) {
      alter(d);
      if (seal) {
        fs::remove(d / kCheckpointManifestName);
        if (fs::is_regular_file(d / "trainer_state.json")) writeCheckpointManifest(d);
      }
    }, folder);
    const Resumed r = resumeFrom(checkpoint, dir(name) / "out");
    const std::string context = name + ": " + r.result.message;
    qInfo("%s", context.c_str());  // the messages users get, in the test log
    QVERIFY2(r.result.status == RunStatus::Failed, context.c_str());
    QCOMPARE(r.stepsTrained, int64_t(0));
    QVERIFY2(mentions(r.result.message, "cannot resume"), context.c_str());
    QVERIFY2(mentions(r.result.message, file), context.c_str());
    QVERIFY2(mentions(r.result.message, field), context.c_str());
  }
};

PLAB_TEST_APPLESS_MAIN(CheckpointTest)
}  // namespace test_checkpoint
#include "test_checkpoint.moc"
