#include "train/model_loading.h"

#include <sstream>

#include "hub/hf_cache.h"
#include "hub/hub_download.h"
#include "model/model_factory.h"
#include "util/errors.h"
#include "util/resources.h"

namespace plab {
namespace fs = std::filesystem;

namespace {

constexpr const char* kEmbeddedConfig = "models/tiny-gpt2/config.json";

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
    r.description = "embedded tiny-gpt2";
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
    throw ConfigError("unknown model source '" + spec.source + "' (expected embedded, config, folder, hub)");
  }
  r.bytesTokenizer = spec.tokenizer == "bytes";
  return r;
}

std::unique_ptr<Tokenizer> tokenizerForSource(const ResolvedModelSource& source, std::string* description) {
  const bool useBytes = source.bytesTokenizer || source.folder.empty() ||
                        (!source.pretrained && !hasTokenizerFiles(source.folder));
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

LoadedModel loadModelForRun(const ModelSpec& spec, uint64_t seed, bool allowDownload,
                            const std::function<void(const std::string&)>& log) {
  if (allowDownload && spec.source == "hub" && !findCachedSnapshot(spec.path, spec.revision)) {
    if (log) log("downloading " + spec.path + "@" + spec.revision + " from the Hugging Face Hub");
    DownloadOptions options;
    options.revision = spec.revision;
    downloadModel(spec.path, options);
  }
  ResolvedModelSource source = resolveModelSource(spec);
  LoadedModel loaded;
  loaded.tokenizer = tokenizerForSource(source, &loaded.tokenizerDescription);
  loaded.model = source.pretrained ? loadPretrained(source.folder) : createModel(source.config, seed);
  loaded.description = source.description;
  return loaded;
}

}  // namespace plab
