#pragma once
// The windowed "update lost" measurement of one parameter: over K steps,
// what reached the compute weights (w_t - w_(t-K)) against the sum of the
// intended updates. Tracks every element of tensors up to maxTracked
// elements and an evenly strided sample of larger ones, in fp64 so that the
// fp32 reference reads exactly zero.
#include <torch/torch.h>

#include <cstdint>

namespace plab {

class UpdateWindow {
 public:
  bool started() const { return start_.defined(); }
  // Opens a window at the compute weights (any float dtype) before its first step.
  void begin(const torch::Tensor& weights, int64_t maxTracked);
  void add(const torch::Tensor& intended);
  // The tracked elements of a tensor of the parameter's shape (a strided
  // view), and add() for an intended update given on them only.
  torch::Tensor sample(const torch::Tensor& t) const { return tracked(t); }
  void addSampled(const torch::Tensor& intendedSample);
  // Closes the window at the current compute weights (any float dtype):
  // returns a small fp64 tensor [<arrived - intended, intended>,
  // ||intended||^2, ||arrived - intended||^2, tracked elements] on the
  // param's device. (The residual form makes exact arrival read exactly 0.)
  torch::Tensor close(const torch::Tensor& weights);
  // For the fused kernels, which add the intended update of every stride-th
  // element (index / stride) themselves: the fp64 sum and the stride.
  const torch::Tensor& intendedSum() const { return intendedSum_; }
  int64_t stride() const { return stride_; }
  // Bytes a window over a tensor of `numel` elements holds.
  static int64_t bytesFor(int64_t numel, int64_t maxTracked);

 private:
  static int64_t strideFor(int64_t numel, int64_t maxTracked);
  torch::Tensor tracked(const torch::Tensor& t) const;
  int64_t stride_ = 1;
  torch::Tensor start_, intendedSum_;  // fp64, tracked elements
};

}  // namespace plab
