// SinusoidalTimeEmbedding: the periods checked as config errors, the features and the zero-initialised projection.
#include "video/sinusoidal_time_embedding.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/nn/options/linear.h>

#include <cmath>
#include <numbers>

#include "kforge/sdk/error.h"

namespace kforge::video {

std::vector<double> band_periods(int64_t bands, double min_period, double max_period) {
  if (bands < 1) throw sdk::ConfigError(fmt::format("[time_embedding] num_bands = {} must be >= 1", bands));
  if (!std::isfinite(min_period) || min_period <= 0) {
    throw sdk::ConfigError(
        fmt::format("[time_embedding] min_period = {} must be a positive number of seconds", min_period));
  }
  if (!std::isfinite(max_period) || max_period < min_period) {
    throw sdk::ConfigError(
        fmt::format("[time_embedding] max_period = {} must be >= min_period ({})", max_period, min_period));
  }
  std::vector<double> periods(static_cast<size_t>(bands), min_period);
  for (int64_t k = 1; k < bands; ++k) {
    const double fraction = static_cast<double>(k) / static_cast<double>(bands - 1);
    periods[static_cast<size_t>(k)] = min_period * std::pow(max_period / min_period, fraction);
  }
  return periods;
}

SinusoidalTimeEmbedding::SinusoidalTimeEmbedding(std::vector<double> periods, int64_t dim) {
  std::vector<double> rates;
  for (const double p : periods) rates.push_back(2.0 * std::numbers::pi / p);
  angular_rates_ = register_buffer("angular_rates", at::tensor(rates, at::kDouble).to(at::kFloat));
  const auto features = static_cast<int64_t>(2 * periods.size());
  proj_ = register_module("proj", torch::nn::Linear(torch::nn::LinearOptions(features, dim).bias(false)));
  at::NoGradGuard no_grad;
  proj_->weight.zero_();
}

at::Tensor SinusoidalTimeEmbedding::features(const at::Tensor& frame_times) const {
  const at::Tensor angles = frame_times.to(at::kFloat).unsqueeze(-1) * angular_rates_;
  return at::cat({angles.sin(), angles.cos()}, -1);
}

at::Tensor SinusoidalTimeEmbedding::forward(const at::Tensor& frame_times) {
  const at::Tensor f = features(frame_times);
  return proj_->forward(f.to(proj_->weight.scalar_type()));
}

std::shared_ptr<sdk::TimeEmbedding> make_sinusoidal_time_embedding(const sdk::ConfigView& section,
                                                                   const sdk::TimeEmbeddingSpec& spec) {
  return std::make_shared<SinusoidalTimeEmbedding>(
      band_periods(section.get_int("num_bands"), section.get_float("min_period"), section.get_float("max_period")),
      spec.dim);
}

}  // namespace kforge::video
