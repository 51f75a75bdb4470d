#include "model/config_fields.h"

#include <algorithm>

#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {
namespace {

using nlohmann::json;

// The JSON values a Python annotation admits once json.load has read them:
// `float` admits only floats (1e-06, not 0), `int` only integers (not 64.0,
// not true), `bool` only true/false.
enum Kind : unsigned {
  kNull = 1u << 0,
  kInt = 1u << 1,
  kFloat = 1u << 2,
  kBool = 1u << 3,
  kString = 1u << 4,
  kObject = 1u << 5,
  kIntList = 1u << 6,
  kStringList = 1u << 7,
};

struct Field {
  const char* name;
  unsigned kinds;
};

// Generated from dataclasses.fields() of the classes in transformers 5.24.
const Field kBase[] = {
    {"transformers_version", kString | kNull}, {"architectures", kStringList | kNull},
    {"output_hidden_states", kBool | kNull},   {"return_dict", kBool | kNull},
    {"dtype", kString | kNull},                {"chunk_size_feed_forward", kInt},
    {"is_encoder_decoder", kBool},             {"id2label", kObject | kNull},
    {"label2id", kObject | kNull},             {"problem_type", kString | kNull},
};
const Field kGpt2[] = {
    {"vocab_size", kInt},          {"n_positions", kInt},
    {"n_embd", kInt},              {"n_layer", kInt},
    {"n_head", kInt},              {"n_inner", kInt | kNull},
    {"activation_function", kString}, {"resid_pdrop", kFloat | kInt},
    {"embd_pdrop", kFloat | kInt}, {"attn_pdrop", kFloat | kInt},
    {"layer_norm_epsilon", kFloat}, {"initializer_range", kFloat},
    {"summary_type", kString},     {"summary_use_proj", kBool},
    {"summary_activation", kString | kNull}, {"summary_proj_to_labels", kBool},
    {"summary_first_dropout", kFloat | kInt}, {"scale_attn_weights", kBool},
    {"use_cache", kBool},          {"bos_token_id", kInt | kNull},
    {"eos_token_id", kInt | kIntList | kNull}, {"pad_token_id", kInt | kNull},
    {"scale_attn_by_inverse_layer_idx", kBool}, {"reorder_and_upcast_attn", kBool},
    {"add_cross_attention", kBool}, {"tie_word_embeddings", kBool},
};
const Field kLlama[] = {
    {"vocab_size", kInt},          {"hidden_size", kInt},
    {"intermediate_size", kInt},   {"num_hidden_layers", kInt},
    {"num_attention_heads", kInt}, {"num_key_value_heads", kInt | kNull},
    {"hidden_act", kString},       {"max_position_embeddings", kInt},
    {"initializer_range", kFloat}, {"rms_norm_eps", kFloat},
    {"use_cache", kBool},          {"pad_token_id", kInt | kNull},
    {"bos_token_id", kInt | kNull}, {"eos_token_id", kInt | kIntList | kNull},
    {"pretraining_tp", kInt | kNull}, {"tie_word_embeddings", kBool},
    {"rope_parameters", kObject | kNull}, {"attention_bias", kBool},
    {"attention_dropout", kInt | kFloat | kNull}, {"mlp_bias", kBool},
    {"head_dim", kInt | kNull},
};
const Field kMistral[] = {
    {"vocab_size", kInt},          {"hidden_size", kInt},
    {"intermediate_size", kInt},   {"num_hidden_layers", kInt},
    {"num_attention_heads", kInt}, {"num_key_value_heads", kInt},
    {"head_dim", kInt | kNull},    {"hidden_act", kString},
    {"max_position_embeddings", kInt}, {"initializer_range", kFloat},
    {"rms_norm_eps", kFloat},      {"use_cache", kBool},
    {"pad_token_id", kInt | kNull}, {"bos_token_id", kInt | kNull},
    {"eos_token_id", kInt | kIntList | kNull}, {"tie_word_embeddings", kBool},
    {"rope_parameters", kObject | kNull}, {"sliding_window", kInt | kNull},
    {"attention_dropout", kFloat | kInt},
};
const Field kQwen2[] = {
    {"vocab_size", kInt},          {"hidden_size", kInt},
    {"intermediate_size", kInt},   {"num_hidden_layers", kInt},
    {"num_attention_heads", kInt}, {"num_key_value_heads", kInt | kNull},
    {"hidden_act", kString},       {"max_position_embeddings", kInt},
    {"initializer_range", kFloat}, {"rms_norm_eps", kFloat},
    {"use_cache", kBool},          {"tie_word_embeddings", kBool},
    {"rope_parameters", kObject | kNull}, {"use_sliding_window", kBool},
    {"sliding_window", kInt | kNull}, {"max_window_layers", kInt},
    {"layer_types", kStringList | kNull}, {"attention_dropout", kFloat | kInt},
    {"pad_token_id", kInt | kNull}, {"bos_token_id", kInt | kNull},
    {"eos_token_id", kInt | kIntList | kNull},
};
const Field kQwen3[] = {
    {"vocab_size", kInt},          {"hidden_size", kInt},
    {"intermediate_size", kInt},   {"num_hidden_layers", kInt},
    {"num_attention_heads", kInt}, {"num_key_value_heads", kInt | kNull},
    {"head_dim", kInt},            {"hidden_act", kString},
    {"max_position_embeddings", kInt}, {"initializer_range", kFloat},
    {"rms_norm_eps", kFloat},      {"use_cache", kBool},
    {"tie_word_embeddings", kBool}, {"rope_parameters", kObject | kNull},
    {"attention_bias", kBool},     {"use_sliding_window", kBool},
    {"sliding_window", kInt | kNull}, {"max_window_layers", kInt},
    {"layer_types", kStringList | kNull}, {"attention_dropout", kFloat | kInt},
    {"pad_token_id", kInt | kNull}, {"bos_token_id", kInt | kNull},
    {"eos_token_id", kInt | kIntList | kNull},
};

unsigned kindOf(const json& v) {
  if (v.is_null()) return kNull;
  if (v.is_boolean()) return kBool;
  if (v.is_number_integer()) return kInt;
  if (v.is_number_float()) return kFloat;
  if (v.is_string()) return kString;
  if (v.is_object()) return kObject;
  if (v.is_array()) {
    if (v.empty()) return kIntList | kStringList;
    if (std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer(); })) return kIntList;
    if (std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); })) return kStringList;
  }
  return 0;
}

std::string kindsText(unsigned kinds) {
  static const std::pair<unsigned, const char*> names[] = {
      {kInt, "an integer"}, {kFloat, "a float"}, {kBool, "true or false"}, {kString, "a string"},
      {kObject, "an object"}, {kIntList, "a list of integers"}, {kStringList, "a list of strings"}, {kNull, "null"}};
  std::string out;
  for (const auto& [kind, name] : names)
    if (kinds & kind) out += (out.empty() ? "" : " or ") + std::string(name);
  return out;
}

template <std::size_t N>
void check(const json& config, const Field (&fields)[N], const std::string& modelType) {
  for (const Field& f : fields) {
    if (!config.contains(f.name)) continue;
    const json& v = config[f.name];
    if (!(kindOf(v) & f.kinds))
      throw ConfigError("config.json (" + modelType + "): field '" + f.name + "' must be " + kindsText(f.kinds) +
                        " (transformers' typed field refuses anything else), got " + jsonExcerpt(v));
  }
}

}  // namespace

void checkConfigFieldTypes(const json& config, const std::string& modelType) {
  if (!config.is_object()) return;
  check(config, kBase, modelType);
  if (modelType == "gpt2") check(config, kGpt2, modelType);
  if (modelType == "llama") check(config, kLlama, modelType);
  if (modelType == "mistral") check(config, kMistral, modelType);
  if (modelType == "qwen2") check(config, kQwen2, modelType);
  if (modelType == "qwen3") check(config, kQwen3, modelType);
}

}  // namespace plab
