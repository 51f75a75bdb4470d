#include "model/rope.h"

#include <algorithm>
#include <cmath>

namespace plab {
namespace {

// transformers' YaRN helpers: the dimension whose wavelength makes
// `rotations` turns over `maxPositions` positions.
double yarnCorrectionDim(double rotations, double dim, double base, double maxPositions) {
  return dim * std::log(maxPositions / (rotations * 2 * M_PI)) / (2 * std::log(base));
}

double yarnMscale(double scale, double mscale) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

torch::Tensor llama3Scaled(const torch::Tensor& invFreq, const RopeScaling& s) {
  const double oldContext = static_cast<double>(s.original_max_position_embeddings);
  const double lowFreqWavelen = oldContext / s.low_freq_factor;
  const double highFreqWavelen = oldContext / s.high_freq_factor;
  const torch::Tensor wavelen = 2 * M_PI / invFreq;
  // Long wavelengths (low frequencies) are divided by factor, short ones kept,
  // the band between is interpolated smoothly.
  torch::Tensor scaled = torch::where(wavelen > lowFreqWavelen, invFreq / s.factor, invFreq);
  const torch::Tensor smooth = (oldContext / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  const torch::Tensor smoothed = (1 - smooth) * scaled / s.factor + smooth * scaled;
  const torch::Tensor medium = (wavelen >= highFreqWavelen).logical_and(wavelen <= lowFreqWavelen);
  return torch::where(medium, smoothed, scaled);
}

torch::Tensor yarnScaled(const torch::Tensor& posFreqs, const RopeScaling& s, double base, int64_t dim) {
  const torch::Tensor extrapolation = 1.0 / posFreqs;
  const torch::Tensor interpolation = 1.0 / (s.factor * posFreqs);
  const double original = static_cast<double>(s.original_max_position_embeddings);
  double low = yarnCorrectionDim(s.beta_fast, static_cast<double>(dim), base, original);
  double high = yarnCorrectionDim(s.beta_slow, static_cast<double>(dim), base, original);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // avoids a division by zero, as transformers does
  const torch::Tensor ramp =
      ((torch::arange(dim / 2, posFreqs.options()) - low) / (high - low)).clamp(0, 1);
  const torch::Tensor extrapolationFactor = 1 - ramp;
  return interpolation * (1 - extrapolationFactor) + extrapolation * extrapolationFactor;
}

}  // namespace

RopeFrequencies ropeFrequencies(const ModelConfig& c, const torch::Device& device) {
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  const int64_t dim = c.head_dim;
  // base^(2i/d) with the exponent in fp32, as transformers computes it.
  const torch::Tensor posFreqs =
      torch::pow(c.rope_theta, torch::arange(0, dim, 2, f32.dtype(torch::kInt64)).to(torch::kFloat32) / dim);
  const RopeScaling& s = c.rope_scaling;
  RopeFrequencies r;
  if (s.type == "linear") {
    r.invFreq = 1.0 / posFreqs / s.factor;
  } else if (s.type == "llama3") {
    r.invFreq = llama3Scaled(1.0 / posFreqs, s);
  } else if (s.type == "yarn") {
    r.invFreq = yarnScaled(posFreqs, s, c.rope_theta, dim);
    r.attentionScaling = s.attention_factor
                             ? *s.attention_factor
                             : (s.mscale != 0 && s.mscale_all_dim != 0
                                    ? yarnMscale(s.factor, s.mscale) / yarnMscale(s.factor, s.mscale_all_dim)
                                    : yarnMscale(s.factor, 1.0));
  } else {
    r.invFreq = 1.0 / posFreqs;
  }
  return r;
}

}  // namespace plab
