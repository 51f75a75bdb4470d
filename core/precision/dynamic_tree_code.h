#pragma once
// The dynamic-tree code tables of the 8-bit moment store
// (kernels/dynamic_tree_8bit.h), built as torchao's create_dynamic_map
// builds them (torchao/optim/quant_utils.py, after bitsandbytes): for
// exponent i = 0..6, the midpoints of torch.linspace(0.1, 1, k_i) in fp32
// times 10^(i - 6) (and their negatives when signed), with k_i = 2^i + 1
// (signed) or 2^(i+1) + 1 (unsigned), plus 0 and 1, sorted: 256 values.
// Built with the same torch ops, so that the table is torchao's bit for bit
// on the same machine (torch's vectorised linspace rounds some points
// differently from its scalar formula, so the values depend on torch's CPU
// kernels; the reference test compares them).
#include <torch/torch.h>

namespace plab {

// 256 sorted fp32 values on the CPU; signed for m, unsigned for v. Built once.
const torch::Tensor& dynamicTreeCode(bool isSigned);

// The 4-bit store's 16 sorted fp32 values (kernels/dynamic_tree_4bit.h), as
// torchao's OptimState4bit builds them: signed (m) create_dynamic_map(True,
// 3, 4), the same construction with 3 decades; unsigned (v)
// torch.linspace(0, 1, 17)[1:]. Built once.
const torch::Tensor& dynamicTree4Code(bool isSigned);

// uint8, kernels::kDynamicTreeBuckets entries: the binary search's code for
// the lowest value of each bucket of q (kernels/dynamic_tree_8bit.h,
// dynamicTreeLookup). Built once from dynamicTreeCode(isSigned).
const torch::Tensor& dynamicTreeStarts(bool isSigned);

// The threshold form of the same code (kernels::dynamicTreeCodeByThresholds,
// dynamic_tree_thresholds.h): kernels::kDynamicTreeThresholds fp32
// thresholds, and the code of each bucket's lowest value (uint8,
// kernels::kDynamicTreeBuckets). Built once from the two above.
const torch::Tensor& dynamicTreeThresholds(bool isSigned);
const torch::Tensor& dynamicTreeCodeStarts(bool isSigned);

// The 4-bit code's thresholds (kernels::kDynamicTree4Thresholds fp32,
// dynamicTree4ThresholdsOf in dynamic_tree_thresholds.h), what the AVX-512
// loop searches. Built once from dynamicTree4Code(isSigned).
const torch::Tensor& dynamicTree4Thresholds(bool isSigned);

}  // namespace plab
