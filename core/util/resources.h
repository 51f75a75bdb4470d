#pragma once
// Files compiled into the binary (see resources/CMakeLists.txt).
#include <string>
#include <string_view>
#include <vector>

namespace plab {

// Contents of an embedded file, e.g. "models/tiny-gpt2/config.json" or
// "data/corpus.txt". Throws plab::Error if the name is unknown.
std::string_view embeddedResource(std::string_view name);
bool hasEmbeddedResource(std::string_view name);
std::vector<std::string> embeddedResourceNames();

}  // namespace plab
