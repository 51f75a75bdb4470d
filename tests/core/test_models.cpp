// GPT-2 and Llama modules: exact Hugging Face parameter names and shapes,
// forward passes checked against a straightforward float64 reference written
// here with plain tensor ops, causality, mixed bf16/fp32 layers, seeded init
// and the module tree.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>

#include "model/model_factory.h"
#include "model/module_tree.h"
#include "model/module_tree_from_config.h"
#include "model/rope.h"
#include "support/test_registry.h"
#include "train/model_inspect.h"
#include "support/tiny_models.h"
#include "util/errors.h"

namespace test_models {

using namespace plab;
using Weights = std::map<std::string, torch::Tensor>;

namespace {

Weights weightsOf(CausalLM& m) {
  Weights w;
  for (const auto& p : m.named_parameters()) w[p.key()] = p.value().detach().to(torch::kFloat64);
  return w;
}

// Replaces every parameter with random values of a larger scale (and norms
// around 1) so biases, norm weights and attention patterns all matter.
void randomizeWeights(CausalLM& m, uint64_t seed) {
  torch::NoGradGuard g;
  torch::manual_seed(seed);
  for (const auto& p : m.named_parameters()) {
    const bool norm = p.key().find("ln") != std::string::npos || p.key().find("norm") != std::string::npos;
    if (norm && p.key().find("weight") != std::string::npos)
      p.value().copy_(1.0 + 0.2 * torch::randn(p.value().sizes()));
    else
      p.value().copy_(0.3 * torch::randn(p.value().sizes()));
  }
}

torch::Tensor refLayerNorm(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, double eps) {
  const auto mean = x.mean(-1, true);
  const auto var = (x - mean).pow(2).mean(-1, true);
  return (x - mean) / (var + eps).sqrt() * w + b;
}

torch::Tensor refRmsNorm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  return x / (x.pow(2).mean(-1, true) + eps).sqrt() * w;
}

torch::Tensor refSoftmax(const torch::Tensor& s) {
  const auto e = (s - std::get<0>(s.max(-1, true))).exp();
  return e / e.sum(-1, true);
}

// One head's causal attention on [T, D] matrices, with an explicit loop mask;
// scale <= 0 means 1/sqrt(D); window > 0 hides keys window or more steps back.
torch::Tensor refHeadAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                               double scale = 0, int64_t window = 0) {
  const int64_t T = q.size(0);
  torch::Tensor scores = q.matmul(k.t()) * (scale > 0 ? scale : 1 / std::sqrt(double(q.size(1))));
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j)
      if (j > i || (window > 0 && i - j >= window)) scores[i][j] = -1e300;
  return refSoftmax(scores).matmul(v);
}

torch::Tensor refGeluTanh(const torch::Tensor& x) {
  return 0.5 * x * (1 + (std::sqrt(2 / M_PI) * (x + 0.044715 * x.pow(3))).tanh());
}

// GPT-2 for one sequence of ids ([T]), float64, from the HF-named weights.
torch::Tensor referenceGpt2(const Weights& W, const ModelConfig& c, const torch::Tensor& ids) {
  const int64_t T = ids.size(0), H = c.hidden_size, nh = c.num_attention_heads, D = H / nh;
  torch::Tensor x = W.at("transformer.wte.weight").index_select(0, ids) + W.at("transformer.wpe.weight").narrow(0, 0, T);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "transformer.h." + std::to_string(l) + ".";
    // transformers' GPT2Attention: / sqrt(D) when scale_attn_weights, / (l + 1) when by inverse layer index.
    const double scale = (c.scale_attn_weights ? 1 / std::sqrt(double(D)) : 1.0) /
                         (c.scale_attn_by_inverse_layer_idx ? double(l + 1) : 1.0);
    const auto h = refLayerNorm(x, W.at(p + "ln_1.weight"), W.at(p + "ln_1.bias"), c.norm_eps);
    const auto qkv = h.matmul(W.at(p + "attn.c_attn.weight")) + W.at(p + "attn.c_attn.bias");
    std::vector<torch::Tensor> heads;
    for (int64_t i = 0; i < nh; ++i)
      heads.push_back(refHeadAttention(qkv.narrow(1, i * D, D), qkv.narrow(1, H + i * D, D),
                                       qkv.narrow(1, 2 * H + i * D, D), scale));
    x = x + torch::cat(heads, 1).matmul(W.at(p + "attn.c_proj.weight")) + W.at(p + "attn.c_proj.bias");
    const auto h2 = refLayerNorm(x, W.at(p + "ln_2.weight"), W.at(p + "ln_2.bias"), c.norm_eps);
    const auto a = refGeluTanh(h2.matmul(W.at(p + "mlp.c_fc.weight")) + W.at(p + "mlp.c_fc.bias"));
    x = x + a.matmul(W.at(p + "mlp.c_proj.weight")) + W.at(p + "mlp.c_proj.bias");
  }
  x = refLayerNorm(x, W.at("transformer.ln_f.weight"), W.at("transformer.ln_f.bias"), c.norm_eps);
  return x.matmul(W.at("transformer.wte.weight").t());
}

// Inverse RoPE frequencies in double precision from the published formulas
// (transformers' modeling_rope_utils), one loop per dimension pair.
std::vector<double> refInverseFrequencies(const ModelConfig& c, double& attentionScale) {
  const int64_t D = c.head_dim;
  const RopeScaling& s = c.rope_scaling;
  std::vector<double> f;
  attentionScale = 1.0;
  for (int64_t i = 0; i < D / 2; ++i) f.push_back(std::pow(c.rope_theta, -2.0 * i / D));
  if (s.type == "linear") {
    for (double& v : f) v /= s.factor;
  } else if (s.type == "llama3") {
    const double old = double(s.original_max_position_embeddings);
    for (double& v : f) {
      const double wavelen = 2 * M_PI / v;
      if (wavelen > old / s.low_freq_factor) {
        v /= s.factor;
      } else if (wavelen >= old / s.high_freq_factor) {
        const double smooth = (old / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        v = (1 - smooth) * v / s.factor + smooth * v;
      }
    }
  } else if (s.type == "yarn") {
    auto correction = [&](double rotations) {
      return D * std::log(s.original_max_position_embeddings / (rotations * 2 * M_PI)) / (2 * std::log(c.rope_theta));
    };
    const double low = std::max(std::floor(correction(s.beta_fast)), 0.0);
    const double high = std::min(std::ceil(correction(s.beta_slow)), double(D - 1));
    for (int64_t i = 0; i < D / 2; ++i) {
      const double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
      f[i] = f[i] / s.factor * ramp + f[i] * (1 - ramp);
    }
    attentionScale = 0.1 * std::log(s.factor) + 1.0;
  }
  return f;
}

// RoPE written per position and dimension pair (i, i + D/2), as in the HF
// rotate_half convention, with angles in double precision.
torch::Tensor refRope(const torch::Tensor& x, const ModelConfig& c) {
  double attentionScale = 1.0;
  const std::vector<double> invFreq = refInverseFrequencies(c, attentionScale);
  const int64_t T = x.size(0), D = x.size(1);
  torch::Tensor out = x.clone();
  auto xa = x.accessor<double, 2>();
  auto oa = out.accessor<double, 2>();
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < D / 2; ++i) {
      const double angle = t * invFreq[i];
      const double cs = std::cos(angle) * attentionScale, sn = std::sin(angle) * attentionScale;
      oa[t][i] = xa[t][i] * cs - xa[t][i + D / 2] * sn;
      oa[t][i + D / 2] = xa[t][i + D / 2] * cs + xa[t][i] * sn;
    }
  return out;
}

torch::Tensor linearRef(const Weights& W, const std::string& name, const torch::Tensor& x) {
  torch::Tensor y = x.matmul(W.at(name + ".weight").t());
  if (W.count(name + ".bias")) y = y + W.at(name + ".bias");
  return y;
}

torch::Tensor referenceLlama(const Weights& W, const ModelConfig& c, const torch::Tensor& ids) {
  const int64_t nh = c.num_attention_heads, nkv = c.num_key_value_heads, D = c.head_dim;
  torch::Tensor x = W.at("model.embed_tokens.weight").index_select(0, ids);
  for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const auto h = refRmsNorm(x, W.at(p + "input_layernorm.weight"), c.norm_eps);
    const auto q = linearRef(W, p + "self_attn.q_proj", h);
    const auto k = linearRef(W, p + "self_attn.k_proj", h);
    const auto v = linearRef(W, p + "self_attn.v_proj", h);
    // Qwen3: RMSNorm over each head of q and k before the rotation.
    auto head = [&](const torch::Tensor& t, int64_t i, const char* norm) {
      torch::Tensor h = t.narrow(1, i * D, D).contiguous();
      if (c.qk_norm) h = refRmsNorm(h, W.at(p + "self_attn." + norm + ".weight"), c.norm_eps);
      return refRope(h, c);
    };
    std::vector<torch::Tensor> heads;
    for (int64_t i = 0; i < nh; ++i) {
      const int64_t kvHead = i / (nh / nkv);
      heads.push_back(refHeadAttention(head(q, i, "q_norm"), head(k, kvHead, "k_norm"), v.narrow(1, kvHead * D, D),
                                       0, c.sliding_window));
    }
    x = x + linearRef(W, p + "self_attn.o_proj", torch::cat(heads, 1));
    const auto h2 = refRmsNorm(x, W.at(p + "post_attention_layernorm.weight"), c.norm_eps);
    const auto gate = linearRef(W, p + "mlp.gate_proj", h2);
    x = x + linearRef(W, p + "mlp.down_proj", gate * torch::sigmoid(gate) * linearRef(W, p + "mlp.up_proj", h2));
  }
  x = refRmsNorm(x, W.at("model.norm.weight"), c.norm_eps);
  return x.matmul((c.tie_word_embeddings ? W.at("model.embed_tokens.weight") : W.at("lm_head.weight")).t());
}

std::vector<std::string> expectedGpt2Names() {
  std::vector<std::string> names = {"transformer.wte.weight", "transformer.wpe.weight"};
  for (int l = 0; l < 2; ++l)
    for (const char* s : {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                          "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                          "mlp.c_proj.weight", "mlp.c_proj.bias"})
      names.push_back("transformer.h." + std::to_string(l) + "." + s);
  names.push_back("transformer.ln_f.weight");
  names.push_back("transformer.ln_f.bias");
  return names;
}

std::vector<std::string> expectedLlamaNames() {
  std::vector<std::string> names = {"model.embed_tokens.weight"};
  for (int l = 0; l < 2; ++l)
    for (const char* s : {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
                          "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
                          "mlp.down_proj.weight", "input_layernorm.weight", "post_attention_layernorm.weight"})
      names.push_back("model.layers." + std::to_string(l) + "." + s);
  names.push_back("model.norm.weight");
  names.push_back("lm_head.weight");
  return names;
}

std::vector<std::string> namesOf(CausalLM& m) {
  std::vector<std::string> n;
  for (const auto& p : m.named_parameters()) n.push_back(p.key());
  return n;
}

torch::Tensor sampleIds(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randint(0, V, {B, T}, torch::kInt64);
}

const ModuleNode* findNode(const ModuleNode& n, const std::string& path) {
  if (n.path == path) return &n;
  for (const auto& c : n.children)
    if (const ModuleNode* f = findNode(c, path)) return f;
  return nullptr;
}

// A tiny Llama config with extra config.json fields.
ModelConfig tinyLlamaWith(const nlohmann::json& extra) {
  nlohmann::json j = test::tinyLlamaConfig().toJson();
  j.erase("architectures");
  for (const auto& [key, value] : extra.items()) j[key] = value;
  return ModelConfig::fromJson(j);
}

// Field-by-field equality of two module trees; returns the first difference.
std::string treeDifference(const ModuleNode& a, const ModuleNode& b) {
  if (a.path != b.path || a.name != b.name || a.type != b.type || a.ownParameters != b.ownParameters ||
      a.totalParameters != b.totalParameters || a.tiedTo != b.tiedTo || a.children.size() != b.children.size())
    return "at '" + a.path + "': " + a.name + "/" + a.type + "/" + std::to_string(a.ownParameters) + "/" +
           std::to_string(a.children.size()) + " vs '" + b.path + "': " + b.name + "/" + b.type + "/" +
           std::to_string(b.ownParameters) + "/" + std::to_string(b.children.size());
  for (std::size_t i = 0; i < a.children.size(); ++i)
    if (auto d = treeDifference(a.children[i], b.children[i]); !d.empty()) return d;
  return "";
}

ModelConfig qwen2Config() {
  nlohmann::json j = test::tinyLlamaConfig().toJson();
  j["model_type"] = "qwen2";
  j.erase("attention_bias");
  j.erase("architectures");
  return ModelConfig::fromJson(j);
}

}  // namespace

class ModelsTest : public QObject {
  Q_OBJECT

  void checkAgainstReference(const ModelConfig& c, bool llama) {
    auto model = createModel(c, 1);
    randomizeWeights(*model, 11);
    const torch::Tensor ids = sampleIds(2, 13, c.vocab_size, 5);
    const torch::Tensor logits = model->forward(ids);
    QCOMPARE(logits.scalar_type(), torch::kFloat32);
    QCOMPARE(logits.sizes().vec(), (std::vector<int64_t>{2, 13, c.vocab_size}));
    const Weights W = weightsOf(*model);
    for (int64_t b = 0; b < 2; ++b) {
      const torch::Tensor ref = llama ? referenceLlama(W, c, ids[b]) : referenceGpt2(W, c, ids[b]);
      const double diff = (logits[b].to(torch::kFloat64) - ref).abs().max().item<double>();
      const double scale = ref.abs().max().item<double>();
      QVERIFY2(scale > 0.5, "reference logits are degenerate");
      QVERIFY2(diff < 1e-5 * std::max(1.0, scale), (std::to_string(diff) + " vs scale " + std::to_string(scale)).c_str());
    }
  }

 private slots:
  void initTestCase() { torch::set_num_threads(1); }

  void gpt2NamesAndShapes() {
    auto m = createModel(test::tinyGpt2Config(), 0);
    QCOMPARE(namesOf(*m), expectedGpt2Names());
    const auto params = m->named_parameters();
    QCOMPARE(params["transformer.wte.weight"].sizes().vec(), (std::vector<int64_t>{61, 32}));
    QCOMPARE(params["transformer.wpe.weight"].sizes().vec(), (std::vector<int64_t>{32, 32}));
    QCOMPARE(params["transformer.h.0.attn.c_attn.weight"].sizes().vec(), (std::vector<int64_t>{32, 96}));
    QCOMPARE(params["transformer.h.0.attn.c_attn.bias"].sizes().vec(), (std::vector<int64_t>{96}));
    QCOMPARE(params["transformer.h.1.mlp.c_fc.weight"].sizes().vec(), (std::vector<int64_t>{32, 128}));
    QCOMPARE(params["transformer.h.1.mlp.c_proj.weight"].sizes().vec(), (std::vector<int64_t>{128, 32}));
    QCOMPARE(m->tiedParameterNames(), std::vector<std::string>{"lm_head.weight"});
  }

  void llamaNamesAndShapes() {
    auto m = createModel(test::tinyLlamaConfig(), 0);
    QCOMPARE(namesOf(*m), expectedLlamaNames());
    const auto params = m->named_parameters();
    QCOMPARE(params["model.layers.0.self_attn.q_proj.weight"].sizes().vec(), (std::vector<int64_t>{32, 32}));
    QCOMPARE(params["model.layers.0.self_attn.k_proj.weight"].sizes().vec(), (std::vector<int64_t>{16, 32}));
    QCOMPARE(params["model.layers.0.self_attn.v_proj.weight"].sizes().vec(), (std::vector<int64_t>{16, 32}));
    QCOMPARE(params["model.layers.1.mlp.gate_proj.weight"].sizes().vec(), (std::vector<int64_t>{64, 32}));
    QCOMPARE(params["model.layers.1.mlp.down_proj.weight"].sizes().vec(), (std::vector<int64_t>{32, 64}));
    QCOMPARE(params["lm_head.weight"].sizes().vec(), (std::vector<int64_t>{61, 32}));
    QVERIFY(m->tiedParameterNames().empty());

    ModelConfig tied = test::tinyLlamaConfig();
    tied.tie_word_embeddings = true;
    auto t = createModel(tied, 0);
    QVERIFY(!t->named_parameters().contains("lm_head.weight"));
    QCOMPARE(t->tiedParameterNames(), std::vector<std::string>{"lm_head.weight"});

    auto q = createModel(qwen2Config(), 0);
    const auto qp = q->named_parameters();
    QVERIFY(qp.contains("model.layers.0.self_attn.q_proj.bias"));
    QVERIFY(qp.contains("model.layers.0.self_attn.v_proj.bias"));
    QVERIFY(!qp.contains("model.layers.0.self_attn.o_proj.bias"));
  }

  void parameterCountMatchesModules() {
    ModelConfig tiedLlama = test::tinyLlamaConfig();
    tiedLlama.tie_word_embeddings = true;
    ModelConfig untiedGpt2 = test::tinyGpt2Config();
    untiedGpt2.tie_word_embeddings = false;
    for (const ModelConfig& c : {test::tinyGpt2Config(), test::tinyLlamaConfig(), tiedLlama, qwen2Config(), untiedGpt2}) {
      auto m = createModel(c, 0);
      int64_t sum = 0;
      for (const auto& p : m->parameters()) sum += p.numel();
      QCOMPARE(c.parameterCount(), sum);
      QCOMPARE(describeModules(*m).totalParameters, sum);
    }
  }

  void gpt2MatchesReference() { checkAgainstReference(test::tinyGpt2Config(), false); }
  void llamaMatchesReference() { checkAgainstReference(test::tinyLlamaConfig(), true); }
  void qwen2MatchesReference() { checkAgainstReference(qwen2Config(), true); }
  void tiedLlamaMatchesReference() {
    ModelConfig c = test::tinyLlamaConfig();
    c.tie_word_embeddings = true;
    c.rope_theta = 500.0;  // a different base must change the result the same way in both
    checkAgainstReference(c, true);
  }

  // Hand-computed (head_dim 8, theta 10000: plain frequencies 1, 0.1, 0.01, 0.001).
  void ropeFrequenciesMatchPublishedFormulas() {
    auto freqs = [](const nlohmann::json& scaling, double& attention) {
      const auto r = ropeFrequencies(tinyLlamaWith({{"rope_scaling", scaling}}), torch::kCPU);
      attention = r.attentionScaling;
      const auto t = r.invFreq.to(torch::kFloat64);
      return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
    };
    auto near = [](const std::vector<double>& got, const std::vector<double>& want) {
      if (got.size() != want.size()) return false;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-6 * want[i]) return false;
      return true;
    };
    double attention = 0;
    QVERIFY(near(freqs({{"rope_type", "default"}}, attention), {1, 0.1, 0.01, 0.001}));
    QVERIFY(near(freqs({{"type", "linear"}, {"factor", 4.0}}, attention), {0.25, 0.025, 0.0025, 0.00025}));
    QCOMPARE(attention, 1.0);
    // llama3, original context 2048: wavelengths 6.3 and 63 < 2048/4 are kept,
    // 6283 > 2048/1 is divided by 8, 628 is smoothed with
    // s = (2048 / 628.3 - 1) / (4 - 1) = 0.753164: (1 - s) * 0.01 / 8 + s * 0.01.
    QVERIFY(near(freqs({{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                        {"original_max_position_embeddings", 2048}},
                       attention),
                 {1, 0.1, 0.007840188600689215, 0.000125}));
    // yarn, factor 4, original 2048: correction range [floor(1.008), ceil(2.513)] = [1, 3];
    // ramp 0, 0, 0.5, 1 blends extrapolation f and interpolation f / 4; attention 0.1 ln 4 + 1.
    QVERIFY(near(freqs({{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 2048}}, attention),
                 {1, 0.1, 0.00625, 0.00025}));
    QVERIFY(std::abs(attention - 1.138629436111989) < 1e-12);
  }

  void scaledRopeModelsMatchReference() {
    // original context 64: wavelengths 6.3 (kept), 63 (smoothed), 628 and 6283 (divided).
    checkAgainstReference(tinyLlamaWith({{"rope_scaling",
                                          {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                                           {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 64}}}}),
                          true);
    checkAgainstReference(tinyLlamaWith({{"rope_scaling", {{"type", "linear"}, {"factor", 2.0}}}}), true);
    checkAgainstReference(
        tinyLlamaWith({{"rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 8}}}}),
        true);
  }

  void qwen3QkNormMatchesReference() {
    const ModelConfig c = tinyLlamaWith({{"model_type", "qwen3"}, {"head_dim", 16}, {"attention_bias", false}});
    QVERIFY(c.qk_norm);
    auto m = createModel(c, 0);
    const auto params = m->named_parameters();
    QCOMPARE(params["model.layers.1.self_attn.q_norm.weight"].sizes().vec(), (std::vector<int64_t>{16}));
    QCOMPARE(params["model.layers.1.self_attn.k_norm.weight"].sizes().vec(), (std::vector<int64_t>{16}));
    QCOMPARE(params["model.layers.0.self_attn.q_proj.weight"].sizes().vec(), (std::vector<int64_t>{64, 32}));
    QVERIFY(!params.contains("model.layers.0.self_attn.q_proj.bias"));
    int64_t sum = 0;
    for (const auto& p : m->parameters()) sum += p.numel();
    QCOMPARE(c.parameterCount(), sum);
    checkAgainstReference(c, true);
  }

  void mistralSlidingWindowMatchesReference() {
    const ModelConfig c = tinyLlamaWith({{"model_type", "mistral"}, {"sliding_window", 4}});
    QCOMPARE(c.sliding_window, int64_t(4));
    checkAgainstReference(c, true);
    // A window longer than the sequence changes nothing.
    auto windowed = createModel(tinyLlamaWith({{"model_type", "mistral"}, {"sliding_window", 13}}), 5);
    auto plain = createModel(tinyLlamaWith({{"model_type", "mistral"}}), 5);
    const torch::Tensor ids = sampleIds(1, 13, 61, 3);
    QVERIFY(torch::equal(windowed->forward(ids), plain->forward(ids)));
  }

  void gpt2AttentionScalingFlagsMatchReference() {
    nlohmann::json j = test::tinyGpt2Config().toJson();
    j["scale_attn_by_inverse_layer_idx"] = true;
    checkAgainstReference(ModelConfig::fromJson(j), false);
    j["scale_attn_weights"] = false;
    j["reorder_and_upcast_attn"] = true;
    checkAgainstReference(ModelConfig::fromJson(j), false);
  }

  void moduleTreeFromConfigEqualsBuiltModel() {
    ModelConfig untiedGpt2 = test::tinyGpt2Config();
    untiedGpt2.tie_word_embeddings = false;
    ModelConfig tiedLlama = test::tinyLlamaConfig();
    tiedLlama.tie_word_embeddings = true;
    const std::vector<ModelConfig> configs = {
        test::tinyGpt2Config(), untiedGpt2, test::tinyLlamaConfig(), tiedLlama, qwen2Config(),
        tinyLlamaWith({{"model_type", "qwen3"}, {"head_dim", 16}}),
        tinyLlamaWith({{"model_type", "mistral"}, {"sliding_window", 8}}),
        tinyLlamaWith({{"attention_bias", true}, {"mlp_bias", true}})};
    for (const ModelConfig& c : configs) {
      const std::string d = treeDifference(describeModulesFromConfig(c), describeModules(*createModel(c, 0)));
      QVERIFY2(d.empty(), (c.model_type + ": " + d).c_str());
    }
  }

  // Llama-2-7B's config: the tree comes from the config, no weight is allocated.
  void inspectingA7bModelAllocatesNoWeights() {
    QTemporaryDir dir;
    const std::string path = dir.path().toStdString() + "/config.json";
    std::ofstream(path) << R"({"architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
      "intermediate_size": 11008, "max_position_embeddings": 4096, "model_type": "llama", "num_attention_heads": 32,
      "num_hidden_layers": 32, "num_key_value_heads": 32, "rms_norm_eps": 1e-05, "vocab_size": 32000})";
    auto residentBytes = [] {
      long pages = 0, resident = 0;
      std::ifstream("/proc/self/statm") >> pages >> resident;
      return resident * 4096L;
    };
    const long before = residentBytes();
    const auto start = std::chrono::steady_clock::now();
    ModelSpec spec;
    spec.source = "config";
    spec.path = path;
    const ModelOverview o = inspectModel(spec);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QCOMPARE(o.parameterCount, int64_t(6738415616));  // Llama-2-7B as published
    QCOMPARE(o.modules.totalParameters, int64_t(6738415616));
    QCOMPARE(o.modules.children[0].children[1].children.size(), std::size_t(32));
    QVERIFY2(seconds < 1.0, std::to_string(seconds).c_str());
    QVERIFY2(residentBytes() - before < 64L * 1024 * 1024, std::to_string(residentBytes() - before).c_str());
  }

  void causality() {
    for (const ModelConfig& c : {test::tinyGpt2Config(), test::tinyLlamaConfig()}) {
      auto m = createModel(c, 2);
      randomizeWeights(*m, 4);
      const torch::Tensor ids = sampleIds(1, 16, c.vocab_size, 9);
      const int64_t t = 7;
      torch::Tensor changed = ids.clone();
      changed[0][t + 1] = (changed[0][t + 1].item<int64_t>() + 1) % c.vocab_size;
      changed[0][15] = (changed[0][15].item<int64_t>() + 3) % c.vocab_size;
      const auto a = m->forward(ids), b = m->forward(changed);
      QVERIFY(torch::allclose(a.narrow(1, 0, t + 1), b.narrow(1, 0, t + 1), 0, 1e-6));
      QVERIFY(!torch::allclose(a.narrow(1, t + 1, 1), b.narrow(1, t + 1, 1), 0, 1e-4));
    }
  }

  void mixedPrecisionForwardBackward() {
    for (const ModelConfig& c : {test::tinyGpt2Config(), test::tinyLlamaConfig()}) {
      const bool gpt2 = c.family == ArchitectureFamily::Gpt2;
      auto ref = createModel(c, 3);
      auto mixed = createModel(c, 3);
      const std::vector<std::string> toBf16 =
          gpt2 ? std::vector<std::string>{"transformer.h.0.attn.c_attn", "transformer.h.1.mlp", "transformer.h.0.ln_2",
                                          "transformer.wte"}
               : std::vector<std::string>{"model.layers.0.self_attn.q_proj", "model.layers.1.mlp.gate_proj",
                                          "model.layers.0.input_layernorm", "model.embed_tokens", "lm_head"};
      const auto modules = mixed->named_modules();
      for (const auto& path : toBf16) modules[path]->to(torch::kBFloat16);
      int bf16Params = 0;
      for (const auto& p : mixed->parameters()) bf16Params += p.scalar_type() == torch::kBFloat16;
      QVERIFY(bf16Params >= 4);

      const torch::Tensor ids = sampleIds(2, 10, c.vocab_size, 1);
      const torch::Tensor targets = sampleIds(2, 10, c.vocab_size, 2);
      const torch::Tensor logits = mixed->forward(ids);
      QCOMPARE(logits.scalar_type(), torch::kFloat32);
      const torch::Tensor refLogits = ref->forward(ids);
      const double diff = (logits - refLogits).abs().max().item<double>();
      const double scale = refLogits.abs().max().item<double>();
      QVERIFY2(diff < 0.05 * scale + 1e-3, (std::to_string(diff) + " vs scale " + std::to_string(scale)).c_str());

      const torch::Tensor loss = mixed->loss(ids, targets);
      QCOMPARE(loss.scalar_type(), torch::kFloat32);
      QVERIFY(std::abs(loss.item<double>() - ref->loss(ids, targets).item<double>()) < 0.02);
      loss.backward();
      for (const auto& p : mixed->named_parameters()) {
        QVERIFY2(p.value().grad().defined(), p.key().c_str());
        QVERIFY2(p.value().grad().scalar_type() == p.value().scalar_type(), p.key().c_str());
        QVERIFY2(torch::isfinite(p.value().grad().to(torch::kFloat32)).all().item<bool>(), p.key().c_str());
      }
    }
  }

  // loss() is the mean token cross-entropy: check against log-softmax by hand.
  void lossIsMeanCrossEntropy() {
    auto m = createModel(test::tinyLlamaConfig(), 5);
    randomizeWeights(*m, 6);
    const torch::Tensor ids = sampleIds(2, 6, 61, 7), targets = sampleIds(2, 6, 61, 8);
    const torch::Tensor logits = m->forward(ids).to(torch::kFloat64);
    const torch::Tensor logp = logits - logits.exp().sum(-1, true).log();
    const double expected = -logp.gather(-1, targets.unsqueeze(-1)).mean().item<double>();
    QVERIFY(std::abs(m->loss(ids, targets).item<double>() - expected) < 1e-5);
  }

  void createModelIsSeeded() {
    for (const ModelConfig& c : {test::tinyGpt2Config(), test::tinyLlamaConfig()}) {
      auto a = createModel(c, 42), b = createModel(c, 42), d = createModel(c, 43);
      torch::manual_seed(0);  // the global generator must not matter
      auto e = createModel(c, 42);
      const auto pa = a->named_parameters(), pb = b->named_parameters(), pd = d->named_parameters(),
                 pe = e->named_parameters();
      for (const auto& p : pa) {
        QVERIFY2(torch::equal(p.value(), pb[p.key()]), p.key().c_str());
        QVERIFY2(torch::equal(p.value(), pe[p.key()]), p.key().c_str());
        const bool random = p.value().std().item<double>() > 0;
        if (random) QVERIFY2(!torch::equal(p.value(), pd[p.key()]), p.key().c_str());
      }
    }
  }

  // transformers' _init_weights: N(0, 0.02), GPT-2 c_proj N(0, 0.02/sqrt(2L)),
  // zero biases, unit norms.
  void initStatistics() {
    auto g = createModel(test::tinyGpt2Config(), 9);
    const auto p = g->named_parameters();
    auto near = [](double v, double want) { return std::abs(v - want) < 0.15 * want; };
    QVERIFY(near(p["transformer.h.0.mlp.c_fc.weight"].std().item<double>(), 0.02));
    QVERIFY(near(p["transformer.h.0.mlp.c_proj.weight"].std().item<double>(), 0.01));
    QVERIFY(near(p["transformer.h.1.attn.c_proj.weight"].std().item<double>(), 0.01));
    QVERIFY(near(p["transformer.wte.weight"].std().item<double>(), 0.02));
    QVERIFY(torch::equal(p["transformer.h.0.attn.c_attn.bias"], torch::zeros({96})));
    QVERIFY(torch::equal(p["transformer.ln_f.weight"], torch::ones({32})));
    QVERIFY(torch::equal(p["transformer.ln_f.bias"], torch::zeros({32})));
    auto l = createModel(test::tinyLlamaConfig(), 9);
    const auto lp = l->named_parameters();
    QVERIFY(near(lp["model.layers.0.mlp.down_proj.weight"].std().item<double>(), 0.02));
    QVERIFY(torch::equal(lp["model.norm.weight"], torch::ones({32})));
  }

  void moduleTree() {
    auto g = createModel(test::tinyGpt2Config(), 0);
    const ModuleNode root = describeModules(*g);
    QCOMPARE(root.type, std::string("GPT2LMHeadModel"));
    QCOMPARE(root.path, std::string(""));
    QCOMPARE(root.ownParameters, int64_t(0));
    QCOMPARE(root.children.size(), size_t(2));
    // The tied head is in the tree, with no weight of its own.
    const ModuleNode& head = root.children[1];
    QCOMPARE(head.path, std::string("lm_head"));
    QCOMPARE(head.tiedTo, std::string("transformer.wte"));
    QCOMPARE(head.totalParameters, int64_t(0));
    QCOMPARE(root.totalParameters, test::tinyGpt2Config().parameterCount());
    const ModuleNode& tr = root.children[0];
    QCOMPARE(tr.name, std::string("transformer"));
    std::vector<std::string> childNames;
    for (const auto& c : tr.children) childNames.push_back(c.name);
    QCOMPARE(childNames, (std::vector<std::string>{"wte", "wpe", "h", "ln_f"}));
    const ModuleNode* h1 = findNode(root, "transformer.h.1");
    QVERIFY(h1);
    QCOMPARE(h1->name, std::string("1"));
    QCOMPARE(h1->type, std::string("GPT2Block"));
    QCOMPARE(findNode(root, "transformer.h")->type, std::string("ModuleList"));
    const ModuleNode* cAttn = findNode(root, "transformer.h.0.attn.c_attn");
    QVERIFY(cAttn);
    QCOMPARE(cAttn->type, std::string("Conv1D"));
    QCOMPARE(cAttn->ownParameters, int64_t(32 * 96 + 96));
    QCOMPARE(cAttn->totalParameters, cAttn->ownParameters);
    QCOMPARE(findNode(root, "transformer.h.0.attn")->type, std::string("GPT2Attention"));
    QCOMPARE(findNode(root, "transformer.h.0.attn")->totalParameters, int64_t(32 * 96 + 96 + 32 * 32 + 32));
    QCOMPARE(findNode(root, "transformer.h.0.mlp")->type, std::string("GPT2MLP"));
    QCOMPARE(findNode(root, "transformer.ln_f")->type, std::string("LayerNorm"));
    QCOMPARE(findNode(root, "transformer.wte")->type, std::string("Embedding"));

    auto l = createModel(test::tinyLlamaConfig(), 0);
    const ModuleNode lr = describeModules(*l);
    QCOMPARE(lr.type, std::string("LlamaForCausalLM"));
    QCOMPARE(findNode(lr, "model.layers.0")->type, std::string("LlamaDecoderLayer"));
    QCOMPARE(findNode(lr, "model.layers.0.self_attn.k_proj")->type, std::string("Linear"));
    QCOMPARE(findNode(lr, "model.layers.0.self_attn.k_proj")->ownParameters, int64_t(16 * 32));
    QCOMPARE(findNode(lr, "model.norm")->type, std::string("RMSNorm"));
    QCOMPARE(findNode(lr, "lm_head")->ownParameters, int64_t(61 * 32));
    QCOMPARE(findNode(lr, "lm_head")->tiedTo, std::string());
    QCOMPARE(lr.totalParameters, test::tinyLlamaConfig().parameterCount());
  }

  void badInputsAreModelErrors() {
    auto m = createModel(test::tinyGpt2Config(), 0);
    QVERIFY_EXCEPTION_THROWN(m->forward(torch::zeros({1, 33}, torch::kInt64)), ModelError);  // > n_positions
    QVERIFY_EXCEPTION_THROWN(m->forward(torch::full({1, 4}, 61, torch::kInt64)), ModelError);  // id >= vocab
    QVERIFY_EXCEPTION_THROWN(m->forward(torch::zeros({4}, torch::kInt64)), ModelError);
  }
};

PLAB_TEST_APPLESS_MAIN(ModelsTest)
}  // namespace test_models
#include "test_models.moc"
