#pragma once
// CPU buffers for the GEMM formats' quantized operands, kept from call to
// call. A bf16 layer's operands at 16 M parameters are up to 51 M elements
// (the tied head's output gradient), and a fresh buffer that size costs its
// page faults on every call: glibc hands such sizes straight to mmap, so a
// freed one goes back to the kernel. bench_quantize (1024 x 50,257 bf16, one
// thread) quantized an nvfp4 operand in 145 ms into a fresh buffer and 95 ms
// where glibc reused the memory (the same code, before the grid rounding).
//
// A freed buffer of at least kMinPooledBytes goes back to a pool instead,
// for the next request of the same size; the pool holds at most
// kMaxPooledBytes (a buffer beyond that is freed). What it holds is the
// process's memory all the same: a run with low-precision GEMMs keeps its
// operand buffers resident between steps (docs/formats.md).
#include <torch/torch.h>

#include <cstddef>

namespace plab {

constexpr std::size_t kMinPooledBytes = std::size_t(1) << 20;
constexpr std::size_t kMaxPooledBytes = std::size_t(1) << 30;

// torch::empty(sizes, dtype) on the CPU, from the pool where large enough.
torch::Tensor emptyOperandBuffer(at::IntArrayRef sizes, torch::ScalarType dtype);

// Bytes the pool holds now (free buffers waiting for a request); tests.
std::size_t pooledOperandBytes();

}  // namespace plab
