// Reading Hugging Face tokenizer.json files into a BpeTokenizer.
// Supported: model.type "BPE", either
//   byte-level: ByteLevel (its GPT-2 split when use_regex), after any Split
//     (any regex, run by Oniguruma as the library runs it, or a literal
//     String; every behavior, invert) and Digits, alone or in a Sequence
//   SentencePiece style: no pre-tokenizer (Llama-2: Prepend + Replace
//     normalizers) or Metaspace (Mistral), byte_fallback, unk_token;
// the normalizers of normalizer.h; post-processors TemplateProcessing,
// RobertaProcessing, BertProcessing, ByteLevel and Sequence of them.
// Everything else is refused with a TokenizerError naming it.
// Not applied: added-token lstrip/rstrip/normalized flags (added tokens are
// matched literally in the raw text).
#include <nlohmann/json.hpp>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer_files.h"
#include "util/errors.h"
#include "util/json_limits.h"

namespace plab {

namespace {

using nlohmann::json;

std::string typeOf(const json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return "";
  return j["type"].get<std::string>();
}

Metaspace parseMetaspace(const json& pre, const std::string& src) {
  Metaspace m;
  m.replacement = pre.value("replacement", std::string("\xE2\x96\x81"));
  if (m.replacement.empty()) throw TokenizerError(src + ": Metaspace with an empty replacement");
  m.split = pre.value("split", true);
  if (pre.contains("prepend_scheme") && pre["prepend_scheme"].is_string()) {
    const std::string scheme = pre["prepend_scheme"].get<std::string>();
    if (scheme == "always") m.prepend = Metaspace::Prepend::Always;
    else if (scheme == "first") m.prepend = Metaspace::Prepend::First;
    else if (scheme == "never") m.prepend = Metaspace::Prepend::Never;
    else throw TokenizerError(src + ": unknown Metaspace prepend_scheme '" + scheme + "'");
  } else {  // older files: add_prefix_space
    m.prepend = pre.value("add_prefix_space", true) ? Metaspace::Prepend::Always : Metaspace::Prepend::Never;
  }
  return m;
}

// A Split's behavior and invert flag (what becomes a piece: split_pattern.h).
std::pair<SplitBehavior, bool> splitBehavior(const json& pre, const std::string& src) {
  const json behaviorField = pre.value("behavior", json("Isolated"));
  const json invertField = pre.value("invert", json(false));
  if (!behaviorField.is_string() || !invertField.is_boolean())
    throw TokenizerError(src + ": Split pre-tokenizer needs a string 'behavior' and a boolean 'invert', got " +
                         jsonExcerpt(behaviorField) + " and " + jsonExcerpt(invertField));
  const auto behavior = splitBehaviorFromName(behaviorField.get<std::string>());
  if (!behavior)
    throw TokenizerError(src + ": unknown Split behavior " + jsonExcerpt(behaviorField) +
                         " (known: Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
  return {*behavior, invertField.get<bool>()};
}

// Adds the steps of one pre-tokenizer; sets sawByteLevel when it is (or
// contains) the ByteLevel one. ByteLevel maps every byte to a character of
// its alphabet: a Split or Digits after it would split those characters,
// which is refused rather than imitated.
void addPreTokenizer(const json& pre, BpeSpec& spec, bool& sawByteLevel) {
  const std::string& src = spec.source;
  const std::string type = typeOf(pre);
  if ((type == "Split" || type == "Digits" || type == "ByteLevel") && sawByteLevel)
    throw TokenizerError(src + ": pre_tokenizer " + type + " after ByteLevel is not supported (it would work on " +
                         "ByteLevel's byte characters)");
  if (type == "ByteLevel") {
    sawByteLevel = true;
    if (pre.value("add_prefix_space", false)) spec.preTokenizer.push_back(PreTokenizerStep::prefixSpace());
    if (pre.value("use_regex", true)) spec.preTokenizer.push_back(PreTokenizerStep::scanner(SplitRule::Gpt2));
  } else if (type == "Sequence") {
    if (!pre.contains("pretokenizers") || !pre["pretokenizers"].is_array())
      throw TokenizerError(src + ": pre_tokenizer Sequence without a pretokenizers list");
    for (const auto& p : pre["pretokenizers"]) addPreTokenizer(p, spec, sawByteLevel);
  } else if (type == "Split") {
    const json pattern = pre.value("pattern", json());
    const auto [behavior, invert] = splitBehavior(pre, src);
    if (pattern.is_object() && pattern.size() == 1 && pattern.contains("Regex") && pattern["Regex"].is_string()) {
      spec.preTokenizer.push_back(PreTokenizerStep::split(pattern["Regex"].get<std::string>(), behavior, invert, src));
    } else if (pattern.is_object() && pattern.size() == 1 && pattern.contains("String") &&
               pattern["String"].is_string() && !pattern["String"].get<std::string>().empty()) {
      spec.preTokenizer.push_back(PreTokenizerStep::literalSplit(pattern["String"].get<std::string>(), behavior, invert));
    } else {
      throw TokenizerError(src + ": Split pre-tokenizer pattern " + jsonExcerpt(pattern) +
                           " is neither {\"Regex\": ...} nor a non-empty {\"String\": ...}");
    }
  } else if (type == "Digits") {
    // Each character with a Unicode number category, alone or in runs, as the library's char::is_numeric split.
    const json individual = pre.value("individual_digits", json(false));
    if (!individual.is_boolean())
      throw TokenizerError(src + ": Digits needs a boolean 'individual_digits', got " + jsonExcerpt(individual));
    spec.preTokenizer.push_back(PreTokenizerStep::split(
        "\\p{N}", individual.get<bool>() ? SplitBehavior::Isolated : SplitBehavior::Contiguous, false, src));
  } else if (type == "Metaspace") {
    spec.metaspace = parseMetaspace(pre, src);
  } else {
    throw TokenizerError(src + ": unsupported pre_tokenizer '" + (type.empty() ? jsonExcerpt(pre) : type) +
                         "' (supported: ByteLevel, Split, Digits, Metaspace, Sequence)");
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

// Ids of a special token named in a post-processor.
std::vector<int64_t> specialTokenIds(const json& processor, const std::string& name, const std::string& src) {
  const json specials = processor.value("special_tokens", json::object());
  if (specials.contains(name) && specials[name].contains("ids") && specials[name]["ids"].is_array()) {
    std::vector<int64_t> ids;
    for (const json& id : specials[name]["ids"])
      ids.push_back(tokenIdFromJson(id, src + ": post_processor special token '" + textExcerpt(name) + "'"));
    return ids;
  }
  throw TokenizerError(src + ": post_processor names special token '" + name + "' without its ids");
}

// The template for a single sequence: special tokens before "$A" go to
// prefixIds, those after it to suffixIds.
void addPostProcessor(const json& post, BpeSpec& spec) {
  const std::string& src = spec.source;
  const std::string type = typeOf(post);
  auto idOf = [&](const json& pair) {  // ["</s>", 2]
    if (!pair.is_array() || pair.size() != 2)
      throw TokenizerError(src + ": malformed " + type + " token " + jsonExcerpt(pair));
    return tokenIdFromJson(pair[1], src + ": " + type + " token " + jsonExcerpt(pair[0]));
  };
  if (post.is_null() || type == "ByteLevel") return;  // ByteLevel only trims offsets
  if (type == "Sequence") {
    for (const auto& p : post.value("processors", json::array())) addPostProcessor(p, spec);
  } else if (type == "TemplateProcessing") {
    const json single = post.value("single", json());
    if (!single.is_array()) throw TokenizerError(src + ": TemplateProcessing without a 'single' template");
    bool sawSequence = false;
    for (const auto& item : single) {
      if (item.contains("Sequence")) {
        if (item["Sequence"].value("id", std::string("A")) != "A")
          throw TokenizerError(src + ": TemplateProcessing single template uses sequence " + jsonExcerpt(item));
        sawSequence = true;
      } else if (item.contains("SpecialToken") && item["SpecialToken"].contains("id")) {
        const auto ids = specialTokenIds(post, item["SpecialToken"]["id"].get<std::string>(), src);
        auto& target = sawSequence ? spec.suffixIds : spec.prefixIds;
        target.insert(target.end(), ids.begin(), ids.end());
      } else {
        throw TokenizerError(src + ": unsupported TemplateProcessing item " + jsonExcerpt(item));
      }
    }
  } else if (type == "RobertaProcessing" || type == "BertProcessing") {
    spec.prefixIds.push_back(idOf(post.value("cls", json())));
    spec.suffixIds.push_back(idOf(post.value("sep", json())));
  } else {
    throw TokenizerError(src + ": unsupported post_processor '" + (type.empty() ? jsonExcerpt(post) : type) +
                         "' (supported: TemplateProcessing, RobertaProcessing, BertProcessing, ByteLevel, Sequence)");
  }
}

void readModel(const json& model, BpeSpec& spec) {
  const std::string& src = spec.source;
  const std::string modelType = model.value("type", std::string("BPE"));
  if (modelType != "BPE")
    throw TokenizerError(src + ": unsupported tokenizer model type '" + modelType + "' (only BPE is supported)");
  if (!model.contains("vocab") || !model["vocab"].is_object())
    throw TokenizerError(src + ": model.vocab missing or not an object");
  if (!model.contains("merges") || !model["merges"].is_array())
    throw TokenizerError(src + ": model.merges missing or not a list");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(affix) && model[affix].is_string() && !model[affix].get<std::string>().empty())
      throw TokenizerError(src + ": BPE " + affix + " is not supported");
  try {
    for (const auto& [token, id] : model["vocab"].items())
      spec.vocab.emplace(token, tokenIdFromJson(id, src + ": vocab id of '" + textExcerpt(token) + "'"));
    for (const auto& m : model["merges"]) spec.merges.push_back(parseMerge(m, src));
    spec.ignoreMerges = model.value("ignore_merges", false);
    spec.byteFallback = model.value("byte_fallback", false);
    spec.fuseUnk = model.value("fuse_unk", false);
    if (model.contains("unk_token") && model["unk_token"].is_string())
      spec.unkToken = model["unk_token"].get<std::string>();
  } catch (const json::exception& e) {
    throw TokenizerError(src + ": malformed vocab or merges: " + e.what());
  }
}

std::unique_ptr<Tokenizer> tokenizerFromJson(const json& j, const std::string& source) {
  BpeSpec spec;
  spec.source = source;
  const std::string& src = spec.source;
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object())
    throw TokenizerError(src + ": no \"model\" object");
  readModel(j["model"], spec);
  try {
    if (j.contains("added_tokens") && j["added_tokens"].is_array())
      for (const auto& t : j["added_tokens"])
        spec.addedTokens.emplace_back(t.at("content").get<std::string>(),
                                      tokenIdFromJson(t.at("id"), src + ": added token id"));
  } catch (const json::exception& e) {
    throw TokenizerError(src + ": malformed added_tokens: " + e.what());
  }
  spec.normalizer = Normalizer::fromJson(j.value("normalizer", json()), src);

  bool sawByteLevel = false;
  const json pre = j.value("pre_tokenizer", json());
  if (!pre.is_null()) addPreTokenizer(pre, spec, sawByteLevel);
  spec.byteLevel = sawByteLevel;
  if (sawByteLevel && spec.metaspace)
    throw TokenizerError(src + ": pre_tokenizer mixes ByteLevel and Metaspace");
  if (!sawByteLevel && !spec.preTokenizer.empty())
    throw TokenizerError(src + ": a Split or Digits pre-tokenizer without ByteLevel is not supported");
  addPostProcessor(j.value("post_processor", json()), spec);

  auto tokenizer = std::make_unique<BpeTokenizer>(std::move(spec));
  chooseDefaultEos(*tokenizer);
  return tokenizer;
}

}  // namespace

std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path& path) {
  const json j = readTokenizerJsonFile(path);
  // A field of the wrong JSON type that no check above names (a model "type"
  // that is a list: found by fuzz_tokenizer_json) is the library's type_error;
  // it is still this file's fault, reported in words like the rest.
  try {
    return tokenizerFromJson(j, path.string());
  } catch (const json::exception& e) {
    throw TokenizerError(path.string() + ": malformed tokenizer.json: " + e.what());
  }
}

}  // namespace plab
