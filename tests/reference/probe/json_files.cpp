#include "json_files.h"

#include <fstream>
#include <stdexcept>

namespace plab::probe {

nlohmann::json readJson(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot open");
  nlohmann::json value = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) throw std::runtime_error(path.string() + ": not valid JSON");
  return value;
}

void writeJson(const std::filesystem::path& path, const nlohmann::json& value) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << value.dump() << "\n";
  out.flush();
  if (!out) throw std::runtime_error(path.string() + ": write failed");
}

}  // namespace plab::probe
