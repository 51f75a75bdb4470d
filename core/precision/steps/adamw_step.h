#pragma once
// The step contract: one AdamW step of one parameter, one function per write
// rule, written as tensor ops: the readable reference semantics.
//
// The fused kernels (precision/kernels/) are the fast form of the bf16 write
// rules and of "mixed": one pass per element, their CPU and CUDA twins bit
// for bit equal to each other and to these functions run on the CPU, on
// every step: both round each operation of the element's arithmetic once, in
// the same order (elementOrderAdamwInPlace), and draw the same random bits
// (Philox). test_fused_kernels holds them to that.
//
// Every function updates the tensors in place. The bf16 write rules and
// mixed, when `before32` is defined (the fp32 value of the weights the model
// computes with, taken just before the step), return the intended update: the change an fp32 weight
// would receive from the same step, i.e. fp32(before + u) - before, with u
// the AdamW update computed in fp32 from the step's inputs. It is returned
// in fp64, where that difference of two fp32 values is exact, so that fp32's
// own change equals its intended update exactly. The update statistics
// compare it with what the compute weights really received. fp32 and bf16,
// torch's own operations, return nothing: PrecisionAdamW takes their
// intended update from fp32IntendedWeights (fp32: the new weights).
#include <torch/torch.h>

#include <cstdint>
#include <functional>

#include "precision/kernels/fused_adamw.h"
#include "precision/kernels/quantized_adamw.h"
#include "precision/kernels/torch_forloop_bf16.h"
#include "precision/optimizer_mode.h"

namespace plab::steps {

struct StepScalars {
  double lr = 0, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0;
  int64_t step = 1;  // 1-based count of this parameter's steps
  double biasCorrection1() const;
  double biasCorrection2() const;
};

struct ParamState {
  torch::Tensor param;   // as stored in the model (fp32 or bf16); updated in place
  torch::Tensor grad;    // param's gradient, same dtype as param
  torch::Tensor m, v;    // AdamW moments (fp32, or bf16; "8bit": uint8 codes or the param's dtype; "4bit": packed, flat)
  torch::Tensor mScale, vScale;  // "8bit" / "4bit" quantized moments: fp32, one per block
  torch::Tensor master;  // mixed mode: fp32 master weights
  torch::Tensor comp;    // Kahan mode: bf16 compensation buffer
};

// Python's torch.optim.AdamW (torch/optim/adam.py, _single_tensor_adam with
// decoupled decay; its foreach form gives the same bits) in place on w, m and
// v in the tensors' own dtypes: m by lerp_, Python floats as wrapped numbers,
// bias correction 2 to the power 0.5. What `fp32` and `bf16` step with.
void torchOptimAdamwInPlace(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                            const torch::Tensor& v, const StepScalars& s);

// The same step in the fused kernels' arithmetic (kernels/adamw_element.h:
// torch::optim::AdamW's C++ order, m = beta1 m + (1 - beta1) g, but the
// update -step * (m / denom) where its addcdiv_ takes (-step * m) / denom),
// every operation rounded once: the tensor-op reference of the fused modes
// (adamw.kernels = "reference"), bit for bit equal to them.
void elementOrderAdamwInPlace(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                              const torch::Tensor& v, const StepScalars& s);

// after - before in fp64: exact for any two fp32 (or bf16) values.
torch::Tensor exactDifference(const torch::Tensor& after, const torch::Tensor& before);

// The step's statistics terms [intended non-zero, rounded away,
// ||intended||^2, ||stored change||^2, numel] in fp64 on the tensors' device
// (the change taken in fp64 too, so fp32's reads exactly its intended update).
torch::Tensor stepTerms(const torch::Tensor& intended, const torch::Tensor& before32, const torch::Tensor& after32);

// stepTerms from fp32 copies of the weights before the step, of what fp32
// arithmetic intended (fp32(before + u)) and after the step: one pass on the
// CPU (kernels/change_sums_cpu.h), no fp64 tensor of the weights' size.
// For fp32 weights intendedAfter is after.
torch::Tensor stepTermsOnePass(const torch::Tensor& before, const torch::Tensor& intendedAfter,
                               const torch::Tensor& after);

// The intended update of weights w from gradient and moments (any dtype,
// any view; none is modified): what fp32 AdamW arithmetic on copies makes
// of them, as fp32(w + u) - w in fp64; fp32IntendedWeights returns fp32(w + u).
torch::Tensor fp32Intended(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                           const torch::Tensor& v, const StepScalars& s);
torch::Tensor fp32IntendedWeights(const torch::Tensor& w, const torch::Tensor& grad, const torch::Tensor& m,
                                  const torch::Tensor& v, const StepScalars& s);

// "fp32" (and fp32 layers of every mode): Python's torch.optim.AdamW on fp32
// state. Its intended update is its own change.
void fp32Step(ParamState& p, const StepScalars& s);

// "bf16": Python's torch.optim.AdamW on bf16 param, grad and moments (what
// model.to(torch.bfloat16) + AdamW does); every operation rounds to bf16. Its intended update is fp32Intended of the state
// read before the step. With `kernel` and where torchForloopBf16Runs(p), one
// pass per element (kernels/torch_forloop_bf16.h, the same bits); otherwise,
// and as the reference, torchOptimAdamwInPlace.
bool torchForloopBf16Runs(const ParamState& p);
// The kernel's fp32 scalars from s, as ATen converts Python's floats; false
// when one is beyond fp32's range (the tensor-op form runs then).
bool torchForloopBf16Scalars(const StepScalars& s, kernels::TorchForloopBf16Scalars& out);
void bf16PlainStep(ParamState& p, const StepScalars& s, bool kernel = true);

// bf16PlainStep, returning the intended update (fp32Intended) of the
// update window's elements, every windowStride-th of the flattened tensor
// (UpdateWindow::sample's): the kernel copies them as they were before the
// step during its pass, instead of strided reads of four tensors before it.
torch::Tensor bf16PlainStepWithSampledIntended(ParamState& p, const StepScalars& s, int64_t windowStride,
                                               bool kernel = true);

// bf16PlainStep with its statistics: the terms (stepTermsOnePass's, from the
// weights before the step, fp32IntendedWeights of the state before it and
// the weights after) and, with windowStride > 0, the exact intended update
// of the update window's elements (every windowStride-th element of the
// flattened tensor, UpdateWindow::sample's). On CPU tensors the fp32
// reference is taken a piece at a time (no fp32 copies of the tensor's
// size; the same bits with one intra-op thread); where the one-pass kernel
// runs, the step and the sums go the same piece at a time.
struct StepWithTerms {
  torch::Tensor terms, windowSample;  // windowSample: undefined without a window
};
StepWithTerms bf16PlainStepWithTerms(ParamState& p, const StepScalars& s, int64_t windowStride,
                                     bool kernel = true);

// "bf16-nearest", "bf16-kahan", "bf16-sr": the update is computed in fp32
// from upcast state; moments and weight are then written back with their
// rounding. random: the parameter's Philox stream (stochastic writes; the
// weight's bits from random.stream, m's from +1, v's from +2), the same bits
// the fused kernel draws.
enum class WeightWrite { Nearest, Kahan, Stochastic };
torch::Tensor bf16WriteStep(ParamState& p, const StepScalars& s, WeightWrite write, MomentPrecision moments,
                            const kernels::RandomStream& random, const torch::Tensor& before32);

// "mixed": fp32 AdamW on the master copy, then param = nearest(master).
torch::Tensor masterStep(ParamState& p, const StepScalars& s, const torch::Tensor& before32);

// The fused step of a bf16 parameter (rule Nearest, Kahan, Stochastic or
// Master). Runs when fusedStepRuns(p): param and grad bf16 and contiguous,
// on the CPU, or on CUDA in a build with the CUDA kernels.
struct FusedExtras {
  kernels::RandomStream random;  // as bf16WriteStep's
  torch::Tensor windowSum;       // fp64 on the param's device, or undefined (no window open)
  int64_t windowStride = 1;
  bool stats = false;
  // Quantized moments only: what storing them lost this step is added here
  // (kernels::MomentErrorSums); null: not measured.
  kernels::MomentErrorSums* momentErrors = nullptr;
};
bool fusedStepRuns(const ParamState& p);
// With extras.stats, returns the step's terms [intended non-zero, rounded
// away, ||intended||^2, ||stored change||^2, numel] (fp64, param's device).
torch::Tensor fusedStep(ParamState& p, const StepScalars& s, kernels::WeightRule rule, MomentPrecision moments,
                        const FusedExtras& extras);

// adamw.moments "8bit": torchao's AdamW8bit step (kernels/quantized_adamw.h)
// on an fp32 or bf16 parameter whose m and v are uint8 dynamic-tree codes
// with fp32 scales per block (mScale, vScale), or, for a tensor torchao
// would not quantize, plain tensors in the parameter's dtype. The bf16
// weight is written by `write`; fp32 weights as computed. Runs on the CPU
// (a CUDA parameter throws). Returns the step terms as fusedStep does.
// "4bit" likewise (torchao's AdamW4bit): m and v packed 4-bit codes, n / 2
// bytes, flat, with an fp32 scale per 128 elements; "fp8" (AdamWFp8): e4m3
// bytes (held as uint8) with a scale per 256. `store` says which.
bool quantizedMomentsQuantize(int64_t numel, MomentPrecision store);  // torchao's size rule
int64_t quantizedMomentsBlock(MomentPrecision store);                 // elements per scale
torch::Tensor quantizedMomentsStep(ParamState& p, const StepScalars& s, WeightWrite write, MomentPrecision store,
                                   const FusedExtras& extras);
// A moment as fp32 values of the parameter's shape (dequantized codes, or the plain tensor upcast).
torch::Tensor dequantizedMoment(const torch::Tensor& stored, const torch::Tensor& scale, bool isSigned,
                                MomentPrecision store, at::IntArrayRef shape);

// torch.optim.AdamW(fused=True)'s CPU step, bit for bit
// (precision/kernels/torch_fused_adamw.h): what "fp32" and "bf16" (and fp32
// layers of every mode) run when adamw.torch_step resolves to "fused". Runs when
// torchFusedStepRuns(p): param fp32 or bf16 on the CPU, grad and both
// moments of its dtype, all contiguous (grad is made so). With
// extras.stats returns fusedStep's terms; the intended update is the fp32
// result before it is stored (for fp32 weights: the change itself).
bool torchFusedStepRuns(const ParamState& p);
torch::Tensor torchFusedStep(ParamState& p, const StepScalars& s, const FusedExtras& extras);

}  // namespace plab::steps
