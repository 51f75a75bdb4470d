#pragma once
// Names read from files (shard indexes, server answers) that are joined to a
// folder must stay a single entry of that folder.
#include <string>

namespace plab {

// A single file name: no separator, not "." or "..", no NUL.
inline bool isPlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace plab
