#pragma once
// The vocabulary of the small byte-level BPE tokenizer.json files the
// tokenizer and dataset tests build: the 256 bytes (id == byte value, in
// GPT-2's byte spelling), then the result of each merge in order from 256
// (a result already in it keeps its first id).
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace plab::test {

nlohmann::json byteLevelVocab(const std::vector<std::pair<std::string, std::string>>& merges);

// A merge as tokenizer.json writes it: "a b" in the byte spelling.
std::string byteLevelMerge(const std::string& a, const std::string& b);

}  // namespace plab::test
