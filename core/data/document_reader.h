#pragma once
// Reads the documents of a training data set. A .jsonl file holds one JSON
// object per line (blank lines skipped) whose text field is one document;
// any other file is a single document (blank lines inside are ordinary
// text, not document breaks). An empty path means the embedded default
// corpus (one document).
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "data/data_config.h"

namespace plab {

// Called for each document: begin, text any number of times (the pieces
// concatenated are the document), end.
struct DocumentCallbacks {
  std::function<void()> begin;
  std::function<void(std::string_view)> text;
  std::function<void()> end;
};

// Streams the documents without holding the file: a plain-text file (and the
// default corpus) arrives in pieces of at most chunkBytes; a JSONL line is
// read and parsed whole. Throws DataError naming the file (and file:line for
// bad JSONL lines), possibly after earlier documents were delivered.
void streamDocuments(const DataConfig& config, const DocumentCallbacks& callbacks,
                     std::size_t chunkBytes = std::size_t(256) << 10);

// All documents in memory (for small files: the GUI's check of a picked file).
std::vector<std::string> readDocuments(const DataConfig& config);

}  // namespace plab
