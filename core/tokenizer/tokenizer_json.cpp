// Reading Hugging Face tokenizer.json files into a ByteLevelBpeTokenizer.
// Supported: model.type "BPE" with a byte-level pre-tokenizer, either
//   ByteLevel{use_regex: true}                      (GPT-2 split)
//   Sequence[Split{Regex: <known regex>}, ByteLevel{use_regex: false}]  (Llama-3, Qwen2)
// Ignored on purpose: the post_processor (BOS templates; training joins
// documents with EOS itself), an NFC normalizer (text is assumed NFC
// already), added-token lstrip/rstrip flags.
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tokenizer/bpe_tokenizer.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

namespace {

using nlohmann::json;

// Tokens tried, in order, for the document separator (eosId()).
const char* const kEosCandidates[] = {"<|endoftext|>", "<|end_of_text|>", "</s>", "<|im_end|>", "<|eot_id|>"};

json readJsonFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TokenizerError("cannot read tokenizer file " + path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (const std::string nesting = jsonNestingProblem(text); !nesting.empty())
    throw TokenizerError(path.string() + ": " + nesting);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw TokenizerError("invalid JSON in " + path.string() + ": " + textExcerpt(e.what(), 200));
  }
}

std::string typeOf(const json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return "";
  return j["type"].get<std::string>();
}

// Adds the split stages of one pre-tokenizer; sets sawByteLevel when it is
// (or contains) the ByteLevel one.
void addPreTokenizer(const json& pre, BpeSpec& spec, bool& sawByteLevel) {
  const std::string& src = spec.source;
  const std::string type = typeOf(pre);
  if (type == "ByteLevel") {
    sawByteLevel = true;
    spec.addPrefixSpace = pre.value("add_prefix_space", false);
    if (pre.value("use_regex", true)) spec.splitRules.push_back(SplitRule::Gpt2);
  } else if (type == "Sequence") {
    if (!pre.contains("pretokenizers") || !pre["pretokenizers"].is_array())
      throw TokenizerError(src + ": pre_tokenizer Sequence without a pretokenizers list");
    for (const auto& p : pre["pretokenizers"]) addPreTokenizer(p, spec, sawByteLevel);
  } else if (type == "Split") {
    const json pattern = pre.value("pattern", json());
    if (!pattern.is_object() || !pattern.contains("Regex") || !pattern["Regex"].is_string())
      throw TokenizerError(src + ": unsupported Split pre-tokenizer pattern " + jsonExcerpt(pattern) +
                           " (only the GPT-2, Llama-3 and Qwen2 regexes are supported)");
    const std::string regex = pattern["Regex"].get<std::string>();
    const auto rule = splitRuleForRegex(regex);
    if (!rule || pre.value("invert", false))
      throw TokenizerError(src + ": unsupported Split regex '" + regex +
                           "' (only the GPT-2, Llama-3 and Qwen2 regexes are supported)");
    spec.splitRules.push_back(*rule);
  } else {
    throw TokenizerError(src + ": unsupported pre_tokenizer '" + (type.empty() ? jsonExcerpt(pre) : type) +
                         "' (only byte-level BPE tokenizers are supported)");
  }
}

std::pair<std::string, std::string> parseMerge(const json& m, const std::string& src) {
  if (m.is_string()) {
    const std::string s = m.get<std::string>();
    const auto space = s.find(' ');
    if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
      throw TokenizerError(src + ": malformed merge '" + s + "'");
    return {s.substr(0, space), s.substr(space + 1)};
  }
  if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
    return {m[0].get<std::string>(), m[1].get<std::string>()};
  throw TokenizerError(src + ": malformed merge " + jsonExcerpt(m));
}

std::unique_ptr<ByteLevelBpeTokenizer> loadBpe(const std::filesystem::path& path) {
  const json j = readJsonFile(path);
  BpeSpec spec;
  spec.source = path.string();
  const std::string& src = spec.source;
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
    throw TokenizerError(src + ": no \"model\" object");
  const json& model = j["model"];
  const std::string modelType = model.value("type", std::string("BPE"));
  if (modelType != "BPE")
    throw TokenizerError(src + ": unsupported tokenizer model type '" + modelType +
                         "' (only byte-level BPE is supported)");
  if (!model.contains("vocab") || !model["vocab"].is_object())
    throw TokenizerError(src + ": model.vocab missing or not an object");
  if (!model.contains("merges") || !model["merges"].is_array())
    throw TokenizerError(src + ": model.merges missing or not a list");
  try {
    for (const auto& [token, id] : model["vocab"].items()) spec.vocab.emplace(token, id.get<int64_t>());
    for (const auto& m : model["merges"]) spec.merges.push_back(parseMerge(m, src));
    spec.ignoreMerges = model.value("ignore_merges", false);
    if (j.contains("added_tokens") && j["added_tokens"].is_array())
      for (const auto& t : j["added_tokens"])
        spec.addedTokens.emplace_back(t.at("content").get<std::string>(), t.at("id").get<int64_t>());
  } catch (const json::exception& e) {
    throw TokenizerError(src + ": malformed vocab, merges or added_tokens: " + e.what());
  }

  const json normalizer = j.value("normalizer", json());
  const std::string normType = typeOf(normalizer);
  const bool emptySequence = normType == "Sequence" && normalizer.value("normalizers", json::array()).empty();
  if (!normalizer.is_null() && normType != "NFC" && !emptySequence)
    throw TokenizerError(src + ": unsupported normalizer '" + (normType.empty() ? jsonExcerpt(normalizer) : normType) + "'");

  const json pre = j.value("pre_tokenizer", json());
  if (pre.is_null()) throw TokenizerError(src + ": no pre_tokenizer (only byte-level BPE is supported)");
  bool sawByteLevel = false;
  addPreTokenizer(pre, spec, sawByteLevel);
  if (!sawByteLevel)
    throw TokenizerError(src + ": pre_tokenizer has no ByteLevel step (only byte-level BPE is supported)");

  auto tokenizer = std::make_unique<ByteLevelBpeTokenizer>(std::move(spec));
  for (const char* candidate : kEosCandidates)
    if (auto id = tokenizer->tokenId(candidate)) {
      tokenizer->setEosId(id);
      break;
    }
  return tokenizer;
}

// eos_token of tokenizer_config.json: a string or {"content": ...}.
std::optional<std::string> configuredEosToken(const std::filesystem::path& configPath) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(configPath, ec)) return std::nullopt;
  const json config = readJsonFile(configPath);
  if (!config.is_object() || !config.contains("eos_token")) return std::nullopt;
  const json& eos = config["eos_token"];
  if (eos.is_string()) return eos.get<std::string>();
  if (eos.is_object() && eos.contains("content") && eos["content"].is_string())
    return eos["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path& tokenizerJson) {
  return loadBpe(tokenizerJson);
}

std::unique_ptr<Tokenizer> loadTokenizerForModel(const std::filesystem::path& modelDir) {
  const auto path = modelDir / "tokenizer.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return makeByteTokenizer();
  auto tokenizer = loadBpe(path);
  // The model's own eos_token, when tokenizer_config.json names a known one,
  // beats the built-in guess.
  if (auto eos = configuredEosToken(modelDir / "tokenizer_config.json"))
    if (auto id = tokenizer->tokenId(*eos)) tokenizer->setEosId(id);
  return tokenizer;
}

}  // namespace plab
