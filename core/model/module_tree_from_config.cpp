#include "model/module_tree_from_config.h"

#include <utility>

namespace plab {
namespace {

// Mirrors the registration order of gpt2_model.cpp / llama_model.cpp; the
// test compares the two trees for every architecture variant.
class TreeBuilder {
 public:
  static ModuleNode leaf(const std::string& name, const std::string& type, int64_t parameters) {
    ModuleNode n;
    n.name = name;
    n.type = type;
    n.ownParameters = parameters;
    return n;
  }
  static ModuleNode group(const std::string& name, const std::string& type, std::vector<ModuleNode> children) {
    ModuleNode n;
    n.name = name;
    n.type = type;
    n.children = std::move(children);
    return n;
  }
  // Fills path and totals top-down.
  static void finish(ModuleNode& n, const std::string& path) {
    n.path = path;
    n.totalParameters = n.ownParameters;
    for (auto& c : n.children) {
      finish(c, path.empty() ? c.name : path + "." + c.name);
      n.totalParameters += c.totalParameters;
    }
  }
};

ModuleNode gpt2Tree(const ModelConfig& c) {
  using B = TreeBuilder;
  const int64_t H = c.hidden_size, I = c.intermediate_size;
  std::vector<ModuleNode> blocks;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    blocks.push_back(B::group(std::to_string(i), "GPT2Block",
                              {B::leaf("ln_1", "LayerNorm", 2 * H),
                               B::group("attn", "GPT2Attention",
                                        {B::leaf("c_attn", "Conv1D", H * 3 * H + 3 * H),
                                         B::leaf("c_proj", "Conv1D", H * H + H)}),
                               B::leaf("ln_2", "LayerNorm", 2 * H),
                               B::group("mlp", "GPT2MLP",
                                        {B::leaf("c_fc", "Conv1D", H * I + I), B::leaf("c_proj", "Conv1D", I * H + H)})}));
  std::vector<ModuleNode> top = {B::group("transformer", "GPT2Model",
                                          {B::leaf("wte", "Embedding", c.vocab_size * H),
                                           B::leaf("wpe", "Embedding", c.max_position_embeddings * H),
                                           B::group("h", "ModuleList", std::move(blocks)),
                                           B::leaf("ln_f", "LayerNorm", 2 * H)})};
  if (!c.tie_word_embeddings) top.push_back(B::leaf("lm_head", "Linear", c.vocab_size * H));
  ModuleNode root = B::group("", "GPT2LMHeadModel", std::move(top));
  if (c.tie_word_embeddings) addTiedHead(root, "transformer.wte");
  return root;
}

std::string llamaPrefix(const ModelConfig& c) {
  if (c.model_type == "mistral") return "Mistral";
  if (c.model_type == "qwen2") return "Qwen2";
  if (c.model_type == "qwen3") return "Qwen3";
  return "Llama";
}

ModuleNode llamaTree(const ModelConfig& c) {
  using B = TreeBuilder;
  const std::string p = llamaPrefix(c);
  const int64_t H = c.hidden_size, I = c.intermediate_size, D = c.head_dim;
  const int64_t q = c.num_attention_heads * D, kv = c.num_key_value_heads * D;
  const int64_t qkvBias = c.attention_bias ? 1 : 0, oBias = c.attention_output_bias ? 1 : 0;
  const int64_t mlpBias = c.mlp_bias ? 1 : 0;
  std::vector<ModuleNode> layers;
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    std::vector<ModuleNode> attention = {B::leaf("q_proj", "Linear", H * q + qkvBias * q),
                                         B::leaf("k_proj", "Linear", H * kv + qkvBias * kv),
                                         B::leaf("v_proj", "Linear", H * kv + qkvBias * kv),
                                         B::leaf("o_proj", "Linear", q * H + oBias * H)};
    if (c.qk_norm) {
      attention.push_back(B::leaf("q_norm", "RMSNorm", D));
      attention.push_back(B::leaf("k_norm", "RMSNorm", D));
    }
    layers.push_back(B::group(std::to_string(i), p + "DecoderLayer",
                              {B::group("self_attn", p + "Attention", std::move(attention)),
                               B::group("mlp", p + "MLP",
                                        {B::leaf("gate_proj", "Linear", H * I + mlpBias * I),
                                         B::leaf("up_proj", "Linear", H * I + mlpBias * I),
                                         B::leaf("down_proj", "Linear", I * H + mlpBias * H)}),
                               B::leaf("input_layernorm", "RMSNorm", H),
                               B::leaf("post_attention_layernorm", "RMSNorm", H)}));
  }
  std::vector<ModuleNode> top = {B::group("model", p + "Model",
                                          {B::leaf("embed_tokens", "Embedding", c.vocab_size * H),
                                           B::group("layers", "ModuleList", std::move(layers)),
                                           B::leaf("norm", "RMSNorm", H)})};
  if (!c.tie_word_embeddings) top.push_back(B::leaf("lm_head", "Linear", c.vocab_size * H));
  ModuleNode root = B::group("", p + "ForCausalLM", std::move(top));
  if (c.tie_word_embeddings) addTiedHead(root, "model.embed_tokens");
  return root;
}

}  // namespace

ModuleNode describeModulesFromConfig(const ModelConfig& config) {
  ModuleNode root = config.family == ArchitectureFamily::Gpt2 ? gpt2Tree(config) : llamaTree(config);
  TreeBuilder::finish(root, "");
  root.name = root.type;  // describeModules names the root by its class
  return root;
}

}  // namespace plab
