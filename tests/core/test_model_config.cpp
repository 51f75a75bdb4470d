// config.json parsing for GPT-2 and the Llama family: field mapping,
// Hugging Face defaults, exact parameter counts of published models, and
// error messages that name the field, value or file.
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "model/model_config.h"
#include "support/error_capture.h"
#include "support/test_registry.h"
#include "support/tiny_models.h"
#include "util/errors.h"

namespace test_model_config {

using namespace plab;
using nlohmann::json;

using plab::test::errorMessageOf;
using plab::test::mentions;

namespace {

// The published gpt2 (124M) config.json.
json gpt2Small() {
  return json::parse(R"({"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
    "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
    "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024,
    "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257})");
}

// The published SmolLM-135M config.json (Llama, GQA, tied embeddings).
json smolLm135m() {
  return json::parse(R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false,
    "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576,
    "initializer_range": 0.02, "intermediate_size": 1536, "max_position_embeddings": 2048,
    "model_type": "llama", "num_attention_heads": 9, "num_hidden_layers": 30, "num_key_value_heads": 3,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0,
    "tie_word_embeddings": true, "torch_dtype": "float32", "use_cache": true, "vocab_size": 49152})");
}

// The published Llama-3.2-1B config.json (rope_scaling llama3, tied embeddings).
json llama32_1b() {
  return json::parse(R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 8192, "max_position_embeddings": 131072, "mlp_bias": false,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0,
    "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true,
    "vocab_size": 128256})");
}

// The published Qwen3-0.6B config.json (q_norm / k_norm, head_dim 128).
json qwen3_06b() {
  return json::parse(R"({"architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu", "hidden_size": 1024,
    "initializer_range": 0.02, "intermediate_size": 3072, "max_position_embeddings": 40960, "max_window_layers": 28,
    "model_type": "qwen3", "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null,
    "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true, "use_sliding_window": false,
    "vocab_size": 151936})");
}

}  // namespace

class ModelConfigTest : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  void gpt2Fields() {
    const ModelConfig c = ModelConfig::fromJson(gpt2Small());
    QVERIFY(c.family == ArchitectureFamily::Gpt2);
    QCOMPARE(c.hidden_size, int64_t(768));
    QCOMPARE(c.num_hidden_layers, int64_t(12));
    QCOMPARE(c.num_attention_heads, int64_t(12));
    QCOMPARE(c.num_key_value_heads, int64_t(12));
    QCOMPARE(c.intermediate_size, int64_t(4 * 768));  // n_inner absent -> 4 * n_embd
    QCOMPARE(c.max_position_embeddings, int64_t(1024));
    QCOMPARE(c.head_dim, int64_t(64));
    QCOMPARE(c.norm_eps, 1e-5);
    QCOMPARE(c.hidden_act, std::string("gelu_new"));
    QVERIFY(c.tie_word_embeddings);
    QCOMPARE(c.eos_token_id, int64_t(50256));
  }

  void gpt2ExplicitInner() {
    json j = gpt2Small();
    j["n_inner"] = 1000;
    j["tie_word_embeddings"] = false;
    const ModelConfig c = ModelConfig::fromJson(j);
    QCOMPARE(c.intermediate_size, int64_t(1000));
    QVERIFY(!c.tie_word_embeddings);
  }

  // Published totals: gpt2 124,439,808; SmolLM-135M 134,515,008.
  void parameterCountsOfPublishedModels() {
    QCOMPARE(ModelConfig::fromJson(gpt2Small()).parameterCount(), int64_t(124439808));
    QCOMPARE(ModelConfig::fromJson(smolLm135m()).parameterCount(), int64_t(134515008));
  }

  void llamaFieldsAndDefaults() {
    const ModelConfig s = ModelConfig::fromJson(smolLm135m());
    QVERIFY(s.family == ArchitectureFamily::Llama);
    QCOMPARE(s.num_key_value_heads, int64_t(3));
    QCOMPARE(s.head_dim, int64_t(64));
    QVERIFY(s.tie_word_embeddings);
    QVERIFY(!s.attention_bias);

    const json minimal = {{"model_type", "llama"},      {"vocab_size", 100},        {"hidden_size", 64},
                          {"num_hidden_layers", 2},     {"num_attention_heads", 8}, {"intermediate_size", 128}};
    const ModelConfig c = ModelConfig::fromJson(minimal);
    QCOMPARE(c.num_key_value_heads, int64_t(8));  // defaults to the number of heads
    QVERIFY(!c.tie_word_embeddings);               // Llama default
    QCOMPARE(c.hidden_act, std::string("silu"));
    QCOMPARE(c.rope_theta, 10000.0);
    QCOMPARE(c.head_dim, int64_t(8));
    QCOMPARE(c.norm_eps, 1e-6);

    json withHeadDim = minimal;
    withHeadDim["head_dim"] = 16;
    withHeadDim["rope_theta"] = 500000.0;
    const ModelConfig h = ModelConfig::fromJson(withHeadDim);
    QCOMPARE(h.head_dim, int64_t(16));
    QCOMPARE(h.rope_theta, 500000.0);
    QCOMPARE(h.parameterCount(),
             int64_t(100 * 64 * 2 + 2 * (64 * 128 * 2 + 64 * 128 * 2 + 3 * 64 * 128 + 2 * 64) + 64));
  }

  void qwen2AndMistral() {
    json q = smolLm135m();
    q["model_type"] = "qwen2";
    q.erase("attention_bias");
    const ModelConfig c = ModelConfig::fromJson(q);
    QVERIFY(c.attention_bias);          // q/k/v biases by default
    QVERIFY(!c.attention_output_bias);  // but never on o_proj
    const int64_t qkvBias = 576 + 2 * 192;
    QCOMPARE(c.parameterCount(), int64_t(134515008 + 30 * qkvBias));

    json m = smolLm135m();
    m["model_type"] = "mistral";
    QCOMPARE(ModelConfig::fromJson(m).model_type, std::string("mistral"));
    QCOMPARE(ModelConfig::fromJson(m).parameterCount(), int64_t(134515008));
  }

  void architecturesHintWhenModelTypeMissing() {
    json j = smolLm135m();
    j.erase("model_type");
    QCOMPARE(ModelConfig::fromJson(j).model_type, std::string("llama"));
    json g = gpt2Small();
    g.erase("model_type");
    QVERIFY(ModelConfig::fromJson(g).family == ArchitectureFamily::Gpt2);
  }

  void unknownArchitectureNamesItAndListsSupported() {
    json j = gpt2Small();
    j["model_type"] = "bert";
    const std::string msg = errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(j); });
    QVERIFY2(mentions(msg, "'bert'"), msg.c_str());
    QVERIFY2(mentions(msg, "gpt2") && mentions(msg, "llama") && mentions(msg, "qwen2"), msg.c_str());

    json none = gpt2Small();
    none.erase("model_type");
    none["architectures"] = {"BertModel"};
    const std::string msg2 = errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(none); });
    QVERIFY2(mentions(msg2, "model_type") && mentions(msg2, "gpt2"), msg2.c_str());
  }

  // Absent fields take transformers' class defaults; a field of the wrong
  // JSON type is refused by name, as transformers' typed fields refuse it
  // (tests/reference/config_rules_vs_transformers.py sweeps them).
  void missingOrInvalidFieldsAreNamed() {
    json j = smolLm135m();
    j.erase("intermediate_size");
    QCOMPARE(ModelConfig::fromJson(j).intermediate_size, int64_t(11008));  // LlamaConfig's default
    json g = gpt2Small();
    g.erase("n_head");
    QCOMPARE(ModelConfig::fromJson(g).num_attention_heads, int64_t(12));
    json mistral = smolLm135m();
    mistral["model_type"] = "mistral";
    mistral["num_attention_heads"] = 8;
    mistral.erase("num_key_value_heads");
    mistral.erase("max_position_embeddings");
    const ModelConfig m = ModelConfig::fromJson(mistral);
    QCOMPARE(m.num_key_value_heads, int64_t(8));  // MistralConfig's default, not the attention heads
    QCOMPARE(m.max_position_embeddings, int64_t(131072));
    QCOMPARE(m.sliding_window, int64_t(4096));  // MistralConfig's default window
    for (const auto& [field, value] : std::vector<std::pair<const char*, json>>{
             {"hidden_size", 576.0}, {"num_hidden_layers", "30"}, {"rms_norm_eps", 0}, {"tie_word_embeddings", 1},
             {"attention_bias", "no"}, {"use_cache", nullptr}, {"architectures", "LlamaForCausalLM"}}) {
      json bad = smolLm135m();
      bad[field] = value;
      const std::string msg = errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(bad); });
      QVERIFY2(mentions(msg, std::string("'") + field + "'"), (std::string(field) + " -> " + msg).c_str());
    }
    json neg = gpt2Small();
    neg["n_layer"] = -1;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(neg); }), "'n_layer'"));
    json gqa = smolLm135m();
    gqa["num_key_value_heads"] = 4;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(gqa); }), "num_key_value_heads"));
    json act = smolLm135m();
    act["hidden_act"] = "prelu";  // transformers' PReLU has a weight of its own
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(act); }), "'prelu'"));
    act["hidden_act"] = "gelu_python";
    QCOMPARE(ModelConfig::fromJson(act).hidden_act, std::string("gelu_python"));
    json scaling = smolLm135m();
    scaling["rope_scaling"] = {{"rope_type", "llama3"}};
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(scaling); }), "rope_scaling"));
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(json::array()); }), "object"));
  }

  // What transformers 5 loads with a warning is loaded with the same warning.
  void whatTransformersWarnsAboutIsAWarning() {
    const auto warnings = [](const json& j) { return ModelConfig::fromJson(j).warnings; };
    json half = smolLm135m();
    half["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 0.5}};
    QCOMPARE(ModelConfig::fromJson(half).rope_scaling.factor, 0.5);
    QVERIFY(warnings(half).size() == 1 && mentions(warnings(half)[0], "below 1"));
    json empty = smolLm135m();
    empty["rope_scaling"] = json::object();
    QCOMPARE(ModelConfig::fromJson(empty).rope_scaling.type, std::string("default"));
    QVERIFY(warnings(empty).empty());
    json unknownKey = smolLm135m();
    unknownKey["rope_scaling"] = {{"rope_type", "default"}, {"factor", 2.0}};
    QVERIFY(warnings(unknownKey).size() == 1 && mentions(warnings(unknownKey)[0], "'factor'"));
    json pad = smolLm135m();
    pad["pad_token_id"] = -1;
    QVERIFY(warnings(pad).size() == 1 && mentions(warnings(pad)[0], "'pad_token_id'"));
    json llama3 = llama32_1b();
    llama3["rope_scaling"]["high_freq_factor"] = 0.5;
    QVERIFY(warnings(llama3).size() == 1 && mentions(warnings(llama3)[0], "high_freq_factor"));
    QVERIFY(ModelConfig::fromJson(llama32_1b()).warnings.empty());
  }

  void ropeScalingAndNewerArchitectures() {
    const ModelConfig l = ModelConfig::fromJson(llama32_1b());
    QCOMPARE(l.rope_scaling.type, std::string("llama3"));
    QCOMPARE(l.rope_scaling.factor, 32.0);
    QCOMPARE(l.rope_scaling.low_freq_factor, 1.0);
    QCOMPARE(l.rope_scaling.high_freq_factor, 4.0);
    QCOMPARE(l.rope_scaling.original_max_position_embeddings, int64_t(8192));
    QCOMPARE(l.parameterCount(), int64_t(1235814400));  // Llama-3.2-1B as published
    QCOMPARE(l.toJson()["rope_scaling"]["rope_type"].get<std::string>(), std::string("llama3"));

    const ModelConfig q = ModelConfig::fromJson(qwen3_06b());
    QVERIFY(q.qk_norm);
    QVERIFY(!q.attention_bias);
    QCOMPARE(q.sliding_window, int64_t(0));
    // 0.44 B without the embedding, as published for Qwen3-0.6B.
    QCOMPARE(q.parameterCount() - q.vocab_size * q.hidden_size, int64_t(440467456));
    json byArch = qwen3_06b();
    byArch.erase("model_type");
    QCOMPARE(ModelConfig::fromJson(byArch).model_type, std::string("qwen3"));

    json linear = smolLm135m();
    linear["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
    QCOMPARE(ModelConfig::fromJson(linear).rope_scaling.type, std::string("linear"));
    json yarn = smolLm135m();
    yarn["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
    QCOMPARE(ModelConfig::fromJson(yarn).rope_scaling.original_max_position_embeddings, int64_t(2048));

    json mistral = smolLm135m();
    mistral["model_type"] = "mistral";
    mistral["sliding_window"] = 4096;
    QCOMPARE(ModelConfig::fromJson(mistral).sliding_window, int64_t(4096));
    json gpt2 = gpt2Small();
    gpt2["scale_attn_by_inverse_layer_idx"] = true;
    gpt2["scale_attn_weights"] = false;
    const ModelConfig g = ModelConfig::fromJson(gpt2);
    QVERIFY(g.scale_attn_by_inverse_layer_idx);
    QVERIFY(!g.scale_attn_weights);
  }

  void unsupportedVariantsAreClearErrors() {
    json longrope = smolLm135m();
    longrope["rope_scaling"] = {{"rope_type", "longrope"}, {"factor", 2.0}};
    const std::string m = errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(longrope); });
    QVERIFY2(mentions(m, "'longrope'") && mentions(m, "llama3"), m.c_str());
    json dynamic = smolLm135m();  // identical to default up to max_position_embeddings
    dynamic["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
    QCOMPARE(ModelConfig::fromJson(dynamic).rope_scaling.type, std::string("dynamic"));
    json noLow = llama32_1b();
    noLow["rope_scaling"].erase("low_freq_factor");
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(noLow); }), "low_freq_factor"));
    json noOriginal = llama32_1b();  // transformers fills in max_position_embeddings (and warns)
    noOriginal["rope_scaling"].erase("original_max_position_embeddings");
    QCOMPARE(ModelConfig::fromJson(noOriginal).rope_scaling.original_max_position_embeddings,
             ModelConfig::fromJson(noOriginal).max_position_embeddings);
    json sliding = qwen3_06b();
    sliding["use_sliding_window"] = true;
    sliding["max_window_layers"] = 0;
    QCOMPARE(ModelConfig::fromJson(sliding).sliding_window, int64_t(0));  // sliding_window null: no window
    sliding.erase("sliding_window");  // Qwen3Config's default window, 4096
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(sliding); }), "use_sliding_window"));
    sliding["sliding_window"] = 4096;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(sliding); }), "use_sliding_window"));
    sliding["max_window_layers"] = 1000;  // no layer slides: plain attention
    QCOMPARE(ModelConfig::fromJson(sliding).sliding_window, int64_t(0));
    json partial = smolLm135m();
    partial["partial_rotary_factor"] = 0.5;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(partial); }), "partial_rotary_factor"));
  }

  void tokenIdsAreCheckedAgainstTheVocab() {
    json list = llama32_1b();
    list["eos_token_id"] = {128001, 128008, 128009};  // Llama-3.1 Instruct: the first is the one used
    QCOMPARE(ModelConfig::fromJson(list).eos_token_id, int64_t(128001));
    json none = gpt2Small();
    none["bos_token_id"] = nullptr;
    none.erase("eos_token_id");
    QCOMPARE(ModelConfig::fromJson(none).bos_token_id, int64_t(-1));
    QCOMPARE(ModelConfig::fromJson(none).eos_token_id, int64_t(-1));
    const auto messageFor = [](const char* field, const json& value) {
      json j = gpt2Small();
      j[field] = value;
      return errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(j); });
    };
    for (const json& bad : {json("50256"), json(1.5), json({50256, "x"}), json(true)}) {
      const std::string msg = messageFor("eos_token_id", bad);
      QVERIFY2(mentions(msg, "'eos_token_id'"), msg.c_str());
    }
    // Integers outside the vocabulary: unknown, with transformers' warning.
    json negative = gpt2Small();
    negative["eos_token_id"] = -1;
    QCOMPARE(ModelConfig::fromJson(negative).eos_token_id, int64_t(-1));
    QCOMPARE(ModelConfig::fromJson(negative).warnings.size(), std::size_t(1));
    // Past the vocabulary (GPT2Config's default 50256 with a small vocab_size,
    // which transformers loads): the model does not use it, so it is unknown.
    json small = gpt2Small();
    small["vocab_size"] = 300;
    small["bos_token_id"] = 50256;
    small["eos_token_id"] = 50256;
    QCOMPARE(ModelConfig::fromJson(small).bos_token_id, int64_t(-1));
    QCOMPARE(ModelConfig::fromJson(small).eos_token_id, int64_t(-1));
  }

  void meaninglessValuesAreRefusedByName() {
    const double inf = std::numeric_limits<double>::infinity();
    const auto messageFor = [](json j, const char* field, const json& value) {
      j[field] = value;
      return errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(j); });
    };
    for (const json& theta : {json(-1), json(0), json(0.0), json(inf), json(-inf), json("1e4")}) {
      const std::string msg = messageFor(smolLm135m(), "rope_theta", theta);
      QVERIFY2(mentions(msg, "'rope_theta'"), (theta.dump() + " -> " + msg).c_str());
    }
    QVERIFY(mentions(messageFor(smolLm135m(), "rms_norm_eps", -1e-6), "'rms_norm_eps'"));
    QVERIFY(mentions(messageFor(gpt2Small(), "layer_norm_epsilon", -1e-5), "'layer_norm_epsilon'"));
    QVERIFY(mentions(messageFor(gpt2Small(), "layer_norm_epsilon", inf), "'layer_norm_epsilon'"));
    QVERIFY(mentions(messageFor(smolLm135m(), "initializer_range", -0.02), "'initializer_range'"));
    const std::string cross = messageFor(gpt2Small(), "add_cross_attention", true);
    QVERIFY2(mentions(cross, "add_cross_attention"), cross.c_str());
    json noCross = gpt2Small();
    noCross["add_cross_attention"] = false;
    QCOMPARE(ModelConfig::fromJson(noCross).num_hidden_layers, int64_t(12));
    json factor = smolLm135m();
    factor["rope_scaling"] = {{"rope_type", "linear"}, {"factor", inf}};
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(factor); }), "factor"));
    json window = smolLm135m();
    window["model_type"] = "mistral";
    window["sliding_window"] = 0;
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(window); }), "'sliding_window'"));

    // In a file, a number too large for a double is a JSON error (it escaped
    // as a json::out_of_range once), and NaN is no JSON at all (the parser's
    // message quotes what it read up to there: the field).
    const std::filesystem::path p = tmp_.path().toStdString() + "/huge-theta.json";
    json huge = smolLm135m();
    huge["rope_theta"] = 12345.0;
    std::string text = huge.dump();
    text.replace(text.find("12345.0"), 7, "1e999");
    std::ofstream(p) << text;
    const std::string msg = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(p); });
    QVERIFY2(mentions(msg, "huge-theta.json") && mentions(msg, "1e999"), msg.c_str());
    text.replace(text.find("1e999"), 5, "NaN");
    std::ofstream(p) << text;
    const std::string nan = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(p); });
    QVERIFY2(mentions(nan, "huge-theta.json") && mentions(nan, "\"rope_theta\":N"), nan.c_str());
  }

  void transformers5RopeParameters() {
    // As transformers 5.24 writes a Llama config: no top-level rope_theta.
    json v5 = smolLm135m();
    v5.erase("rope_theta");
    v5.erase("rope_scaling");
    v5["rope_parameters"] = {{"rope_theta", 500000.0}, {"rope_type", "default"}};
    const ModelConfig c = ModelConfig::fromJson(v5);
    QCOMPARE(c.rope_theta, 500000.0);
    QCOMPARE(c.rope_scaling.type, std::string("default"));
    QCOMPARE(ModelConfig::fromJson(c.toJson()).rope_theta, 500000.0);
    // It wins over a leftover top-level rope_theta, as in transformers 5.
    v5["rope_theta"] = 10000.0;
    QCOMPARE(ModelConfig::fromJson(v5).rope_theta, 500000.0);

    json llama3 = llama32_1b();
    llama3["rope_parameters"] = llama3["rope_scaling"];
    llama3["rope_parameters"]["rope_theta"] = 500000.0;
    llama3.erase("rope_scaling");
    llama3.erase("rope_theta");
    const ModelConfig l = ModelConfig::fromJson(llama3);
    QCOMPARE(l.rope_scaling.type, std::string("llama3"));
    QCOMPARE(l.rope_scaling.factor, 32.0);
    QCOMPARE(l.rope_theta, 500000.0);

    json bad = v5;
    bad["rope_parameters"] = "default";
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(bad); }), "rope_parameters"));
    bad["rope_parameters"] = {{"rope_theta", -1.0}, {"rope_type", "default"}};
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(bad); }), "'rope_theta'"));
    bad["rope_parameters"] = {{"rope_theta", 1e4}, {"rope_type", "default"}, {"partial_rotary_factor", 0.5}};
    QVERIFY(mentions(errorMessageOf<ConfigError>([&] { ModelConfig::fromJson(bad); }), "partial_rotary_factor"));
  }

  void fromFileErrorsNameFileAndPosition() {
    const std::filesystem::path p = tmp_.path().toStdString() + "/broken-config.json";
    {
      std::ofstream out(p);
      out << "{\n  \"model_type\": \"gpt2\",\n  \"n_embd\": 32,,\n}\n";
    }
    const std::string msg = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(p); });
    QVERIFY2(mentions(msg, "broken-config.json"), msg.c_str());
    QVERIFY2(mentions(msg, "line 3"), msg.c_str());

    const std::string missing = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(tmp_.path().toStdString() + "/absent.json"); });
    QVERIFY2(mentions(missing, "absent.json"), missing.c_str());

    const std::filesystem::path bad = tmp_.path().toStdString() + "/bad-type.json";
    {
      std::ofstream out(bad);
      out << R"({"model_type": "t5"})";
    }
    const std::string typeMsg = errorMessageOf<ConfigError>([&] { ModelConfig::fromFile(bad); });
    QVERIFY2(mentions(typeMsg, "bad-type.json") && mentions(typeMsg, "'t5'"), typeMsg.c_str());
  }

  void toJsonRoundTrips() {
    for (const ModelConfig& c : {test::tinyGpt2Config(), test::tinyLlamaConfig(), ModelConfig::fromJson(smolLm135m())}) {
      const json j = c.toJson();
      const ModelConfig back = ModelConfig::fromJson(j);
      QCOMPARE(back.model_type, c.model_type);
      QCOMPARE(back.hidden_size, c.hidden_size);
      QCOMPARE(back.num_hidden_layers, c.num_hidden_layers);
      QCOMPARE(back.num_key_value_heads, c.num_key_value_heads);
      QCOMPARE(back.intermediate_size, c.intermediate_size);
      QCOMPARE(back.max_position_embeddings, c.max_position_embeddings);
      QCOMPARE(back.norm_eps, c.norm_eps);
      QCOMPARE(back.tie_word_embeddings, c.tie_word_embeddings);
      QCOMPARE(back.parameterCount(), c.parameterCount());
    }
    // A changed field is written back under its Hugging Face name.
    ModelConfig c = test::tinyGpt2Config();
    c.num_hidden_layers = 5;
    QCOMPARE(c.toJson()["n_layer"].get<int64_t>(), int64_t(5));
  }

  void tinyConfigsAreWhatTheyPromise() {
    const ModelConfig g = test::tinyGpt2Config();
    QCOMPARE(g.vocab_size, int64_t(61));
    QCOMPARE(g.hidden_size, int64_t(32));
    QCOMPARE(g.intermediate_size, int64_t(128));
    const ModelConfig l = test::tinyLlamaConfig();
    QCOMPARE(l.num_key_value_heads, int64_t(2));
    QCOMPARE(l.head_dim, int64_t(8));
  }
};

PLAB_TEST_APPLESS_MAIN(ModelConfigTest)
}  // namespace test_model_config
#include "test_model_config.moc"
