#include "train/model_loading.h"

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "hub/hf_cache.h"
#include "hub/hub_download.h"
#include "model/model_factory.h"
#include "train/model_memory_check.h"
#include "util/errors.h"
#include "util/resources.h"

namespace plab {
namespace fs = std::filesystem;

namespace {

constexpr const char* kEmbeddedConfig = "models/tiny-gpt2/config.json";
// The pretrained checkpoint of that config (resources/models/tiny-gpt2/README.md
// says which command made it).
constexpr const char* kEmbeddedWeights = "models/tiny-gpt2/model.safetensors";

ModelConfig embeddedConfig() {
  const std::string_view text = embeddedResource(kEmbeddedConfig);
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) throw ConfigError(std::string("embedded ") + kEmbeddedConfig + " is not valid JSON");
  return ModelConfig::fromJson(j);
}

}  // namespace

ResolvedModelSource resolveModelSource(const ModelSpec& spec) {
  ResolvedModelSource r;
  if (spec.source == "embedded") {
    r.config = embeddedConfig();
    r.pretrained = hasEmbeddedResource(kEmbeddedWeights);
    r.description = r.pretrained ? "embedded tiny-gpt2 (pretrained)" : "embedded tiny-gpt2 (random init)";
  } else if (spec.source == "embedded-init") {
    r.config = embeddedConfig();
    r.description = "embedded tiny-gpt2 (random init)";
  } else if (spec.source == "config") {
    fs::path file = spec.path;
    if (fs::is_directory(file)) file /= "config.json";
    if (!fs::exists(file)) throw ConfigError("model config not found: " + file.string());
    r.config = ModelConfig::fromFile(file);
    r.folder = file.parent_path();
    r.description = file.string() + " (random init)";
  } else if (spec.source == "folder") {
    const fs::path dir = spec.path;
    if (!fs::is_directory(dir)) throw ModelError("model folder not found: " + dir.string());
    if (!fs::exists(dir / "config.json"))
      throw ModelError("model folder " + dir.string() + " has no config.json");
    r.config = ModelConfig::fromFile(dir / "config.json");
    r.folder = dir;
    r.pretrained = true;
    r.description = dir.string();
  } else if (spec.source == "hub") {
    const auto snapshot = findCachedSnapshot(spec.path, spec.revision);
    if (!snapshot)
      throw HubError("model " + spec.path + "@" + spec.revision +
                     " is not in the Hugging Face cache (" + hfHubCache().string() +
                     "); download it first (precision-lab-cli download " + spec.path + ")");
    r.config = ModelConfig::fromFile(*snapshot / "config.json");
    r.folder = *snapshot;
    r.pretrained = true;
    r.description = spec.path + "@" + spec.revision + " (cache)";
  } else {
    throw ConfigError("unknown model source '" + spec.source +
                      "' (expected embedded, embedded-init, config, folder, hub)");
  }
  r.bytesTokenizer = spec.tokenizer == "bytes";
  return r;
}

bool usesByteTokenizer(const ResolvedModelSource& source) {
  return source.bytesTokenizer || source.folder.empty() || (!source.pretrained && !hasTokenizerFiles(source.folder));
}

nlohmann::json documentSeparatorJson(const Tokenizer& tokenizer) {
  const std::optional<int64_t> eos = tokenizer.eosId();
  nlohmann::json token = nullptr;
  if (eos) {
    try {
      token = tokenizer.decode({*eos});
    } catch (const TokenizerError&) {
    }
  }
  return {{"id", eos ? nlohmann::json(*eos) : nlohmann::json(nullptr)},
          {"token", token},
          {"from", tokenizer.eosOrigin()},
          {"tokenizer_eos", tokenizer.eosIsTokenizers()}};
}

std::string documentSeparatorWarning(const Tokenizer& tokenizer) {
  if (tokenizer.eosIsTokenizers()) return "";
  const std::string why =
      "the tokenizer names no EOS (no eos_token in tokenizer_config.json or special_tokens_map.json: "
      "transformers' eos_token_id is None)";
  if (!tokenizer.eosId()) {
    const std::string origin = tokenizer.eosOrigin();
    return why + ": documents are joined with no separator" + (origin.empty() ? "" : " " + origin);
  }
  std::string token;
  try {
    token = " '" + tokenizer.decode({*tokenizer.eosId()}) + "'";
  } catch (const TokenizerError&) {
  }
  return why + ": documents are separated by id " + std::to_string(*tokenizer.eosId()) + token + ", from " +
         tokenizer.eosOrigin();
}

std::unique_ptr<Tokenizer> tokenizerForSource(const ResolvedModelSource& source, std::string* description) {
  const bool useBytes = usesByteTokenizer(source);
  std::unique_ptr<Tokenizer> tok = useBytes ? makeByteTokenizer() : loadTokenizerForModel(source.folder);
  if (description) {
    *description = tok->kind();
    if (!useBytes)
      *description += " (" + (source.folder / (fs::exists(source.folder / "tokenizer.json") ? "tokenizer.json"
                                                                                             : "vocab.json + merges.txt"))
                                 .string() + ")";
  }
  if (tok->vocabSize() > source.config.vocab_size) {
    std::ostringstream msg;
    msg << "tokenizer (" << tok->kind() << ", " << tok->vocabSize() << " tokens) does not fit the model's vocab_size "
        << source.config.vocab_size << " (" << source.description
        << "); models built from config without tokenizer.json use the byte tokenizer and need vocab_size >= 257";
    throw ConfigError(msg.str());
  }
  return tok;
}

namespace {

// The embedded checkpoint is read through the ordinary folder loader from a
// private temporary folder that is removed again.
std::shared_ptr<CausalLM> loadEmbeddedPretrained(std::vector<std::string>* warnings) {
  std::error_code ec;
  const fs::path dir = fs::temp_directory_path(ec) /
                       ("precision-lab-embedded-" + std::to_string(reinterpret_cast<std::uintptr_t>(&ec)) + "-" +
                        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  if (ec || !fs::create_directories(dir, ec))
    throw IoError("cannot create a temporary folder for the embedded checkpoint: " + ec.message());
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{dir};
  for (const char* name : {kEmbeddedConfig, kEmbeddedWeights}) {
    const std::string_view bytes = embeddedResource(name);
    std::ofstream out(dir / fs::path(name).filename(), std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) throw IoError("cannot write the embedded checkpoint to " + dir.string());
  }
  return loadPretrained(dir, warnings);
}

}  // namespace

LoadedModel loadModelForRun(const ModelSpec& spec, uint64_t seed, bool allowDownload,
                            const std::function<void(const std::string&)>& log, const std::string& device) {
  if (allowDownload && spec.source == "hub" && !findCachedSnapshot(spec.path, spec.revision)) {
    if (log) log("downloading " + spec.path + "@" + spec.revision + " from the Hugging Face Hub");
    DownloadOptions options;
    options.revision = spec.revision;
    downloadModel(spec.path, options);
  }
  ResolvedModelSource source = resolveModelSource(spec);
  checkModelFitsInMemory(source.config, source.description);
  checkModelFitsOnDevice(source.config, source.description, device);
  LoadedModel loaded;
  loaded.tokenizer = tokenizerForSource(source, &loaded.tokenizerDescription);
  loaded.warnings = source.config.warnings;
  if (!source.pretrained)
    loaded.model = createModel(source.config, seed);
  else
    loaded.model = source.folder.empty() ? loadEmbeddedPretrained(&loaded.warnings)
                                         : loadPretrained(source.folder, &loaded.warnings);
  if (const std::string w = documentSeparatorWarning(*loaded.tokenizer); !w.empty()) loaded.warnings.push_back(w);
  loaded.documentSeparator = documentSeparatorJson(*loaded.tokenizer);
  loaded.hfFiles = collectHfModelFiles(source);
  loaded.description = source.description;
  return loaded;
}

}  // namespace plab
