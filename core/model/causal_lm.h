#pragma once
// Base class of the causal language models. Implementations register their
// submodules with exactly the Hugging Face names (transformer.h.0.attn.c_attn,
// model.layers.0.self_attn.q_proj, ...) so weights load by name and the UI
// shows the real layer tree.
//
// Mixed precision contract: every leaf module (Linear, Conv1D, Embedding,
// LayerNorm, RMSNorm) computes in the dtype of its own parameters, casting
// its input to that dtype; the residual stream stays fp32 and forward()
// returns fp32 logits. So any per-layer bf16/fp32 plan runs as is.
#include <torch/torch.h>

#include <string>
#include <vector>

#include "model/gemm_slot.h"
#include "model/model_config.h"
#include "model/module_tree.h"

namespace plab {

class CausalLM : public torch::nn::Module {
 public:
  explicit CausalLM(ModelConfig config) : config_(std::move(config)) {}
  // className: the Hugging Face class name reported by name() ("GPT2LMHeadModel").
  CausalLM(ModelConfig config, std::string className)
      : torch::nn::Module(std::move(className)), config_(std::move(config)) {}
  const ModelConfig& config() const { return config_; }

  // input_ids: [B, T] int64 on the model's device. Returns [B, T, V] float32.
  virtual torch::Tensor forward(const torch::Tensor& input_ids) = 0;

  // Mean token cross-entropy in fp32; targets [B, T] int64.
  torch::Tensor loss(const torch::Tensor& input_ids, const torch::Tensor& targets);

  // The module whose weight a tied output head multiplies by ("transformer.wte",
  // "model.embed_tokens"), or "" when lm_head has a weight of its own.
  virtual std::string tiedHeadOwner() const { return {}; }

  // Parameter names that are aliases of another parameter (tied embeddings),
  // e.g. {"lm_head.weight"}. They are not in named_parameters().
  std::vector<std::string> tiedParameterNames() const {
    if (tiedHeadOwner().empty()) return {};
    return {"lm_head.weight"};
  }

  // The tied head's GEMM format (model/quantized_linear.h); unused without one.
  GemmSlot headGemm;

 private:
  ModelConfig config_;
};

// The model's module tree with its tied head, if any (addTiedHead).
ModuleNode describeModules(const CausalLM& model);

}  // namespace plab
