#pragma once
#include <cstdlib>
#include <string>

namespace plab {

// The value of an environment variable, "" when unset.
inline std::string envOrEmpty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace plab
