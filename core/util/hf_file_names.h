#pragma once
// The Hugging Face files besides config.json and the weights that a run
// copies into its checkpoints (train/hf_model_files.h): the tool's own files
// there, for --overwrite (util/tool_files.h).
namespace plab {

inline constexpr const char* kHfModelFileNames[] = {
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "vocab.json",     "merges.txt",            "tokenizer.model",         "chat_template.jinja",
    "generation_config.json"};

}  // namespace plab
