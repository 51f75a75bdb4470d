#pragma once
// Limits on JSON read from files and servers. Parsing is iterative, but
// copying, comparing and dumping a value recurse once per level: 80 000
// levels of '[' overflowed the stack. Documents are checked for nesting
// before they are parsed, and error messages show a short excerpt of a bad
// value, never the whole of it.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace plab {

// Deeper than any config.json, tokenizer.json, safetensors header or run
// config in the wild (they stay under 10).
inline constexpr int kMaxJsonDepth = 64;

// "" when text nests at most kMaxJsonDepth arrays/objects, else a sentence
// saying where it goes deeper (for the caller's error type).
std::string jsonNestingProblem(std::string_view text);

// value.dump() cut to maxChars with "...", control and non-ASCII bytes
// escaped: safe to put in an error message.
std::string jsonExcerpt(const nlohmann::json& value, size_t maxChars = 60);

// The same for raw text (names, file contents).
std::string textExcerpt(std::string_view text, size_t maxChars = 60);

// A parser error in words, without the library's "[json.exception...]" tag:
// "number 1e999 is beyond the range of a double (about 1.8e308)", or the parse
// error's own sentence; at most 200 characters, control bytes escaped.
std::string jsonErrorText(const nlohmann::json::exception& e);

// Where in `text` parsing stops with an error: the field's path as a user
// writes it ("adamw.lr", "runs[2].steps"), "" at the top level or when the
// text parses. A second pass over the text, run only once parsing failed.
std::string jsonPathAtError(std::string_view text);

// jsonErrorText naming the field: "number 1e999 in 'adamw.lr' is beyond the
// range of a double (about 1.8e308)", or the parse error's sentence followed
// by "(in 'adamw')".
std::string jsonErrorText(const nlohmann::json::exception& e, std::string_view text);

// The path of the first key given twice in one object ("'a.b'" style, without
// quotes), or "" when none is: the parser keeps the last silently, so a file
// whose format forbids it (a safetensors header, a run config) is refused.
// The text must be valid JSON within the nesting cap.
std::string jsonDuplicateKey(std::string_view text);

}  // namespace plab
