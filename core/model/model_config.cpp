#include "model/model_config.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/config_fields.h"
#include "util/errors.h"
#include "util/json_limits.h"
#include "util/json_file.h"

namespace plab {
namespace {

using nlohmann::json;

const char* const kSupportedTypes = "gpt2, llama, mistral, qwen2, qwen3";

bool isLlamaFamily(const std::string& type) {
  return type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3";
}

// Maps an `architectures` entry to a model_type for configs without one.
std::string modelTypeFromArchitectures(const json& j) {
  if (!j.contains("architectures") || !j["architectures"].is_array()) return "";
  for (const auto& a : j["architectures"]) {
    if (!a.is_string()) continue;
    const std::string arch = a.get<std::string>();
    if (arch.rfind("GPT2", 0) == 0) return "gpt2";
    if (arch.rfind("Llama", 0) == 0) return "llama";
    if (arch.rfind("Mistral", 0) == 0) return "mistral";
    if (arch.rfind("Qwen2", 0) == 0) return "qwen2";
    if (arch.rfind("Qwen3", 0) == 0) return "qwen3";
  }
  return "";
}

bool present(const json& j, const char* key) { return j.contains(key) && !j[key].is_null(); }

int64_t optionalInt(const json& j, const char* key, int64_t fallback, const std::string& type) {
  if (!present(j, key)) return fallback;
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    throw ConfigError("config.json (" + type + "): field '" + key + "' must be a positive integer, got " +
                      jsonExcerpt(v));
  return v.get<int64_t>();
}

// A value as an error message shows it; JSON would print infinity as null.
std::string valueText(const json& v) {
  if (v.is_number_float() && !std::isfinite(v.get<double>())) return std::to_string(v.get<double>());
  return jsonExcerpt(v);
}

// Non-finite numbers cannot come from a file (the parser refuses NaN and
// 1e999) but can from a JSON object built in code: refused like a string.
double optionalDouble(const json& j, const char* key, double fallback, const std::string& type) {
  if (!present(j, key)) return fallback;
  if (!j[key].is_number() || !std::isfinite(j[key].get<double>()))
    throw ConfigError("config.json (" + type + "): field '" + key + "' must be a finite number, got " +
                      valueText(j[key]));
  return j[key].get<double>();
}

// A number > 0 (positive) or >= 0.
double boundedDouble(const json& j, const char* key, double fallback, bool positive, const std::string& type) {
  const double v = optionalDouble(j, key, fallback, type);
  if (positive ? !(v > 0.0) : !(v >= 0.0))
    throw ConfigError("config.json (" + type + "): field '" + key + "' must be " + (positive ? "> 0" : ">= 0") +
                      ", got " + valueText(json(v)));
  return v;
}

bool optionalBool(const json& j, const char* key, bool fallback, const std::string& type) {
  if (!present(j, key)) return fallback;
  if (!j[key].is_boolean())
    throw ConfigError("config.json (" + type + "): field '" + key + "' must be true or false, got " + jsonExcerpt(j[key]));
  return j[key].get<bool>();
}

std::string optionalString(const json& j, const char* key, const std::string& fallback, const std::string& type) {
  if (!present(j, key)) return fallback;
  if (!j[key].is_string())
    throw ConfigError("config.json (" + type + "): field '" + key + "' must be a string, got " + jsonExcerpt(j[key]));
  return j[key].get<std::string>();
}

// transformers' ACT2FN entries without parameters (prelu and xielu carry
// weights of their own and are not implemented).
const char* const kActivations[] = {"gelu", "gelu_10", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh",
                                    "gelu_python_tanh", "gelu_accurate", "hardswish", "laplace", "leaky_relu",
                                    "linear", "mish", "quick_gelu", "relu", "relu2", "relu6", "sigmoid", "silu",
                                    "sqrtsoftplus", "swish", "tanh"};

void checkActivation(const std::string& act, const std::string& type) {
  std::string known;
  for (const char* k : kActivations) {
    if (act == k) return;
    known += (known.empty() ? "" : ", ") + std::string(k);
  }
  throw ConfigError("config.json (" + type + "): unsupported activation '" + act + "' (supported: " + known + ")");
}

void parseGpt2(const json& j, ModelConfig& c) {
  const std::string t = c.model_type;
  c.family = ArchitectureFamily::Gpt2;
  // Absent fields take GPT2Config's defaults, as in transformers.
  c.vocab_size = optionalInt(j, "vocab_size", 50257, t);
  c.hidden_size = optionalInt(j, "n_embd", 768, t);
  c.num_hidden_layers = optionalInt(j, "n_layer", 12, t);
  c.num_attention_heads = optionalInt(j, "n_head", 12, t);
  c.num_key_value_heads = c.num_attention_heads;
  c.max_position_embeddings = optionalInt(j, "n_positions", 1024, t);
  c.intermediate_size = optionalInt(j, "n_inner", 4 * c.hidden_size, t);
  c.norm_eps = boundedDouble(j, "layer_norm_epsilon", 1e-5, false, t);
  c.hidden_act = optionalString(j, "activation_function", "gelu_new", t);
  c.tie_word_embeddings = optionalBool(j, "tie_word_embeddings", true, t);
  c.attention_bias = true;
  c.attention_output_bias = true;
  c.mlp_bias = true;
  c.scale_attn_weights = optionalBool(j, "scale_attn_weights", true, t);
  c.scale_attn_by_inverse_layer_idx = optionalBool(j, "scale_attn_by_inverse_layer_idx", false, t);
  // reorder_and_upcast_attn only moves the fp16/bf16 upcast of q.k; scores and
  // softmax are always fp32 here, so the flag changes nothing.
  optionalBool(j, "reorder_and_upcast_attn", false, t);
  if (optionalBool(j, "add_cross_attention", false, t))
    throw ConfigError("config.json (gpt2): add_cross_attention: true is not supported (an encoder-decoder "
                      "model's cross-attention layers; only the decoder-only GPT-2 is)");
  if (c.hidden_size % c.num_attention_heads != 0)
    throw ConfigError("config.json (gpt2): n_embd " + std::to_string(c.hidden_size) +
                      " is not divisible by n_head " + std::to_string(c.num_attention_heads));
  c.head_dim = c.hidden_size / c.num_attention_heads;
}

void warn(ModelConfig& c, const std::string& what) { c.warnings.push_back("config.json (" + c.model_type + "): " + what); }

bool isNumber(const json& v) { return v.is_number() && std::isfinite(v.get<double>()); }

// The keys transformers' validator of each rope type knows (required first);
// others are warned about as transformers warns.
struct RopeKeys {
  std::vector<std::string> required, optional;
};
RopeKeys ropeKeys(const std::string& type) {
  if (type == "linear" || type == "dynamic") return {{"rope_type", "factor"}, {"rope_theta"}};
  if (type == "yarn")
    return {{"rope_type", "factor", "original_max_position_embeddings"},
            {"rope_theta", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"}};
  if (type == "llama3")
    return {{"rope_type", "factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor",
             "rope_theta"},
            {}};
  return {{"rope_type"}, {"rope_theta"}};  // default
}

// A number of the rope dict that transformers computes with: a number, or
// refused (transformers warns, then fails computing with it).
double ropeNumber(const json& r, const char* key, const std::string& where) {
  if (!isNumber(r[key])) throw ConfigError(where + "'" + key + "' must be a number, got " + valueText(r[key]));
  return r[key].get<double>();
}

// transformers 5 reads the rope settings as one dict: the legacy
// rope_scaling when it is a non-empty object, else rope_parameters; the
// theta from that dict, else the top-level rope_theta (standardize_rope_params,
// with the same defaults). Then it validates the dict (modeling_rope_utils):
// missing keys are an error, odd values mostly only a warning.
void parseRope(const json& j, ModelConfig& c) {
  const std::string t = c.model_type;
  const bool legacy = present(j, "rope_scaling") && !(j["rope_scaling"].is_object() && j["rope_scaling"].empty());
  const char* field = legacy ? "rope_scaling" : "rope_parameters";
  json r = json::object();
  if (present(j, field)) {
    if (!j[field].is_object())
      throw ConfigError("config.json (" + t + "): " + field + " must be an object, got " + jsonExcerpt(j[field]));
    r = j[field];
  }
  const std::string where = "config.json (" + t + "): " + field + " ";
  RopeScaling& s = c.rope_scaling;
  s = RopeScaling();
  // transformers does not check rope_theta (0 gives it infinite frequencies, a negative one NaN): refused here.
  c.rope_theta = boundedDouble(present(r, "rope_theta") ? r : j, "rope_theta", 10000.0, true, t);
  s.type = optionalString(r, "rope_type", optionalString(r, "type", "default", t), t);
  if (s.type != "default" && s.type != "linear" && s.type != "llama3" && s.type != "yarn" && s.type != "dynamic")
    throw ConfigError(where + "type '" + s.type +
                      "' is not supported (supported: default, linear, dynamic, llama3, yarn)");
  // What standardize_rope_params fills in before validating.
  r["rope_type"] = s.type;
  r.erase("type");
  if (!present(r, "rope_theta")) r["rope_theta"] = c.rope_theta;
  if ((s.type == "llama3" || s.type == "yarn") && !present(r, "original_max_position_embeddings"))
    r["original_max_position_embeddings"] = c.max_position_embeddings;

  const RopeKeys keys = ropeKeys(s.type);
  for (const std::string& key : keys.required)
    if (!r.contains(key)) throw ConfigError(where + jsonExcerpt(r) + " has no '" + key + "' (rope type " + s.type + ")");
  std::string unknown;
  for (const auto& [key, value] : r.items())
    if (std::find(keys.required.begin(), keys.required.end(), key) == keys.required.end() &&
        std::find(keys.optional.begin(), keys.optional.end(), key) == keys.optional.end() &&
        key != "partial_rotary_factor")
      unknown += (unknown.empty() ? "'" : ", '") + textExcerpt(key) + "'";
  if (!unknown.empty()) warn(c, std::string(field) + " has keys rope type " + s.type + " does not use: " + unknown);

  for (const json* at : {&j, static_cast<const json*>(&r)})
    if (present(*at, "partial_rotary_factor") && optionalDouble(*at, "partial_rotary_factor", 1.0, t) != 1.0)
      throw ConfigError("config.json (" + t + "): partial_rotary_factor " +
                        jsonExcerpt((*at)["partial_rotary_factor"]) + " is not supported (only 1.0)");
  if (s.type == "default") return;

  if (s.type == "yarn" && r["factor"].is_null()) {
    s.original_max_position_embeddings = optionalInt(r, "original_max_position_embeddings", 0, t);
    s.factor = double(c.max_position_embeddings) / double(s.original_max_position_embeddings);  // as transformers
    warn(c, std::string(field) + " factor is null: " + std::to_string(s.factor) +
                " = max_position_embeddings / original_max_position_embeddings is used");
  } else {
    s.factor = ropeNumber(r, "factor", where);
    if (s.factor < 1.0)
      warn(c, std::string(field) + " factor " + valueText(r["factor"]) + " is below 1 (transformers warns; used as given)");
  }
  if (s.type == "llama3") {
    s.low_freq_factor = ropeNumber(r, "low_freq_factor", where);
    s.high_freq_factor = ropeNumber(r, "high_freq_factor", where);
    if (s.low_freq_factor == 0.0 || s.high_freq_factor == 0.0)
      throw ConfigError(where + "low_freq_factor and high_freq_factor must not be 0 (transformers divides by them)");
    if (s.high_freq_factor <= s.low_freq_factor)
      warn(c, std::string(field) + " high_freq_factor " + valueText(r["high_freq_factor"]) +
                  " is not above low_freq_factor " + valueText(r["low_freq_factor"]));
    s.original_max_position_embeddings = optionalInt(r, "original_max_position_embeddings", 0, t);
    if (s.original_max_position_embeddings >= c.max_position_embeddings)
      warn(c, std::string(field) + " original_max_position_embeddings " +
                  std::to_string(s.original_max_position_embeddings) + " is not below max_position_embeddings " +
                  std::to_string(c.max_position_embeddings));
  } else if (s.type == "yarn") {
    s.original_max_position_embeddings = optionalInt(r, "original_max_position_embeddings", 0, t);
    // transformers: `get("beta_fast") or 32`, so 0 and null mean the default.
    const auto orDefault = [&](const char* key, double fallback) {
      if (!present(r, key)) return fallback;
      const double v = ropeNumber(r, key, where);
      return v == 0.0 ? fallback : v;
    };
    s.beta_fast = orDefault("beta_fast", 32.0);
    s.beta_slow = orDefault("beta_slow", 1.0);
    if (s.beta_fast < s.beta_slow)
      warn(c, std::string(field) + " beta_fast " + std::to_string(s.beta_fast) + " is below beta_slow " +
                  std::to_string(s.beta_slow));
    if (present(r, "attention_factor")) {
      s.attention_factor = ropeNumber(r, "attention_factor", where);
      if (!r["attention_factor"].is_number_float() || *s.attention_factor < 0)
        warn(c, std::string(field) + " attention_factor " + valueText(r["attention_factor"]) +
                    " should be a float > 0 (transformers warns; used as given)");
    }
    s.mscale = present(r, "mscale") ? ropeNumber(r, "mscale", where) : 0.0;
    s.mscale_all_dim = present(r, "mscale_all_dim") ? ropeNumber(r, "mscale_all_dim", where) : 0.0;
    s.truncate = optionalBool(r, "truncate", true, t);
    const double implicit = double(c.max_position_embeddings) / double(s.original_max_position_embeddings);
    if (implicit != s.factor && implicit != 1.0)
      warn(c, std::string(field) + " factor " + std::to_string(s.factor) +
                  " differs from max_position_embeddings / original_max_position_embeddings = " +
                  std::to_string(implicit) + " (the factor is used)");
  }
}

// Sliding-window attention: Mistral's sliding_window applies to every layer
// and is implemented. Qwen2/Qwen3 use theirs only with use_sliding_window, on
// the layers layer_types marks "sliding_attention" (by default those from
// max_window_layers on): with no such layer the config is plain attention
// and accepted; per-layer windows are not implemented.
void parseSlidingWindow(const json& j, ModelConfig& c) {
  const std::string t = c.model_type;
  if (t == "mistral") {  // MistralConfig's default window is 4096; null means none
    c.sliding_window = j.contains("sliding_window") ? optionalInt(j, "sliding_window", 0, t) : 4096;
    return;
  }
  // Without use_sliding_window, or with sliding_window null, no layer
  // slides; an absent sliding_window is the classes' default 4096.
  const bool use = optionalBool(j, "use_sliding_window", false, t);
  if (!use || (j.contains("sliding_window") && j["sliding_window"].is_null())) return;
  int64_t slidingLayers = 0;
  if (present(j, "layer_types")) {
    if (!j["layer_types"].is_array())
      throw ConfigError("config.json (" + t + "): layer_types must be a list, got " + jsonExcerpt(j["layer_types"]));
    for (const json& type : j["layer_types"]) slidingLayers += type == "sliding_attention";
  } else {
    // Any integer (its type is checked above): layers from it on slide.
    const int64_t from = present(j, "max_window_layers") ? j["max_window_layers"].get<int64_t>() : 28;
    slidingLayers = from <= 0 ? c.num_hidden_layers : std::max<int64_t>(0, c.num_hidden_layers - from);
  }
  if (slidingLayers > 0)
    throw ConfigError("config.json (" + t + "): use_sliding_window: true with " + std::to_string(slidingLayers) +
                      " sliding-window layers is not supported (per-layer sliding-window attention of Qwen2/Qwen3)");
}

// transformers' class defaults for the fields a config.json may leave out.
struct LlamaFamilyDefaults {
  int64_t vocab, hidden, intermediate, layers, heads;
  int64_t kvHeads;   // 0: num_attention_heads
  int64_t headDim;   // 0: hidden_size / num_attention_heads
  int64_t maxPositions;
};
LlamaFamilyDefaults llamaFamilyDefaults(const std::string& type) {
  if (type == "mistral") return {32000, 4096, 14336, 32, 32, 8, 0, 131072};
  if (type == "qwen2") return {151936, 4096, 22016, 32, 32, 32, 0, 32768};
  if (type == "qwen3") return {151936, 4096, 22016, 32, 32, 32, 128, 32768};
  return {32000, 4096, 11008, 32, 32, 0, 0, 2048};  // llama
}

void parseLlama(const json& j, ModelConfig& c) {
  const std::string t = c.model_type;
  const LlamaFamilyDefaults d = llamaFamilyDefaults(t);
  c.family = ArchitectureFamily::Llama;
  c.vocab_size = optionalInt(j, "vocab_size", d.vocab, t);
  c.hidden_size = optionalInt(j, "hidden_size", d.hidden, t);
  c.num_hidden_layers = optionalInt(j, "num_hidden_layers", d.layers, t);
  c.num_attention_heads = optionalInt(j, "num_attention_heads", d.heads, t);
  // null: as many as the attention heads (the classes' __post_init__).
  c.num_key_value_heads = optionalInt(j, "num_key_value_heads", d.kvHeads ? d.kvHeads : c.num_attention_heads, t);
  if (j.contains("num_key_value_heads") && j["num_key_value_heads"].is_null())
    c.num_key_value_heads = c.num_attention_heads;
  c.intermediate_size = optionalInt(j, "intermediate_size", d.intermediate, t);
  c.max_position_embeddings = optionalInt(j, "max_position_embeddings", d.maxPositions, t);
  c.norm_eps = boundedDouble(j, "rms_norm_eps", 1e-6, false, t);
  c.hidden_act = optionalString(j, "hidden_act", "silu", t);
  c.tie_word_embeddings = optionalBool(j, "tie_word_embeddings", false, t);
  // Which projections have biases, as transformers' modules build them
  // (their config fields are read only where the module reads them): Qwen2
  // always has q/k/v biases and never an o_proj or MLP bias, whatever
  // attention_bias says; Qwen3 q/k/v/o biases with attention_bias; Mistral
  // none; Llama's attention_bias applies to all four projections and
  // mlp_bias to the MLP.
  if (t == "qwen2") {
    c.attention_bias = true;
    c.attention_output_bias = false;
  } else if (t == "qwen3") {
    c.attention_bias = optionalBool(j, "attention_bias", false, t);
    c.attention_output_bias = c.attention_bias;
    c.qk_norm = true;  // per-head q/k RMSNorm
  } else if (t == "llama") {
    c.attention_bias = optionalBool(j, "attention_bias", false, t);
    c.attention_output_bias = c.attention_bias;
    c.mlp_bias = optionalBool(j, "mlp_bias", false, t);
  }
  parseRope(j, c);
  parseSlidingWindow(j, c);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw ConfigError("config.json (" + t + "): num_attention_heads " + std::to_string(c.num_attention_heads) +
                      " is not a multiple of num_key_value_heads " + std::to_string(c.num_key_value_heads));
  // LlamaConfig checks this even when head_dim is given; the others do not.
  if (t == "llama" && c.hidden_size % c.num_attention_heads != 0)
    throw ConfigError("config.json (llama): hidden_size " + std::to_string(c.hidden_size) +
                      " is not divisible by num_attention_heads " + std::to_string(c.num_attention_heads));
  if (present(j, "head_dim") || d.headDim) {
    c.head_dim = optionalInt(j, "head_dim", d.headDim, t);
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      throw ConfigError("config.json (" + t + "): hidden_size " + std::to_string(c.hidden_size) +
                        " is not divisible by num_attention_heads " + std::to_string(c.num_attention_heads));
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0)
    throw ConfigError("config.json (" + t + "): head_dim " + std::to_string(c.head_dim) + " must be even for RoPE");
}

// Special token ids, as transformers' typed fields and validate_token_ids
// take them: pad/bos an integer or null, eos also a list of integers (the
// first is the one used); anything else is refused. An integer outside
// [0, vocab_size) in any "*_token_id" field is kept as unknown (-1 here)
// with a warning, as transformers warns (Hub configs carry pad_token_id -1,
// GPT2Config's 50256 under a small vocab_size, ...). The model never uses
// these ids; the tokenizer checks the EOS it takes from them.
void parseTokenIds(const json& j, ModelConfig& c) {
  const std::string where = "config.json (" + c.model_type + ")";
  for (const char* field : {"pad_token_id", "bos_token_id", "eos_token_id"}) {
    if (!present(j, field)) continue;
    const json& v = j[field];
    bool ok = v.is_number_integer();
    if (v.is_array() && std::string(field) == "eos_token_id")
      ok = std::all_of(v.begin(), v.end(), [](const json& id) { return id.is_number_integer(); });
    if (!ok)
      throw ConfigError(where + ": field '" + field + "' must be an integer token id" +
                        (std::string(field) == "eos_token_id" ? " (or a list of them)" : "") + ", got " +
                        jsonExcerpt(v));
  }
  const auto inVocab = [&](const json& v) {
    if (v.is_number_unsigned()) return v.get<uint64_t>() < uint64_t(c.vocab_size);
    return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < c.vocab_size;
  };
  for (const auto& [key, v] : j.items()) {
    const std::string suffix = "_token_id";
    if (key.size() < suffix.size() || key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (v.is_number_integer() && !inVocab(v))
      warn(c, "field '" + textExcerpt(key) + "' is " + jsonExcerpt(v) + ", not a token id of the vocabulary [0, " +
                  std::to_string(c.vocab_size) + ")");
  }
  const auto id = [&](const char* field) -> int64_t {
    if (!present(j, field)) return -1;
    const json& v = j[field].is_array() ? (j[field].empty() ? j[field] : j[field][0]) : j[field];
    return inVocab(v) ? v.get<int64_t>() : -1;
  };
  c.bos_token_id = id("bos_token_id");
  c.eos_token_id = id("eos_token_id");
}

}  // namespace

std::optional<int64_t> tokenIdField(const json& config, const char* field, int64_t vocabSize,
                                    const std::string& where) {
  if (!config.is_object() || !present(config, field)) return std::nullopt;
  const json& v = config[field];
  const auto fail = [&](const std::string& why) -> ConfigError {
    return ConfigError(where + ": field '" + field + "' " + why + ", got " + jsonExcerpt(v));
  };
  const json ids = v.is_array() ? v : json::array({v});
  if (ids.empty()) throw fail("is an empty list");
  for (const json& id : ids) {
    if (!id.is_number_integer())
      throw fail(v.is_array() ? "must list integer token ids" : "must be an integer token id (or a list of them)");
    if (id.get<int64_t>() < 0 || id.get<int64_t>() >= vocabSize)
      throw fail("must be a token id in [0, " + std::to_string(vocabSize) + ")");
  }
  return ids[0].get<int64_t>();
}

std::string ModelConfig::supportedModelTypes() { return kSupportedTypes; }

ModelConfig ModelConfig::fromJson(const json& j) {
  if (!j.is_object()) throw ConfigError("config.json: expected a JSON object, got " + std::string(j.type_name()));
  ModelConfig c;
  c.raw = j;
  if (present(j, "model_type")) {
    if (!j["model_type"].is_string())
      throw ConfigError("config.json: field 'model_type' must be a string, got " + jsonExcerpt(j["model_type"]));
    c.model_type = j["model_type"].get<std::string>();
  } else {
    c.model_type = modelTypeFromArchitectures(j);
    if (c.model_type.empty())
      throw ConfigError(std::string("config.json: missing field 'model_type' and no known 'architectures' entry "
                                    "(supported: ") + kSupportedTypes + ")");
  }
  checkConfigFieldTypes(j, c.model_type);
  if (c.model_type == "gpt2") {
    parseGpt2(j, c);
  } else if (isLlamaFamily(c.model_type)) {
    parseLlama(j, c);
  } else {
    throw ConfigError("config.json: unknown model_type '" + c.model_type + "' (supported: " + kSupportedTypes + ")");
  }
  checkActivation(c.hidden_act, c.model_type);
  c.initializer_range = boundedDouble(j, "initializer_range", 0.02, false, c.model_type);
  if (isLlamaFamily(c.model_type) && c.initializer_range > 1.0)
    throw ConfigError("config.json (" + c.model_type + "): field 'initializer_range' must be in [0, 1], got " +
                      valueText(j["initializer_range"]));
  parseTokenIds(j, c);
  return c;
}

json readConfigJsonFile(const std::filesystem::path& file) {
  // The reader of every file the tool reads back (util/json_file.h): regular
  // files only, size-capped, UTF-8, nesting-capped; a number past a double's
  // range names its field.
  JsonFile read = readJsonFile(file);
  if (!read.ok()) throw ConfigError(file.string() + ": " + read.problem);
  return std::move(read.value);
}

ModelConfig ModelConfig::fromFile(const std::filesystem::path& configJson) {
  const json j = readConfigJsonFile(configJson);
  try {
    return fromJson(j);
  } catch (const ConfigError& e) {
    throw ConfigError(configJson.string() + ": " + e.what());
  }
}

json ModelConfig::toJson() const {
  json j = raw.is_object() ? raw : json::object();
  j.erase("dtype");
  j.erase("torch_dtype");
  j["model_type"] = model_type;
  j["vocab_size"] = vocab_size;
  j["initializer_range"] = initializer_range;
  j["tie_word_embeddings"] = tie_word_embeddings;
  if (bos_token_id >= 0 && !j.contains("bos_token_id")) j["bos_token_id"] = bos_token_id;
  if (eos_token_id >= 0 && !j.contains("eos_token_id")) j["eos_token_id"] = eos_token_id;
  if (family == ArchitectureFamily::Gpt2) {
    if (!j.contains("architectures")) j["architectures"] = {"GPT2LMHeadModel"};
    j["n_embd"] = hidden_size;
    j["n_layer"] = num_hidden_layers;
    j["n_head"] = num_attention_heads;
    j["n_positions"] = max_position_embeddings;
    j["n_inner"] = intermediate_size == 4 * hidden_size ? json(nullptr) : json(intermediate_size);
    j["layer_norm_epsilon"] = norm_eps;
    j["activation_function"] = hidden_act;
  } else {
    if (!j.contains("architectures")) {
      const char* arch = model_type == "qwen2"     ? "Qwen2ForCausalLM"
                         : model_type == "qwen3"   ? "Qwen3ForCausalLM"
                         : model_type == "mistral" ? "MistralForCausalLM"
                                                   : "LlamaForCausalLM";
      j["architectures"] = {arch};
    }
    j["hidden_size"] = hidden_size;
    j["num_hidden_layers"] = num_hidden_layers;
    j["num_attention_heads"] = num_attention_heads;
    j["num_key_value_heads"] = num_key_value_heads;
    j["intermediate_size"] = intermediate_size;
    j["max_position_embeddings"] = max_position_embeddings;
    j["rms_norm_eps"] = norm_eps;
    if (j.contains("rope_parameters") && j["rope_parameters"].is_object())
      j["rope_parameters"]["rope_theta"] = rope_theta;  // transformers 5 reads it there first
    else
      j["rope_theta"] = rope_theta;
    j["hidden_act"] = hidden_act;
    if (head_dim != hidden_size / num_attention_heads) j["head_dim"] = head_dim;
    if (model_type != "qwen2" || !attention_bias) j["attention_bias"] = attention_bias;
    if (mlp_bias) j["mlp_bias"] = mlp_bias;
  }
  return j;
}

int64_t ModelConfig::parameterCount() const {
  const int64_t H = hidden_size, V = vocab_size, I = intermediate_size;
  int64_t perLayer = 0, total = 0;
  if (family == ArchitectureFamily::Gpt2) {
    perLayer = 2 * H                  // ln_1
               + H * 3 * H + 3 * H    // c_attn
               + H * H + H            // attn.c_proj
               + 2 * H                // ln_2
               + H * I + I            // c_fc
               + I * H + H;           // mlp.c_proj
    total = V * H + max_position_embeddings * H + num_hidden_layers * perLayer + 2 * H;
  } else {
    const int64_t q = num_attention_heads * head_dim, kv = num_key_value_heads * head_dim;
    perLayer = H * q + H * kv * 2 + q * H           // q, k, v, o
               + (attention_bias ? q + 2 * kv : 0)  // q/k/v biases
               + (attention_output_bias ? H : 0)    // o bias
               + 3 * H * I + (mlp_bias ? 2 * I + H : 0)
               + 2 * H                              // two RMSNorms
               + (qk_norm ? 2 * head_dim : 0);      // qwen3 q_norm, k_norm
    total = V * H + num_hidden_layers * perLayer + H;
  }
  if (!tie_word_embeddings) total += V * H;
  return total;
}

}  // namespace plab
