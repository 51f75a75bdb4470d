#include "support/tiny_models.h"

namespace plab::test {

// Built through fromJson so the configs carry a realistic `raw` and exercise
// the same defaults as a downloaded config.json.
ModelConfig tinyGpt2Config() {
  return ModelConfig::fromJson({
      {"model_type", "gpt2"},
      {"architectures", {"GPT2LMHeadModel"}},
      {"vocab_size", 61},
      {"n_embd", 32},
      {"n_layer", 2},
      {"n_head", 4},
      {"n_positions", 32},
      {"n_inner", nullptr},
      {"layer_norm_epsilon", 1e-5},
      {"activation_function", "gelu_new"},
      {"initializer_range", 0.02},
      {"bos_token_id", 0},
      {"eos_token_id", 0},
  });
}

ModelConfig tinyLlamaConfig() {
  return ModelConfig::fromJson({
      {"model_type", "llama"},
      {"architectures", {"LlamaForCausalLM"}},
      {"vocab_size", 61},
      {"hidden_size", 32},
      {"num_hidden_layers", 2},
      {"num_attention_heads", 4},
      {"num_key_value_heads", 2},
      {"intermediate_size", 64},
      {"max_position_embeddings", 32},
      {"rms_norm_eps", 1e-6},
      {"rope_theta", 10000.0},
      {"hidden_act", "silu"},
      {"initializer_range", 0.02},
      {"tie_word_embeddings", false},
      {"bos_token_id", 1},
      {"eos_token_id", 2},
  });
}

}  // namespace plab::test
