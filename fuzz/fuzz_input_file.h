#pragma once
// Fuzz inputs reach the parsers the way users' files do: through a file on
// disk (the entry points take paths).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace plab::fuzz {

// This process's scratch folder in /tmp, created on first use and removed
// with everything in it when the process exits.
inline const std::filesystem::path& scratchFolder() {
  struct Owned {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("plab-fuzz-" + std::to_string(::getpid()));
    Owned() { std::filesystem::create_directories(dir); }
    ~Owned() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static const Owned owned;
  return owned.dir;
}

// A per-process scratch file, rewritten for every input.
inline std::filesystem::path writeInput(const uint8_t* data, size_t size, const std::string& name) {
  const std::filesystem::path file = scratchFolder() / name;
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                 static_cast<std::streamsize>(size));
  return file;
}

}  // namespace plab::fuzz
