#include "util/resources.h"

#include <cstddef>
#include <cstring>

#include "util/errors.h"

namespace plab::detail {
struct EmbeddedFile {
  const char* name;
  const unsigned char* data;
  std::size_t size;
};
extern const EmbeddedFile kEmbeddedFiles[];
}  // namespace plab::detail

namespace plab {

namespace {
const detail::EmbeddedFile* find(std::string_view name) {
  for (const auto* f = detail::kEmbeddedFiles; f->name; ++f)
    if (name == f->name) return f;
  return nullptr;
}
}  // namespace

std::string_view embeddedResource(std::string_view name) {
  const auto* f = find(name);
  if (!f) throw Error("no embedded resource named '" + std::string(name) + "'");
  return {reinterpret_cast<const char*>(f->data), f->size};
}

bool hasEmbeddedResource(std::string_view name) { return find(name) != nullptr; }

std::vector<std::string> embeddedResourceNames() {
  std::vector<std::string> names;
  for (const auto* f = detail::kEmbeddedFiles; f->name; ++f) names.emplace_back(f->name);
  return names;
}

}  // namespace plab
