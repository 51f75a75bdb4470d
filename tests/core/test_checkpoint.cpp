// saveCheckpoint/loadPretrained: bit-exact round trips, the original gpt2
// naming (no "transformer." prefix, attention mask buffers, a stored tied
// lm_head), bf16 files, and errors that name the tensor and both shapes.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "model/model_factory.h"
#include "model/safetensors.h"
#include "support/error_capture.h"
#include "support/tiny_models.h"
#include "util/errors.h"

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
};

QTEST_APPLESS_MAIN(CheckpointTest)
#include "test_checkpoint.moc"
