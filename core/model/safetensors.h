#pragma once
// safetensors reader (memory-mapped, bounds-checked) and writer.
// Format: 8-byte little-endian header length N, N bytes of JSON
// {name: {dtype, shape, data_offsets:[begin,end]}, "__metadata__": {...}},
// then the data buffer.
#include <torch/torch.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace plab {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;            // "F32", "F16", "BF16", ... as in the file
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets within the data buffer
};

class SafetensorsFile {
 public:
  // Validates the whole header: length within the file, valid JSON, known
  // dtypes (F32/F16/BF16/F64/I64/I32/I16/I8/U8/BOOL), offsets inside the
  // buffer, sizes matching shape*dtype, no overlapping ranges. Throws
  // SafetensorsError naming the file (and tensor).
  explicit SafetensorsFile(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::filesystem::path& path() const;
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const;
  const SafetensorsEntry& entry(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const;
  // A copy of the tensor in its stored dtype (CPU).
  torch::Tensor load(const std::string& name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads model.safetensors or every shard listed in
// model.safetensors.index.json in a model folder.
class SafetensorsCheckpoint {
 public:
  explicit SafetensorsCheckpoint(const std::filesystem::path& modelDir);
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const;
  torch::Tensor load(const std::string& name) const;
  std::vector<std::filesystem::path> files() const;

 private:
  std::vector<std::shared_ptr<SafetensorsFile>> files_;
  std::map<std::string, std::shared_ptr<SafetensorsFile>> byName_;
};

// Writes tensors (contiguous copies, any supported dtype) to path via a
// temporary file + rename. Throws IoError on write failure (disk full).
void writeSafetensors(const std::filesystem::path& path,
                      const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

}  // namespace plab
