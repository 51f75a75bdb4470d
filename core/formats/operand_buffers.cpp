#include "formats/operand_buffers.h"

#include <c10/core/impl/alloc_cpu.h>

#include <map>
#include <mutex>

namespace plab {
namespace {

class Pool {
 public:
  void* take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(bytes);
      if (it != free_.end()) {
        void* p = it->second;
        free_.erase(it);
        held_ -= bytes;
        return p;
      }
    }
    return c10::alloc_cpu(bytes);
  }

  void give(void* p, std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (held_ + bytes <= kMaxPooledBytes) {
        free_.emplace(bytes, p);
        held_ += bytes;
        return;
      }
    }
    c10::free_cpu(p);
  }

  std::size_t held() {
    std::lock_guard<std::mutex> lock(mutex_);
    return held_;
  }

 private:
  std::mutex mutex_;
  std::multimap<std::size_t, void*> free_;
  std::size_t held_ = 0;
};

// Never destroyed: tensors freed during exit still find it.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

}  // namespace

torch::Tensor emptyOperandBuffer(at::IntArrayRef sizes, torch::ScalarType dtype) {
  const auto options = torch::TensorOptions().dtype(dtype).device(torch::kCPU);
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const std::size_t bytes = static_cast<std::size_t>(numel) * c10::elementSize(dtype);
  if (bytes < kMinPooledBytes) return torch::empty(sizes, options);
  void* data = pool().take(bytes);
  return torch::from_blob(
      data, sizes, [bytes](void* p) { pool().give(p, bytes); }, options);
}

std::size_t pooledOperandBytes() { return pool().held(); }

}  // namespace plab
