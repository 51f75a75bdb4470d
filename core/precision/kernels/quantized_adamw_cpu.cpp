// The quantized-moment step's CPU entry point: splits the elements into
// fixed tasks of whole blocks, runs them on torch's thread pool with the
// variant for this CPU (quantized_adamw_cpu_loop.h, one per instruction
// set) and adds the tasks' sums in task order. All variants write the same
// bits and sums.
#include "precision/kernels/quantized_adamw_cpu.h"

#include <algorithm>
#include <vector>

#include "precision/kernels/dynamic_tree_4bit.h"
#include "precision/kernels/dynamic_tree_8bit.h"
#include "util/parallel_chunks.h"

namespace plab::kernels {
namespace {

constexpr int64_t kTask = 1 << 14;  // elements per parallel task: whole blocks, whole Philox groups
static_assert(kTask % kDynamicTreeBlock == 0 && kTask % kDynamicTree4Block == 0 && kTask % 8 == 0,
              "tasks hold whole blocks");

using Variant = void (*)(const QuantizedAdamWArgs&, int64_t, int64_t, StepSums*, MomentErrorSums*);

Variant variantOf(CpuKernel kernel) {
#ifdef PLAB_CPU_KERNEL_X86
  if (kernel == CpuKernel::Avx512) return quantizedAdamWCpuAvx512;
  if (kernel == CpuKernel::Avx2) return quantizedAdamWCpuAvx2;
#endif
  (void)kernel;
  return quantizedAdamWCpuBaseline;
}

}  // namespace

void quantizedAdamWCpu(const QuantizedAdamWArgs& a, StepSums* sums, MomentErrorSums* momentErrors) {
  static const CpuKernel best = availableCpuKernels().back();
  quantizedAdamWCpu(a, sums, momentErrors, best);
}

void quantizedAdamWCpu(const QuantizedAdamWArgs& a, StepSums* sums, MomentErrorSums* momentErrors, CpuKernel kernel) {
  const Variant variant = variantOf(kernel);
  const int64_t tasks = (a.n + kTask - 1) / kTask;
  std::vector<StepSums> partial(sums ? static_cast<size_t>(tasks) : 0);
  std::vector<MomentErrorSums> errors(momentErrors ? static_cast<size_t>(tasks) : 0);
  parallelChunks(tasks, 1, [&](int64_t first, int64_t last) {
    for (int64_t t = first; t < last; ++t) {
      const size_t k = static_cast<size_t>(t);
      variant(a, t * kTask, std::min(a.n, (t + 1) * kTask), sums ? &partial[k] : nullptr,
              momentErrors ? &errors[k] : nullptr);
    }
  });
  if (sums)
    for (const StepSums& p : partial) sums->add(p);
  if (momentErrors)
    for (const MomentErrorSums& e : errors) momentErrors->add(e);
}

}  // namespace plab::kernels
