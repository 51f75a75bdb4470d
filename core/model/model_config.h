#pragma once
// Architecture hyper-parameters read from a Hugging Face config.json.
// Torch-free so that the UI can show them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace plab {

enum class ArchitectureFamily { Gpt2, Llama };

// config.json "rope_scaling" (transformers' names). type "default" is plain
// RoPE; "linear", "llama3" and "yarn" rescale the inverse frequencies;
// "dynamic" (NTK) rescales them only for sequences longer than
// max_position_embeddings, which a run never trains on (it refuses such a
// seq_len): its frequencies are the default ones.
struct RopeScaling {
  std::string type = "default";
  double factor = 1.0;             // any finite non-zero value (transformers warns below 1)
  double low_freq_factor = 1.0;    // llama3
  double high_freq_factor = 4.0;   // llama3
  int64_t original_max_position_embeddings = 0;  // llama3 (required), yarn (default: max_position_embeddings)
  double beta_fast = 32.0;         // yarn
  double beta_slow = 1.0;          // yarn
  std::optional<double> attention_factor;  // yarn; absent: derived from factor (and mscale / mscale_all_dim)
  double mscale = 0.0;             // yarn, DeepSeek style (0: not given)
  double mscale_all_dim = 0.0;     // yarn, DeepSeek style (0: not given)
  bool truncate = true;            // yarn
};

struct ModelConfig {
  ArchitectureFamily family = ArchitectureFamily::Gpt2;
  std::string model_type;            // as in config.json: "gpt2", "llama", "qwen2", "mistral", ...
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;           // gpt2: n_embd
  int64_t num_hidden_layers = 0;     // gpt2: n_layer
  int64_t num_attention_heads = 0;   // gpt2: n_head
  int64_t num_key_value_heads = 0;   // llama GQA; == num_attention_heads for gpt2
  int64_t intermediate_size = 0;     // gpt2: n_inner or 4*n_embd
  int64_t max_position_embeddings = 0;  // gpt2: n_positions
  int64_t head_dim = 0;              // hidden_size / num_attention_heads unless given
  double norm_eps = 1e-5;            // gpt2: layer_norm_epsilon, llama: rms_norm_eps
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  int64_t sliding_window = 0;        // mistral: keys further back than this are masked; 0 = none
  bool qk_norm = false;              // qwen3: RMSNorm over each head of q and k before RoPE
  // gpt2: attention score scaling (scale_attn_weights: 1/sqrt(head_dim);
  // scale_attn_by_inverse_layer_idx: also 1/(layer index + 1)).
  bool scale_attn_weights = true;
  bool scale_attn_by_inverse_layer_idx = false;
  double initializer_range = 0.02;
  std::string hidden_act;            // "gelu_new", "silu", ...
  bool tie_word_embeddings = false;
  bool attention_bias = false;       // qwen2: q/k/v projections carry a bias
  bool attention_output_bias = false;  // o_proj bias (llama: == attention_bias; qwen2: none)
  bool mlp_bias = false;
  // -1 when absent. A list (newer configs list several EOS ids) gives its
  // first id; every listed id must lie in [0, vocab_size) (tokenIdField).
  int64_t bos_token_id = -1;
  int64_t eos_token_id = -1;
  nlohmann::json raw;                // the config.json as read, for saving back
  // What transformers 5 only warns about and loads anyway (a rope factor
  // below 1, unknown rope keys, token ids outside the vocabulary, ...): the
  // run shows and records them (run_info.json "model_warnings").
  std::vector<std::string> warnings;

  // Throws ConfigError naming the missing/invalid field or the unknown
  // architecture ("unknown model_type 'x' (supported: gpt2, llama, ...)"),
  // for what transformers 5.24 refuses too or what is not implemented here;
  // what transformers accepts with a warning is accepted with the same
  // warning (in `warnings`).
  static ModelConfig fromJson(const nlohmann::json& j);
  static ModelConfig fromFile(const std::filesystem::path& configJson);
  // HF-compatible config.json: the fields read, with the source's others
  // kept, except its dtype / torch_dtype (the tensors' dtype is the writer's
  // to say: model_factory.h).
  nlohmann::json toJson() const;
  int64_t parameterCount() const;    // exact, including tied weights once
  static std::string supportedModelTypes();  // "gpt2, llama, mistral, qwen2, qwen3"
};

// A JSON file of a model folder (config.json, generation_config.json);
// throws ConfigError naming the file when it cannot be read or is not JSON.
nlohmann::json readConfigJsonFile(const std::filesystem::path& file);

// A token id field of config.json or generation_config.json ("bos_token_id",
// "eos_token_id"): nullopt when absent or null; an integer id, or a non-empty
// list of them (newer configs list several EOS ids: the first is the one
// returned), each in [0, vocabSize). Anything else throws ConfigError
// naming `where` (the file) and the field.
std::optional<int64_t> tokenIdField(const nlohmann::json& config, const char* field, int64_t vocabSize,
                                    const std::string& where);

}  // namespace plab
