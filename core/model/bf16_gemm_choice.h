#pragma once
// Which CPU path the bf16 matrix products take (model/bf16_linear.h), chosen
// by measurement as cuDNN's benchmark mode chooses its algorithms: at a
// run's start, the model's bf16 products (forward and both backward
// products of each distinct weight shape, at the run's rows per
// micro-batch) are timed on the native bf16 kernels and on the upcast path,
// interleaved, and the faster is kept; fp32 kernels on the same shapes are
// timed beside them as the fp32 layers' reference. Measured, not taken
// from CPUID alone: on an AVX512-BF16 Xeon without AMX the native kernels
// ran slower than fp32 (issue 39), and ONEDNN_MAX_CPU_ISA can take them away.
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/bf16_linear.h"

namespace plab {

// One bf16 product y[rows, out] = x[rows, in] · W^T, `count` times a step.
struct Bf16GemmShape {
  int64_t rows = 0, in = 0, out = 0;
  bool transposedWeight = false;  // GPT-2's Conv1D multiplies by a transposed [in, out] view
  int64_t count = 0;
};

// The bf16 products of `model` (Linear and Conv1D layers with bf16 weights
// on the CPU, and a tied head on a bf16 embedding), one entry per distinct
// shape, at `rows` rows (batch x sequence length).
std::vector<Bf16GemmShape> bf16GemmShapes(torch::nn::Module& model, int64_t rows);

struct Bf16GemmMeasurement {
  // Estimated GFLOP/s over one step's bf16 products (forward and both
  // backward products), each shape weighted by its count; 0: not measured.
  double nativeGflops = 0, upcastGflops = 0, fp32Gflops = 0;
  int64_t shapes = 0;  // distinct shapes timed
  int rounds = 0;      // interleaved rounds timed (after one warm-up call each); each shape's fastest counts
  int threads = 0;     // intra-op threads it ran with
  double seconds = 0;  // what the measurement cost, wall clock
  bool measured() const { return shapes > 0 && nativeGflops > 0 && upcastGflops > 0; }
};

// Times the shapes on each path with the current intra-op threads. A shape
// whose step would cost more than a few hundred MFLOP is timed on a slice of
// its output features (the same rows and reduction length), scaled back by
// its FLOPs. Each shape counts its fastest call of the rounds (load on a
// shared machine only adds time). Stops after two rounds when one bf16 path
// is more than 3x slower than the other (a CPU without native bf16
// instructions).
Bf16GemmMeasurement measureBf16GemmPaths(const std::vector<Bf16GemmShape>& shapes);

// The faster bf16 path of a measurement; `incumbent` (the CPUID choice)
// stays unless the other is more than 5 % faster, so that timing noise on a
// shared machine does not flip the products' summation order between runs
// where the two are on par.
Bf16GemmPath fasterBf16GemmPath(const Bf16GemmMeasurement& m, Bf16GemmPath incumbent);

// "native 95.1, upcast 41.2, fp32 40.8 GFLOP/s over 5 shapes, fastest of 5 rounds, 1 thread, 0.84 s"
std::string describeBf16GemmMeasurement(const Bf16GemmMeasurement& m);

struct Bf16GemmChoice {
  Bf16GemmPath path = Bf16GemmPath::Native;
  Bf16GemmMeasurement measurement;
  bool measuredEarlier = false;  // this process measured the same shapes and threads before
};

// Sets the CPU bf16 path for a run on these shapes from their measurement,
// unless the path is forced (PLAB_BF16_GEMM, setCpuBf16GemmPath, a
// reproducible run: nothing measured, nothing returned). One measurement per
// process for each set of shapes and intra-op thread count: a later run on
// the same shapes (a repeat, a resumed run) reuses its choice, so that runs
// of one process multiply in the same order.
std::optional<Bf16GemmChoice> chooseCpuBf16GemmPath(const std::vector<Bf16GemmShape>& shapes);

}  // namespace plab
