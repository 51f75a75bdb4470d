// The quantized-moment step's CPU entry point: splits the elements into
// fixed tasks of whole blocks (cpu_blocks.h), runs them on torch's thread pool with the
// variant for this CPU (quantized_adamw_cpu_loop.h, one per instruction
// set) and adds the tasks' sums in task order. All variants write the same
// bits and sums.
#include "precision/kernels/quantized_adamw_cpu.h"

#include <vector>

#include "precision/kernels/cpu_blocks.h"
#include "precision/kernels/dynamic_tree_4bit.h"
#include "precision/kernels/dynamic_tree_8bit.h"

namespace plab::kernels {
namespace {

static_assert(kCpuBlock % kDynamicTreeBlock == 0 && kCpuBlock % kDynamicTree4Block == 0 && kCpuBlock % 8 == 0,
              "parallel tasks hold whole blocks and whole Philox groups");

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

void quantizedAdamWCpu(const QuantizedAdamWArgs& args, StepSums* sums, MomentErrorSums* momentErrors,
                       CpuKernel kernel) {
  const Variant variant = variantOf(kernel);
  // The thresholds in search order, once per call (256 or 16 floats each).
  QuantizedAdamWArgs a = args;
  alignas(64) float signedSearch[kDynamicTreeSearchOrder], unsignedSearch[kDynamicTreeSearchOrder];
  const bool eight = a.layout == MomentLayout::DynamicTree8bit, four = a.layout == MomentLayout::DynamicTree4bit;
  if ((eight || four) && a.signedThresholds && a.unsignedThresholds) {
    (eight ? thresholdSearchOrderOf<8> : thresholdSearchOrderOf<4>)(a.signedThresholds, signedSearch);
    (eight ? thresholdSearchOrderOf<8> : thresholdSearchOrderOf<4>)(a.unsignedThresholds, unsignedSearch);
    a.signedSearch = signedSearch;
    a.unsignedSearch = unsignedSearch;
  }
  std::vector<StepSums> partial(sums ? cpuBlockCount(a.n) : 0);
  std::vector<MomentErrorSums> errors(momentErrors ? cpuBlockCount(a.n) : 0);
  forEachCpuBlock(a.n, [&](int64_t begin, int64_t end, size_t k) {
    variant(a, begin, end, sums ? &partial[k] : nullptr, momentErrors ? &errors[k] : nullptr);
  });
  if (sums)
    for (const StepSums& p : partial) sums->add(p);
  if (momentErrors)
    for (const MomentErrorSums& e : errors) momentErrors->add(e);
}

}  // namespace plab::kernels
