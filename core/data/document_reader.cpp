#include "data/document_reader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

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

void streamJsonl(std::istream& in, const DataConfig& config, const DocumentCallbacks& callbacks) {
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
    callbacks.begin();
    callbacks.text(j[config.text_field].get_ref<const std::string&>());
    callbacks.end();
  }
  if (in.bad()) throw DataError("cannot read data file " + config.path);
}

void streamPlainText(std::istream& in, const DataConfig& config, const DocumentCallbacks& callbacks,
                     std::size_t chunkBytes) {
  std::string chunk(chunkBytes, '\0');
  callbacks.begin();
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    if (in.gcount() > 0) callbacks.text(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) throw DataError("cannot read data file " + config.path);
  callbacks.end();
}

}  // namespace

void streamDocuments(const DataConfig& config, const DocumentCallbacks& callbacks, std::size_t chunkBytes) {
  chunkBytes = std::max<std::size_t>(chunkBytes, 1);
  if (config.path.empty()) {
    const std::string_view corpus = embeddedResource("data/corpus.txt");
    callbacks.begin();
    for (std::size_t pos = 0; pos < corpus.size(); pos += chunkBytes) callbacks.text(corpus.substr(pos, chunkBytes));
    callbacks.end();
    return;
  }
  std::ifstream in(config.path, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(config.path, ec))
    throw DataError("cannot read data file " + config.path);
  if (isJsonl(config.path))
    streamJsonl(in, config, callbacks);
  else
    streamPlainText(in, config, callbacks, chunkBytes);
}

std::vector<std::string> readDocuments(const DataConfig& config) {
  std::vector<std::string> docs;
  DocumentCallbacks collect;
  collect.begin = [&] { docs.emplace_back(); };
  collect.text = [&](std::string_view text) { docs.back().append(text); };
  collect.end = [] {};
  streamDocuments(config, collect);
  return docs;
}

}  // namespace plab
