#include "train/fp16_gradients.h"

#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "model/safetensors.h"
#include "precision/fp16_counts.h"

namespace plab {
namespace fs = std::filesystem;
namespace {

// The fp16 modes' gradient shares of one step (step_metrics.h:
// LayerFp16GradMetrics), per layer in model order, and over all layers.
struct Fp16GradShares {
  std::vector<LayerFp16GradMetrics> layers;
  double zeroShare = 0;
  std::optional<double> flushShare;
};

// zeroCounts[i]: exact zeros of param i's fp16 gradient (as autograd handed
// it over); flush (fp16-mixed): fp16WriteCounts of its unscaled fp32 gradient.
Fp16GradShares fp16GradShares(const std::vector<TrainableParam>& params, const std::vector<int64_t>& zeroCounts,
                              const std::vector<Fp16WriteCounts>& flush) {
  Fp16GradShares out;
  std::vector<int64_t> zeros, elements;
  std::vector<Fp16WriteCounts> flushed;
  std::vector<std::string> names;
  Fp16WriteCounts flushTotal;
  int64_t zeroTotal = 0, elementTotal = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (zeroCounts[i] < 0) continue;  // not an fp16 parameter, or no gradient
    size_t l = 0;
    while (l < names.size() && names[l] != params[i].layer) ++l;
    if (l == names.size()) {
      names.push_back(params[i].layer);
      zeros.push_back(0);
      elements.push_back(0);
      flushed.emplace_back();
    }
    zeros[l] += zeroCounts[i];
    elements[l] += params[i].param.numel();
    zeroTotal += zeroCounts[i];
    elementTotal += params[i].param.numel();
    if (!flush.empty()) {
      flushed[l].add(flush[i]);
      flushTotal.add(flush[i]);
    }
  }
  for (size_t l = 0; l < names.size(); ++l) {
    LayerFp16GradMetrics m;
    m.layer = names[l];
    m.zeroShare = elements[l] > 0 ? double(zeros[l]) / double(elements[l]) : 0.0;
    if (!flush.empty()) m.flushShare = flushed[l].flushedShare();
    out.layers.push_back(std::move(m));
  }
  out.zeroShare = elementTotal > 0 ? double(zeroTotal) / double(elementTotal) : 0.0;
  if (!flush.empty()) out.flushShare = flushTotal.flushedShare();
  return out;
}

}  // namespace

bool prepareFp16Gradients(const std::vector<TrainableParam>& params, DynamicLossScale* scaler, StepMetrics& m) {
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> zeroRows;
  std::vector<int64_t> zeroCounts(params.size(), -1);
  std::vector<size_t> counted;
  for (size_t i = 0; i < params.size(); ++i) {
    const torch::Tensor& g = params[i].param.grad();
    if (!g.defined() || g.scalar_type() != torch::kFloat16) continue;
    zeroRows.push_back(g.eq(0).sum());
    counted.push_back(i);
  }
  if (!zeroRows.empty()) {
    const torch::Tensor all = torch::stack(zeroRows).cpu();  // one read for all
    for (size_t k = 0; k < counted.size(); ++k) zeroCounts[counted[k]] = all[static_cast<int64_t>(k)].item<int64_t>();
  }
  std::vector<Fp16WriteCounts> flush;
  bool skip = false;
  if (scaler) {
    m.lossScale = scaler->scale();
    std::vector<torch::Tensor> grads;
    std::vector<std::pair<std::string, torch::Tensor>> dump;
    const char* dumpDir = std::getenv("PLAB_TEST_DUMP_SCALED_GRADS");
    for (const TrainableParam& p : params) {
      torch::Tensor g = p.param.grad();
      if (!g.defined()) continue;
      if (dumpDir) dump.emplace_back("scaled/" + p.name, g.detach().cpu().clone());
      if (g.scalar_type() == torch::kFloat16) {
        g = g.to(torch::kFloat32);
        p.param.mutable_grad() = g;  // the fp16 gradient is released
      }
      grads.push_back(g);
    }
    skip = scaler->unscale(grads);
    m.stepSkipped = skip;
    if (dumpDir) {
      for (const TrainableParam& p : params)
        if (p.param.grad().defined()) dump.emplace_back("unscaled/" + p.name, p.param.grad().detach().cpu());
      writeSafetensors(fs::path(dumpDir) / ("step-" + std::to_string(m.step) + ".safetensors"), dump);
    }
    flush.resize(params.size());
    for (size_t i = 0; i < params.size(); ++i)
      if (zeroCounts[i] >= 0) flush[i] = fp16WriteCounts(params[i].param.grad());
  }
  Fp16GradShares shares = fp16GradShares(params, zeroCounts, flush);
  m.fp16GradLayers = std::move(shares.layers);
  m.gradFp16ZeroShare = shares.zeroShare;
  m.gradFp16FlushShare = shares.flushShare;
  return skip;
}

}  // namespace plab
