#include "model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include "util/errors.h"
#include "util/file_names.h"
#include "util/json_file.h"
#include "util/json_limits.h"
#include "util/tool_files.h"

namespace plab {
namespace {

using nlohmann::json;

// The reference implementation refuses headers above 100 MB; so do we, so a
// corrupt length cannot make us allocate gigabytes.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DtypeInfo {
  const char* name;
  torch::ScalarType type;
  uint64_t size;
};

const DtypeInfo kDtypes[] = {
    {"F32", torch::kFloat32, 4}, {"F16", torch::kFloat16, 2}, {"BF16", torch::kBFloat16, 2},
    {"F64", torch::kFloat64, 8}, {"I64", torch::kInt64, 8},   {"I32", torch::kInt32, 4},
    {"I16", torch::kInt16, 2},   {"I8", torch::kInt8, 1},     {"U8", torch::kUInt8, 1},
    {"BOOL", torch::kBool, 1},
};

const DtypeInfo* dtypeByName(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

const DtypeInfo* dtypeByType(torch::ScalarType t) {
  for (const auto& d : kDtypes)
    if (t == d.type) return &d;
  return nullptr;
}

std::string safetensorsShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string errnoText() { return std::strerror(errno); }

}  // namespace

struct SafetensorsFile::Impl {
  std::filesystem::path path;
  const uint8_t* mapped = nullptr;
  size_t mappedSize = 0;
  const uint8_t* data = nullptr;  // start of the data buffer inside the mapping
  uint64_t dataSize = 0;
  std::map<std::string, SafetensorsEntry> entries;
  std::map<std::string, std::string> metadata;

  [[noreturn]] void fail(const std::string& what) const {
    throw SafetensorsError(path.string() + ": " + what);
  }
  [[noreturn]] void failTensor(const std::string& tensor, const std::string& what) const {
    throw SafetensorsError(path.string() + ": tensor '" + tensor + "': " + what);
  }

  void map() {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
    // below like every other non-regular file.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail("cannot open (" + errnoText() + ")");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const std::string err = errnoText();
      ::close(fd);
      fail("cannot stat (" + err + ")");
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      fail("not a regular file");
    }
    mappedSize = static_cast<size_t>(st.st_size);
    if (mappedSize < 8) {
      ::close(fd);
      fail("truncated file (" + std::to_string(mappedSize) + " bytes, the header length alone needs 8)");
    }
    void* p = ::mmap(nullptr, mappedSize, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) fail("cannot mmap (" + errnoText() + ")");
    mapped = static_cast<const uint8_t*>(p);
  }

  void parseHeader() {
    uint64_t headerLen = 0;
    for (int i = 7; i >= 0; --i) headerLen = (headerLen << 8) | mapped[i];  // little endian
    const uint64_t available = mappedSize - 8;
    if (headerLen > available)
      fail("header length " + std::to_string(headerLen) + " runs past the end of the file (" +
           std::to_string(mappedSize) + " bytes); the file is truncated or not safetensors");
    if (headerLen > kMaxHeaderBytes) fail("header length " + std::to_string(headerLen) + " exceeds 100 MB");
    data = mapped + 8 + headerLen;
    dataSize = available - headerLen;

    const std::string nesting =
        jsonNestingProblem(std::string_view(reinterpret_cast<const char*>(mapped + 8), headerLen));
    if (!nesting.empty()) fail("invalid JSON header: " + nesting);
    json header;
    try {
      header = json::parse(mapped + 8, mapped + 8 + headerLen);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
      fail("invalid JSON header: " + jsonErrorText(e));
    }
    if (!header.is_object()) fail("header is not a JSON object");
    // The parser keeps the last of two entries of one name: the format has
    // one entry per tensor, and a second is a forged or corrupt header.
    if (const std::string twice = jsonDuplicateKey(
            std::string_view(reinterpret_cast<const char*>(mapped + 8), headerLen));
        !twice.empty())
      fail("the header names '" + twice + "' twice (a tensor name may appear once)");

    for (const auto& [name, value] : header.items()) {
      if (name == "__metadata__") {
        if (!value.is_object()) fail("__metadata__ is not an object");
        for (const auto& [k, v] : value.items()) {
          if (!v.is_string()) fail("__metadata__ value of '" + k + "' is not a string");
          metadata[k] = v.get<std::string>();
        }
        continue;
      }
      entries[name] = parseEntry(name, value);
    }
    checkLayout();
  }

  SafetensorsEntry parseEntry(const std::string& name, const json& v) const {
    if (!v.is_object()) failTensor(name, "header entry is not an object");
    SafetensorsEntry e;
    e.name = name;
    if (!v.contains("dtype") || !v["dtype"].is_string()) failTensor(name, "missing or non-string 'dtype'");
    e.dtype = v["dtype"].get<std::string>();
    const DtypeInfo* info = dtypeByName(e.dtype);
    if (!info)
      failTensor(name, "unknown dtype '" + e.dtype + "' (supported: F32, F16, BF16, F64, I64, I32, I16, I8, U8, BOOL)");
    if (!v.contains("shape") || !v["shape"].is_array()) failTensor(name, "missing or non-array 'shape'");
    uint64_t numel = 1;
    for (const auto& d : v["shape"]) {
      if (!d.is_number_unsigned()) failTensor(name, "shape entry " + jsonExcerpt(d) + " is not a non-negative integer");
      const uint64_t dim = d.get<uint64_t>();
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          (dim != 0 && numel > std::numeric_limits<uint64_t>::max() / info->size / dim))
        failTensor(name, "shape " + jsonExcerpt(v["shape"]) + " is too large");
      numel *= dim;
      e.shape.push_back(static_cast<int64_t>(dim));
    }
    const auto& off = v.contains("data_offsets") ? v["data_offsets"] : json();
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      failTensor(name, "'data_offsets' must be [begin, end] with non-negative integers");
    e.begin = off[0].get<uint64_t>();
    e.end = off[1].get<uint64_t>();
    if (e.begin > e.end)
      failTensor(name, "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] are reversed");
    if (e.end > dataSize)
      failTensor(name, "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                           "] lie outside the data buffer of " + std::to_string(dataSize) +
                           " bytes (truncated file?)");
    const uint64_t expected = numel * info->size;
    if (e.end - e.begin != expected)
      failTensor(name, "byte size " + std::to_string(e.end - e.begin) + " does not match shape " +
                           safetensorsShapeText(e.shape) + " x " + e.dtype + " = " + std::to_string(expected) + " bytes");
    return e;
  }

  // The format's own rule (the reference reader's validate()): sorted by
  // offset, the tensors tile the data buffer from byte 0 to its end, with no
  // overlap, no gap and nothing after the last.
  void checkLayout() const {
    std::vector<const SafetensorsEntry*> sorted;
    for (const auto& [name, e] : entries) sorted.push_back(&e);
    std::sort(sorted.begin(), sorted.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
      return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
    });
    uint64_t covered = 0;
    const SafetensorsEntry* previous = nullptr;
    for (const SafetensorsEntry* e : sorted) {
      if (e->begin < covered)
        fail("tensors '" + (previous ? textExcerpt(previous->name) : std::string("?")) + "' and '" + textExcerpt(e->name) +
             "' have overlapping data_offsets");
      if (e->begin > covered)
        failTensor(e->name, "starts at byte " + std::to_string(e->begin) + " of the data buffer, but " +
                                (previous ? "tensor '" + textExcerpt(previous->name) + "' ends at byte "
                                          : std::string("the buffer begins at byte ")) +
                                std::to_string(covered) + ": the format leaves no gap between tensors");
      covered = e->end;
      if (e->end > e->begin) previous = e;
    }
    if (covered != dataSize)
      fail("the tensors end at byte " + std::to_string(covered) + " of a data buffer of " + std::to_string(dataSize) +
           " bytes: the file has " + std::to_string(dataSize - covered) +
           " bytes no tensor accounts for (the format allows none)");
  }

  ~Impl() {
    if (mapped) ::munmap(const_cast<uint8_t*>(mapped), mappedSize);
  }
};

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->map();
  impl_->parseHeader();
}

SafetensorsFile::~SafetensorsFile() = default;

const std::filesystem::path& SafetensorsFile::path() const { return impl_->path; }

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  for (const auto& kv : impl_->entries) out.push_back(kv.first);
  return out;
}

bool SafetensorsFile::contains(const std::string& name) const { return impl_->entries.count(name) > 0; }

const SafetensorsEntry& SafetensorsFile::entry(const std::string& name) const {
  auto it = impl_->entries.find(name);
  if (it == impl_->entries.end()) impl_->failTensor(name, "no such tensor");
  return it->second;
}

const std::map<std::string, std::string>& SafetensorsFile::metadata() const { return impl_->metadata; }

torch::Tensor SafetensorsFile::load(const std::string& name) const {
  const SafetensorsEntry& e = entry(name);
  const DtypeInfo* info = dtypeByName(e.dtype);
  torch::Tensor t = torch::empty(e.shape, torch::TensorOptions().dtype(info->type));
  if (e.end > e.begin) std::memcpy(t.data_ptr(), impl_->data + e.begin, e.end - e.begin);
  return t;
}

// ---------------------------------------------------------------------------

SafetensorsCheckpoint::SafetensorsCheckpoint(const std::filesystem::path& modelDir) {
  const auto index = modelDir / "model.safetensors.index.json";
  const auto single = modelDir / "model.safetensors";
  if (std::filesystem::exists(index)) {
    JsonFile read = readJsonFile(index);  // size-capped, regular files only
    if (!read.ok()) throw SafetensorsError(index.string() + ": " + read.problem);
    const json& j = read.value;
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      throw SafetensorsError(index.string() + ": missing 'weight_map' object");
    std::map<std::string, std::shared_ptr<SafetensorsFile>> shards;
    for (const auto& [tensor, file] : j["weight_map"].items()) {
      if (!file.is_string()) throw SafetensorsError(index.string() + ": weight_map entry of '" + tensor + "' is not a string");
      const std::string shardName = file.get<std::string>();
      // Shards live next to the index: no path may lead elsewhere.
      if (!isPlainFileName(shardName))
        throw SafetensorsError(index.string() + ": shard of tensor '" + tensor +
                               "' is not a file name in the model folder");
      auto it = shards.find(shardName);
      if (it == shards.end()) {
        const auto shardPath = modelDir / shardName;
        if (!std::filesystem::exists(shardPath))
          throw SafetensorsError(index.string() + ": shard '" + shardName + "' (holding tensor '" + tensor +
                                 "') is missing from " + modelDir.string());
        it = shards.emplace(shardName, std::make_shared<SafetensorsFile>(shardPath)).first;
        files_.push_back(it->second);
      }
      if (!it->second->contains(tensor))
        throw SafetensorsError(it->second->path().string() + ": tensor '" + tensor +
                               "' listed in model.safetensors.index.json is not in this shard");
      byName_[tensor] = it->second;
    }
  } else if (std::filesystem::exists(single)) {
    auto f = std::make_shared<SafetensorsFile>(single);
    files_.push_back(f);
    for (const auto& n : f->names()) byName_[n] = f;
  } else {
    throw SafetensorsError(modelDir.string() + ": neither model.safetensors nor model.safetensors.index.json found");
  }
}

std::vector<std::string> SafetensorsCheckpoint::names() const {
  std::vector<std::string> out;
  for (const auto& kv : byName_) out.push_back(kv.first);
  return out;
}

bool SafetensorsCheckpoint::contains(const std::string& name) const { return byName_.count(name) > 0; }

torch::Tensor SafetensorsCheckpoint::load(const std::string& name) const {
  auto it = byName_.find(name);
  if (it == byName_.end()) {
    const std::string where = files_.size() == 1 ? files_[0]->path().string() : "checkpoint";
    throw SafetensorsError(where + ": no tensor '" + name + "'");
  }
  return it->second->load(name);
}

std::vector<std::filesystem::path> SafetensorsCheckpoint::files() const {
  std::vector<std::filesystem::path> out;
  for (const auto& f : files_) out.push_back(f->path());
  return out;
}

// ---------------------------------------------------------------------------

void writeSafetensors(const std::filesystem::path& path,
                      const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  // Sorted by name like the reference implementation, contiguous CPU copies.
  std::map<std::string, torch::Tensor> sorted;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") throw SafetensorsError(path.string() + ": '__metadata__' is not a valid tensor name");
    if (!t.defined()) throw SafetensorsError(path.string() + ": tensor '" + name + "' is undefined");
    if (!dtypeByType(t.scalar_type()))
      throw SafetensorsError(path.string() + ": tensor '" + name + "' has unsupported dtype " +
                             std::string(c10::toString(t.scalar_type())));
    if (!sorted.emplace(name, t.detach().to(torch::kCPU).contiguous()).second)
      throw SafetensorsError(path.string() + ": duplicate tensor name '" + name + "'");
  }

  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : sorted) {
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * dtypeByType(t.scalar_type())->size;
    header[name] = {{"dtype", dtypeByType(t.scalar_type())->name},
                    {"shape", t.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string headerText = header.dump();
  // Pad with spaces so the data buffer starts 8-byte aligned.
  headerText.append((8 - headerText.size() % 8) % 8, ' ');

  // A run killed mid-write left its <file>.tmp.<pid>: the next write of the
  // same file clears it (util/tool_files.h).
  removeStaleTemporariesOf(path);
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw IoError(path.string() + ": cannot create " + tmp.string() + " (" + errnoText() + ")");
    uint8_t len[8];
    uint64_t n = headerText.size();
    for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(n >> (8 * i));
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(headerText.data(), static_cast<std::streamsize>(headerText.size()));
    for (const auto& [name, t] : sorted) {
      const auto bytes = static_cast<std::streamsize>(t.numel() * t.element_size());
      if (bytes > 0) out.write(static_cast<const char*>(t.data_ptr()), bytes);
      if (!out) break;
    }
    out.flush();
    const bool ok = static_cast<bool>(out);
    out.close();
    if (!ok || out.fail()) {
      const std::string err = errnoText();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw IoError(path.string() + ": write failed (" + err + "; disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw IoError(path.string() + ": cannot move " + tmp.string() + " into place (" + ec.message() + ")");
  }
}

}  // namespace plab
