#include "model/model_factory.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <fstream>
#include <unistd.h>

#include "model/gpt2_model.h"
#include "model/llama_model.h"
#include "model/safetensors.h"
#include "util/errors.h"
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

}  // namespace

std::shared_ptr<CausalLM> createModel(const ModelConfig& config, uint64_t seed) {
  auto model = buildModel(config);
  initWeights(*model, seed);
  return model;
}

std::shared_ptr<CausalLM> loadPretrained(const std::filesystem::path& modelDir) {
  const ModelConfig config = ModelConfig::fromFile(modelDir / "config.json");
  auto model = buildModel(config);
  const SafetensorsCheckpoint ckpt(modelDir);
  const std::string label = checkpointLabel(ckpt);

  torch::NoGradGuard noGrad;
  for (const auto& p : model->named_parameters()) {
    std::string name = p.key();
    // The original gpt2 uploads store "h.0.attn.c_attn.weight", not "transformer.h.0...".
    if (!ckpt.contains(name) && config.family == ArchitectureFamily::Gpt2 && name.rfind("transformer.", 0) == 0 &&
        ckpt.contains(name.substr(12)))
      name = name.substr(12);
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
  }
  // Extra tensors (attn.bias buffers, a tied lm_head.weight, rotary inv_freq) are simply not read.
  return model;
}

void saveCheckpoint(CausalLM& model, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(dir.string() + ": cannot create directory (" + ec.message() + ")");
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& p : model.named_parameters()) tensors.emplace_back(p.key(), p.value().detach());
  writeSafetensors(dir / "model.safetensors", tensors, {{"format", "pt"}});
  writeTextFile(dir / "config.json", model.config().toJson().dump(2) + "\n");
}

}  // namespace plab
