#include "model/model_config.h"

#include <cmath>
#include <limits>

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

int64_t requiredInt(const json& j, const char* key, const std::string& type) {
  if (!present(j, key))
    throw ConfigError("config.json (" + type + "): missing required field '" + key + "'");
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() <= 0)
    throw ConfigError("config.json (" + type + "): field '" + key + "' must be a positive integer, got " +
                      jsonExcerpt(v));
  return v.get<int64_t>();
}

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

void checkActivation(const std::string& act, const std::string& type) {
  static const char* const known[] = {"gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu", "relu", "silu", "swish"};
  for (const char* k : known)
    if (act == k) return;
  throw ConfigError("config.json (" + type + "): unsupported activation '" + act +
                    "' (supported: gelu_new, gelu_pytorch_tanh, gelu_fast, gelu, relu, silu)");
}

void parseGpt2(const json& j, ModelConfig& c) {
  const std::string t = c.model_type;
  c.family = ArchitectureFamily::Gpt2;
  c.vocab_size = requiredInt(j, "vocab_size", t);
  c.hidden_size = requiredInt(j, "n_embd", t);
  c.num_hidden_layers = requiredInt(j, "n_layer", t);
  c.num_attention_heads = requiredInt(j, "n_head", t);
  c.num_key_value_heads = c.num_attention_heads;
  c.max_position_embeddings = requiredInt(j, "n_positions", t);
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

// rope_scaling (or transformers 5's rope_parameters, `field`):
// {"rope_type" (or "type"): "linear" | "llama3" | "yarn", "factor": ...}.
RopeScaling parseRopeScaling(const json& j, const char* field, const ModelConfig& c) {
  const std::string t = c.model_type;
  const json& r = j[field];
  const std::string where = "config.json (" + t + "): " + field + " ";
  if (!r.is_object()) throw ConfigError(where + "must be an object, got " + jsonExcerpt(r));
  RopeScaling s;
  s.type = optionalString(r, "rope_type", optionalString(r, "type", "", t), t);
  if (s.type.empty()) throw ConfigError(where + jsonExcerpt(r) + " has no 'rope_type'");
  if (s.type == "default") return s;
  if (s.type != "linear" && s.type != "llama3" && s.type != "yarn")
    throw ConfigError(where + "type '" + s.type + "' is not supported (supported: default, linear, llama3, yarn)");
  if (!present(r, "factor") || !r["factor"].is_number() || !(r["factor"].get<double>() >= 1.0) ||
      !std::isfinite(r["factor"].get<double>()))
    throw ConfigError(where + jsonExcerpt(r) + " needs a number 'factor' >= 1");
  s.factor = r["factor"].get<double>();
  if (s.type == "llama3") {
    s.low_freq_factor = optionalDouble(r, "low_freq_factor", 0.0, t);
    s.high_freq_factor = optionalDouble(r, "high_freq_factor", 0.0, t);
    s.original_max_position_embeddings = optionalInt(r, "original_max_position_embeddings", 0, t);
    if (s.low_freq_factor <= 0 || s.high_freq_factor <= s.low_freq_factor || s.original_max_position_embeddings <= 0)
      throw ConfigError(where + jsonExcerpt(r) + " needs low_freq_factor > 0, high_freq_factor > low_freq_factor and "
                        "original_max_position_embeddings");
  } else if (s.type == "yarn") {
    s.original_max_position_embeddings =
        optionalInt(r, "original_max_position_embeddings", c.max_position_embeddings, t);
    s.beta_fast = optionalDouble(r, "beta_fast", 32.0, t);
    s.beta_slow = optionalDouble(r, "beta_slow", 1.0, t);
    s.attention_factor = optionalDouble(r, "attention_factor", 0.0, t);
    s.mscale = optionalDouble(r, "mscale", 0.0, t);
    s.mscale_all_dim = optionalDouble(r, "mscale_all_dim", 0.0, t);
    s.truncate = optionalBool(r, "truncate", true, t);
  }
  return s;
}

// transformers 5 writes rope_theta and the scaling as one object,
// rope_parameters ({"rope_type": "default", "rope_theta": 500000.0, ...}),
// and reads it before the older top-level rope_theta / rope_scaling: so do
// we (a config it saved has no top-level rope_theta; the default 10000 would
// silently replace Llama-3's 500000).
void parseRope(const json& j, ModelConfig& c) {
  const std::string t = c.model_type;
  const bool v5 = present(j, "rope_parameters");
  if (v5 && !j["rope_parameters"].is_object())
    throw ConfigError("config.json (" + t + "): rope_parameters must be an object, got " +
                      jsonExcerpt(j["rope_parameters"]));
  const json& rope = v5 ? j["rope_parameters"] : j;
  c.rope_theta = boundedDouble(rope, "rope_theta", 10000.0, true, t);
  if (v5)
    c.rope_scaling = parseRopeScaling(j, "rope_parameters", c);
  else if (present(j, "rope_scaling"))
    c.rope_scaling = parseRopeScaling(j, "rope_scaling", c);
  for (const json* where : {&j, &rope})
    if (present(*where, "partial_rotary_factor") && optionalDouble(*where, "partial_rotary_factor", 1.0, t) != 1.0)
      throw ConfigError("config.json (" + t + "): partial_rotary_factor " +
                        jsonExcerpt((*where)["partial_rotary_factor"]) + " is not supported (only 1.0)");
}

// Sliding-window attention: Mistral's sliding_window applies to every layer
// and is implemented; Qwen2/Qwen3 only use theirs with use_sliding_window,
// per layer (max_window_layers), which is not implemented.
void parseSlidingWindow(const json& j, ModelConfig& c) {
  const std::string t = c.model_type;
  if (t == "mistral") {
    c.sliding_window = optionalInt(j, "sliding_window", 0, t);
  } else if (optionalBool(j, "use_sliding_window", false, t)) {
    throw ConfigError("config.json (" + t + "): use_sliding_window: true is not supported "
                      "(per-layer sliding-window attention of Qwen2/Qwen3)");
  }
}

void parseLlama(const json& j, ModelConfig& c) {
  const std::string t = c.model_type;
  c.family = ArchitectureFamily::Llama;
  c.vocab_size = requiredInt(j, "vocab_size", t);
  c.hidden_size = requiredInt(j, "hidden_size", t);
  c.num_hidden_layers = requiredInt(j, "num_hidden_layers", t);
  c.num_attention_heads = requiredInt(j, "num_attention_heads", t);
  c.num_key_value_heads = optionalInt(j, "num_key_value_heads", c.num_attention_heads, t);
  c.intermediate_size = requiredInt(j, "intermediate_size", t);
  c.max_position_embeddings = optionalInt(j, "max_position_embeddings", 2048, t);
  c.norm_eps = boundedDouble(j, "rms_norm_eps", 1e-6, false, t);
  c.hidden_act = optionalString(j, "hidden_act", "silu", t);
  c.tie_word_embeddings = optionalBool(j, "tie_word_embeddings", false, t);
  // Qwen2 always has q/k/v biases and never an o_proj bias; Llama's
  // attention_bias applies to all four projections.
  if (t == "qwen2") {
    c.attention_bias = optionalBool(j, "attention_bias", true, t);
    c.attention_output_bias = false;
  } else if (t == "qwen3") {
    // Qwen3: q/k/v/o biases only with attention_bias, per-head q/k RMSNorm.
    c.attention_bias = optionalBool(j, "attention_bias", false, t);
    c.attention_output_bias = c.attention_bias;
    c.qk_norm = true;
  } else {
    c.attention_bias = optionalBool(j, "attention_bias", false, t);
    c.attention_output_bias = c.attention_bias;
  }
  c.mlp_bias = optionalBool(j, "mlp_bias", false, t);
  parseRope(j, c);
  parseSlidingWindow(j, c);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw ConfigError("config.json (" + t + "): num_attention_heads " + std::to_string(c.num_attention_heads) +
                      " is not a multiple of num_key_value_heads " + std::to_string(c.num_key_value_heads));
  if (present(j, "head_dim")) {
    c.head_dim = requiredInt(j, "head_dim", t);
  } else {
    if (c.hidden_size % c.num_attention_heads != 0)
      throw ConfigError("config.json (" + t + "): hidden_size " + std::to_string(c.hidden_size) +
                        " is not divisible by num_attention_heads " + std::to_string(c.num_attention_heads));
    c.head_dim = c.hidden_size / c.num_attention_heads;
  }
  if (c.head_dim % 2 != 0)
    throw ConfigError("config.json (" + t + "): head_dim " + std::to_string(c.head_dim) + " must be even for RoPE");
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
  if (c.model_type == "gpt2") {
    parseGpt2(j, c);
  } else if (isLlamaFamily(c.model_type)) {
    parseLlama(j, c);
  } else {
    throw ConfigError("config.json: unknown model_type '" + c.model_type + "' (supported: " + kSupportedTypes + ")");
  }
  checkActivation(c.hidden_act, c.model_type);
  c.initializer_range = boundedDouble(j, "initializer_range", 0.02, false, c.model_type);
  const std::string where = "config.json (" + c.model_type + ")";
  // The model never uses these ids: one past the vocabulary (GPT2Config's
  // default 50256 under a small vocab_size, which transformers accepts) is
  // kept as unknown; the tokenizer refuses such an id where it would be the
  // EOS (tokenizer_for_model.cpp). Wrong types and negative ids are refused.
  const auto modelTokenId = [&](const char* field) -> int64_t {
    const auto id = tokenIdField(j, field, std::numeric_limits<int64_t>::max(), where);
    return id && *id < c.vocab_size ? *id : -1;
  };
  c.bos_token_id = modelTokenId("bos_token_id");
  c.eos_token_id = modelTokenId("eos_token_id");
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
