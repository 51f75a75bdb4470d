#pragma once
// Turns a ModelSpec into a model + tokenizer ready to train (torch side of
// the run setup; model_inspect.h is the torch-free overview).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "tokenizer/tokenizer.h"
#include "train/hf_model_files.h"
#include "train/run_config.h"

namespace plab {

struct LoadedModel {
  std::shared_ptr<CausalLM> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string description;  // "embedded tiny-gpt2", "/path", "org/name@main (cache)"
  std::string tokenizerDescription;  // kind and files, for run_info.json
  // What transformers would only warn about (config.json fields, tensors the
  // model has no place for, a tokenizer without an EOS): each to be shown
  // and recorded (run_info.json "model_warnings").
  std::vector<std::string> warnings;
  // The separator put between documents: {"id", "token", "from"} (id and
  // token null when there is none), run_info.json "document_separator".
  nlohmann::json documentSeparator;
  HfModelFiles hfFiles;  // written into every checkpoint (hf_model_files.h)
};

// Where a spec's config.json / weights / tokenizer live. Never downloads:
// a hub spec that is not cached throws HubError telling how to fetch it.
struct ResolvedModelSource {
  ModelConfig config;
  std::filesystem::path folder;  // empty for embedded/config specs without a folder
  bool pretrained = false;       // weights are loaded from `folder`
  bool bytesTokenizer = false;   // the run asked for the byte tokenizer (model.tokenizer "bytes")
  std::string description;
};
ResolvedModelSource resolveModelSource(const ModelSpec& spec);

// Tokenizer for a resolved source: bytes when asked for; the folder's
// tokenizer (tokenizer.json, vocab.json + merges.txt) when present; bytes
// for a model built from a config without one. A pretrained folder without
// a tokenizer throws TokenizerError. Throws ConfigError when its vocabulary
// does not fit the model's vocab_size. `description` (optional) receives
// the kind and the files used.
std::unique_ptr<Tokenizer> tokenizerForSource(const ResolvedModelSource& source, std::string* description = nullptr);
// True when that tokenizer is the byte tokenizer.
bool usesByteTokenizer(const ResolvedModelSource& source);

// The separator a tokenizer puts between documents, as run_info.json records
// it, and the warning to show when it is not the tokenizer's own EOS ("" when
// it is).
nlohmann::json documentSeparatorJson(const Tokenizer& tokenizer);
std::string documentSeparatorWarning(const Tokenizer& tokenizer);

// Builds (random init with seed) or loads the model. When allowDownload is
// set, a hub model missing from the cache is downloaded first (progress
// lines go to `log`).
LoadedModel loadModelForRun(const ModelSpec& spec, uint64_t seed, bool allowDownload = false,
                            const std::function<void(const std::string&)>& log = {},
                            const std::string& device = "cpu");

}  // namespace plab
