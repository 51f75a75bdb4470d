#pragma once
// A model is sized from its config before any weight is allocated, so that
// num_hidden_layers: 1000000 is refused with a figure instead of growing
// until std::bad_alloc.
#include <cstdint>
#include <string>

#include "model/model_config.h"

namespace plab {

// Parameters the config describes, as a double (no overflow for absurd
// sizes). Throws ModelError when a dimension is beyond any real model.
double estimatedParameterCount(const ModelConfig& config);

// Physical memory of this machine in bytes (0 when unknown).
uint64_t physicalMemoryBytes();

// Throws ModelError naming the figures when the fp32 weights alone (the
// model is created in fp32) exceed the machine's memory.
void checkModelFitsInMemory(const ModelConfig& config, const std::string& what);

// The same against a CUDA device's memory ("cuda" or "cuda:N"; the weights
// are moved there in fp32 before the plan converts them). Nothing to check
// for "cpu", or where the build cannot read the device's size.
void checkModelFitsOnDevice(const ModelConfig& config, const std::string& what, const std::string& device);

// For listing modules without weights (inspect): their memory grows with the
// number of layers, not of parameters, so a 7 B model is fine on any machine
// while num_hidden_layers: 1000000 is refused, naming its size.
constexpr int64_t kMaxListedLayers = 4096;
void checkModelTreeSize(const ModelConfig& config, const std::string& what);

}  // namespace plab
