#pragma once
// The windowed "update lost" measurement of one parameter: over K steps,
// what reached the compute weights (w_t - w_(t-K)) and what waits in a Kahan
// compensation buffer for later, against the sum of the intended updates.
// Tracks every element of tensors up to maxTracked elements and an evenly
// strided sample of larger ones, in fp64 so that the fp32 reference reads
// exactly zero. The terms come per interleaved element group as well, for
// the figure's uncertainty (precision/update_stats.h).
#include <torch/torch.h>

#include <cstdint>

namespace plab {

// What holds the part of the intended update that has not reached the
// compute weights yet: nothing, a compensation buffer (Kahan: the buffer is
// that part) or a master copy (mixed: master - compute weights is that part).
enum class PendingHolder { None, Buffer, Master };

class UpdateWindow {
 public:
  bool started() const { return start_.defined(); }
  // Opens a window at the compute weights (any float dtype) before its first
  // step; `holder` is the Kahan buffer or the master copy (`holds` says
  // which), undefined in the other modes; `stochastic`: the weights are
  // written by stochastic rounding (adds its variance term).
  void begin(const torch::Tensor& weights, int64_t maxTracked, const torch::Tensor& holder = {},
             PendingHolder holds = PendingHolder::None, bool stochastic = false);
  void add(const torch::Tensor& intended);
  // The tracked elements of a tensor of the parameter's shape (a strided
  // view), and add() for an intended update given on them only.
  torch::Tensor sample(const torch::Tensor& t) const { return tracked(t); }
  void addSampled(const torch::Tensor& intendedSample);
  // Closes the window at the current compute weights (any float dtype) and
  // buffer: returns a small fp64 tensor of kWindowTerms terms
  // (precision/update_stats.h: addWindowTerms) on the param's device:
  // [<A + P - S, S>, ||S||^2, ||A - S||^2, tracked elements, <P, S>,
  //  <A + P - S, S> per group, ||S||^2 per group, sum S^2 |S| ulp (stochastic
  //  rounding only, else 0)]. (The residual form makes exact arrival read
  //  exactly 0.)
  torch::Tensor close(const torch::Tensor& weights, const torch::Tensor& holder = {});
  // For the fused kernels, which add the intended update of every stride-th
  // element (index / stride) themselves: the fp64 sum and the stride.
  const torch::Tensor& intendedSum() const { return intendedSum_; }
  int64_t stride() const { return stride_; }
  // Bytes a window over a tensor of `numel` elements holds.
  static int64_t bytesFor(int64_t numel, int64_t maxTracked, bool pending = false);
  // What is pending now on the tracked elements (fp64), undefined without a holder.
  torch::Tensor pendingNow(const torch::Tensor& weights, const torch::Tensor& holder) const;

 private:
  static int64_t strideFor(int64_t numel, int64_t maxTracked);
  torch::Tensor tracked(const torch::Tensor& t) const;
  int64_t stride_ = 1;
  bool stochastic_ = false;
  PendingHolder holds_ = PendingHolder::None;
  torch::Tensor start_, intendedSum_, pendingStart_;  // fp64, tracked elements
};

}  // namespace plab
