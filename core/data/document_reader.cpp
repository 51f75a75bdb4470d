#include "data/document_reader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/errors.h"
#include "util/json_limits.h"
#include "util/resources.h"

namespace plab {

namespace {

bool isJsonl(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".jsonl";
}

std::vector<std::string> readJsonl(std::istream& in, const DataConfig& config) {
  std::vector<std::string> docs;
  std::string line;
  for (std::size_t lineNo = 1; std::getline(in, line); ++lineNo) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = config.path + ":" + std::to_string(lineNo);
    if (const std::string nesting = jsonNestingProblem(line); !nesting.empty())
      throw DataError(where + ": " + nesting);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw DataError(where + ": not valid JSON (" + textExcerpt(e.what(), 200) + ")");
    }
    if (!j.is_object() || !j.contains(config.text_field) || !j[config.text_field].is_string())
      throw DataError(where + ": no string field '" + config.text_field + "'");
    docs.push_back(j[config.text_field].get<std::string>());
  }
  return docs;
}

}  // namespace

std::vector<std::string> readDocuments(const DataConfig& config) {
  if (config.path.empty()) return {std::string(embeddedResource("data/corpus.txt"))};
  std::ifstream in(config.path, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(config.path, ec))
    throw DataError("cannot read data file " + config.path);
  if (isJsonl(config.path)) return readJsonl(in, config);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return {buffer.str()};
}

}  // namespace plab
