#pragma once
// Reads the documents of a training data set. A .jsonl file holds one JSON
// object per line (blank lines skipped) whose text field is one document;
// any other file is read whole as a single document (blank lines inside are
// ordinary text, not document breaks). An empty path means the embedded
// default corpus (one document).
#include <string>
#include <vector>

#include "data/data_config.h"

namespace plab {

// Throws DataError naming the file (and file:line for bad JSONL lines).
std::vector<std::string> readDocuments(const DataConfig& config);

}  // namespace plab
