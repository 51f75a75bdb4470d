#include "model/model_factory.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <unistd.h>

#include "model/gpt2_model.h"
#include "model/llama_model.h"
#include "model/safetensors.h"
#include "util/errors.h"
#include "util/json_limits.h"
#include "util/tool_files.h"

namespace plab {
namespace {

std::shared_ptr<CausalLM> buildModel(const ModelConfig& config) {
  if (config.family == ArchitectureFamily::Gpt2) return std::make_shared<Gpt2LMHeadModel>(config);
  return std::make_shared<LlamaForCausalLM>(config);
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shapeString(torch::IntArrayRef shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// transformers' _init_weights: normal(0, initializer_range) for Linear,
// Conv1D and Embedding weights, zero biases, unit norm weights; GPT-2 scales
// every c_proj weight by 1/sqrt(2 * n_layer).
void initWeights(CausalLM& model, uint64_t seed) {
  torch::NoGradGuard noGrad;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const ModelConfig& c = model.config();
  const double std = c.initializer_range;
  const double projStd = std / std::sqrt(2.0 * static_cast<double>(c.num_hidden_layers));
  for (const auto& item : model.named_modules()) {
    const std::string type = item.value()->name();
    for (const auto& p : item.value()->named_parameters(/*recurse=*/false)) {
      torch::Tensor t = p.value();
      if (p.key() == "bias") {
        t.zero_();
      } else if (type == "LayerNorm" || type == "RMSNorm") {
        t.fill_(1.0);
      } else {
        const bool scaled = c.family == ArchitectureFamily::Gpt2 && endsWith(item.key(), "c_proj");
        // Sample in fp32 on the CPU so the same seed gives the same weights
        // whatever the parameter's dtype or device.
        torch::Tensor sample = torch::empty(t.sizes(), torch::kFloat32);
        sample.normal_(0.0, scaled ? projStd : std, gen);
        t.copy_(sample);
      }
    }
  }
}

std::string checkpointLabel(const SafetensorsCheckpoint& ckpt) {
  const auto files = ckpt.files();
  if (files.size() == 1) return files[0].filename().string();
  return "model.safetensors.index.json";
}

void writeTextFile(const std::filesystem::path& path, const std::string& text) {
  removeStaleTemporariesOf(path);  // left by a run killed mid-checkpoint
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(path.string() + ": cannot create file");
    out << text;
    out.flush();
    const bool ok = static_cast<bool>(out);
    out.close();
    if (!ok || out.fail()) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw IoError(path.string() + ": write failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw IoError(path.string() + ": cannot move into place (" + ec.message() + ")");
}

// A tied head with an lm_head.weight of its own in the file: transformers 5
// ties the two only when the file's values are equal, and otherwise loads
// both and warns.
bool headDiffersFromEmbedding(const SafetensorsCheckpoint& ckpt, const std::string& embedding) {
  if (!ckpt.contains("lm_head.weight") || !ckpt.contains(embedding)) return false;
  const torch::Tensor head = ckpt.load("lm_head.weight"), embed = ckpt.load(embedding);
  return head.sizes() != embed.sizes() || !head.is_floating_point() || !embed.is_floating_point() ||
         !torch::equal(head.to(torch::kFloat32), embed.to(torch::kFloat32));
}

// Tensors transformers drops without a word: the old per-layer rotary
// inv_freq buffers of the RoPE models, GPT-2's causal-mask buffers
// (_keys_to_ignore_on_load_unexpected: "attn.bias", "crossattention.bias").
bool ignoredSilently(const ModelConfig& config, const std::string& name) {
  static const std::regex ropeBuffer(R"(rotary_emb\.inv_freq)");
  static const std::regex gpt2Masks(R"(attn.bias|crossattention.bias)");
  return std::regex_search(name, config.family == ArchitectureFamily::Gpt2 ? gpt2Masks : ropeBuffer);
}

// The name transformers gives the tensors' dtype ("float32", "bfloat16",
// "float16"): from_pretrained loads every weight in it by default. Mixed
// dtypes (a precision plan with bf16 and fp32 layers) give float32, which
// each of them widens to exactly.
std::string storedDtypeName(const std::vector<std::pair<std::string, torch::Tensor>>& tensors) {
  std::set<torch::ScalarType> dtypes;
  for (const auto& [name, t] : tensors) dtypes.insert(t.scalar_type());
  if (dtypes.size() == 1 && *dtypes.begin() == torch::kBFloat16) return "bfloat16";
  if (dtypes.size() == 1 && *dtypes.begin() == torch::kFloat16) return "float16";
  if (dtypes.size() == 1 && *dtypes.begin() == torch::kFloat64) return "float64";
  return "float32";
}

}  // namespace

std::shared_ptr<CausalLM> createModel(const ModelConfig& config, uint64_t seed) {
  auto model = buildModel(config);
  initWeights(*model, seed);
  return model;
}

std::shared_ptr<CausalLM> loadPretrained(const std::filesystem::path& modelDir, std::vector<std::string>* warnings) {
  ModelConfig config = ModelConfig::fromFile(modelDir / "config.json");
  const SafetensorsCheckpoint ckpt(modelDir);
  const std::string label = checkpointLabel(ckpt);
  const std::string embeddingKey =
      config.family == ArchitectureFamily::Gpt2 ? "transformer.wte.weight" : "model.embed_tokens.weight";
  // The file's name of a parameter: the original gpt2 uploads store
  // "h.0.attn.c_attn.weight", not "transformer.h.0..."; a tied model saved
  // by safetensors' save_model keeps only one name of the shared tensor,
  // which may be lm_head.weight (transformers ties the embedding to it).
  const auto fileName = [&](const std::string& name) {
    if (ckpt.contains(name)) return name;
    if (config.family == ArchitectureFamily::Gpt2 && name.rfind("transformer.", 0) == 0 &&
        ckpt.contains(name.substr(12)))
      return name.substr(12);
    if (name == embeddingKey && config.tie_word_embeddings && ckpt.contains("lm_head.weight"))
      return std::string("lm_head.weight");
    return name;
  };
  const std::string embedding = fileName(embeddingKey);
  const bool untie = config.tie_word_embeddings && headDiffersFromEmbedding(ckpt, embedding);
  if (untie) {
    config.tie_word_embeddings = false;
    if (warnings)
      warnings->push_back(label + ": config.json ties the output head to the embedding, but the file holds an "
                          "lm_head.weight of its own that differs from it: the head is loaded from the file and "
                          "kept apart (as transformers 5 does); checkpoints say tie_word_embeddings: false");
  }
  auto model = buildModel(config);

  torch::NoGradGuard noGrad;
  std::set<std::string> used;
  for (const auto& p : model->named_parameters()) {
    const std::string name = fileName(p.key());
    if (!ckpt.contains(name))
      throw ModelError(label + ": missing tensor '" + p.key() + "' (expected shape " +
                       shapeString(p.value().sizes()) + ")");
    const torch::Tensor stored = ckpt.load(name);
    if (stored.sizes() != p.value().sizes())
      throw ModelError(label + ": tensor '" + name + "' has shape " + shapeString(stored.sizes()) + ", expected " +
                       shapeString(p.value().sizes()));
    if (!stored.is_floating_point())
      throw ModelError(label + ": tensor '" + name + "' has non-floating dtype " +
                       std::string(c10::toString(stored.scalar_type())));
    p.value().copy_(stored.to(torch::kFloat32));
    used.insert(name);
  }
  if (config.tie_word_embeddings && ckpt.contains("lm_head.weight")) used.insert("lm_head.weight");  // equal to the embedding
  std::vector<std::string> unused;
  for (const std::string& name : ckpt.names())
    if (!used.count(name) && !ignoredSilently(config, name)) unused.push_back(name);
  if (!unused.empty() && warnings) {
    std::string list;
    for (std::size_t i = 0; i < unused.size() && i < 8; ++i) list += (i ? ", " : "") + textExcerpt(unused[i]);
    if (unused.size() > 8) list += ", ... (" + std::to_string(unused.size()) + " in all)";
    warnings->push_back(label + ": " + std::to_string(unused.size()) + " tensor" + (unused.size() == 1 ? "" : "s") +
                        " the model has no place for, not loaded (transformers skips them with a warning too): " +
                        list);
  }
  return model;
}

void saveCheckpoint(CausalLM& model, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(dir.string() + ": cannot create directory (" + ec.message() + ")");
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& p : model.named_parameters()) tensors.emplace_back(p.key(), p.value().detach());
  writeSafetensors(dir / "model.safetensors", tensors, {{"format", "pt"}});
  nlohmann::json config = model.config().toJson();
  config["dtype"] = config["torch_dtype"] = storedDtypeName(tensors);  // transformers 5 reads dtype, 4 torch_dtype
  writeTextFile(dir / "config.json", config.dump(2) + "\n");
}

}  // namespace plab
