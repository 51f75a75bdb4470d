#pragma once
// The gradients of the fp16 modes between backward and the optimizer step:
// their zero and flush shares, and in fp16-mixed the loss scaler's unscale
// and skip decision (torch.amp.GradScaler.unscale_). Out of the trainer so
// that its step loop reads as the recipe.
#include <vector>

#include "precision/loss_scale/dynamic_loss_scale.h"
#include "precision/precision_adamw.h"
#include "train/step_metrics.h"

namespace plab {

// The fp16 modes, after the gradients are summed: the shares of
// LayerFp16GradMetrics; in fp16-mixed also GradScaler.unscale_ on fp32
// copies of the gradients, which replace the fp16 ones (the optimizer
// steps its fp32 master with them). Returns whether the step is skipped.
// PLAB_TEST_DUMP_SCALED_GRADS=DIR (tests/reference/grad_scaler_vs_torch.py)
// writes each step's gradients as autograd handed them over ("scaled/")
// and unscaled ("unscaled/") to DIR/step-N.safetensors.
// scaler: fp16-mixed's, or nullptr (fp16: shares only, never skips).
bool prepareFp16Gradients(const std::vector<TrainableParam>& params, DynamicLossScale* scaler, StepMetrics& m);

}  // namespace plab
