#include "train/model_memory_check.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "util/device_memory.h"
#include "util/errors.h"

namespace plab {

namespace {

// Keeps every product in ModelConfig::parameterCount() within int64.
constexpr int64_t kMaxDimension = int64_t(1) << 24;

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(1ull << 30));
  return buf;
}

}  // namespace

double estimatedParameterCount(const ModelConfig& config) {
  const std::pair<const char*, int64_t> dims[] = {{"hidden_size", config.hidden_size},
                                                  {"intermediate_size", config.intermediate_size},
                                                  {"vocab_size", config.vocab_size},
                                                  {"max_position_embeddings", config.max_position_embeddings},
                                                  {"num_attention_heads", config.num_attention_heads},
                                                  {"num_key_value_heads", config.num_key_value_heads},
                                                  {"head_dim", config.head_dim}};
  for (const auto& [name, value] : dims)
    if (value > kMaxDimension)
      throw ModelError("config.json: " + std::string(name) + " " + std::to_string(value) +
                       " is beyond any real model (at most " + std::to_string(kMaxDimension) + ")");
  // Per-layer and fixed parts from the exact formula on 0 and 1 layers.
  ModelConfig none = config, one = config;
  none.num_hidden_layers = 0;
  one.num_hidden_layers = 1;
  const double fixed = double(none.parameterCount());
  const double perLayer = double(one.parameterCount()) - fixed;
  return fixed + perLayer * double(config.num_hidden_layers);
}

uint64_t physicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

namespace {

// Refuses a model whose fp32 weights (it is created in fp32) exceed `memory`
// bytes (0: unknown, nothing to check); `where` ends the message.
void refuseWeightsBeyond(const ModelConfig& config, const std::string& what, uint64_t memory,
                         const std::string& where) {
  const double params = estimatedParameterCount(config);
  const double bytes = params * 4.0;
  if (memory == 0 || bytes <= double(memory)) return;
  char count[32];
  std::snprintf(count, sizeof count, "%.3g", params);
  throw ModelError(what + ": " + count + " parameters need about " + gib(bytes) +
                   " for their fp32 weights alone, more than the " + gib(double(memory)) + where);
}

}  // namespace

void checkModelFitsInMemory(const ModelConfig& config, const std::string& what) {
  refuseWeightsBeyond(config, what, physicalMemoryBytes(), " of memory of this machine");
}

void checkModelFitsOnDevice(const ModelConfig& config, const std::string& what, const std::string& device) {
  if (device.rfind("cuda", 0) != 0) return;
  const int index = device.size() > 5 ? std::atoi(device.c_str() + 5) : 0;
  refuseWeightsBeyond(config, what, cudaDeviceMemoryBytes(index), " of " + device);
}

void checkModelTreeSize(const ModelConfig& config, const std::string& what) {
  const double params = estimatedParameterCount(config);
  if (config.num_hidden_layers <= kMaxListedLayers) return;
  char count[32];
  std::snprintf(count, sizeof count, "%.3g", params);
  throw ModelError(what + ": " + count + " parameters (" + gib(params * 4.0) + " in fp32) in " +
                   std::to_string(config.num_hidden_layers) + " layers, more than the " +
                   std::to_string(kMaxListedLayers) + " layers any real model has");
}

}  // namespace plab
