// SinusoidalTimeEmbedding: the time_embedding "sinusoidal" ([time_embedding] type): sines and cosines of each frame's
// time at log-spaced periods, through a projection that starts at zero.
#pragma once

#include <torch/nn/modules/linear.h>

#include <memory>
#include <vector>

#include "kforge/sdk/config_view.h"
#include "kforge/sdk/time_embedding.h"

namespace kforge::video {

/// The bands' periods, in seconds: `bands` of them log-spaced from min_period to max_period, both included (one band:
/// min_period). Throws sdk::ConfigError naming the [time_embedding] key of a bad value (bands < 1, min_period <= 0,
/// max_period < min_period, or one not finite).
std::vector<double> band_periods(int64_t bands, double min_period, double max_period);

/// forward(t) = proj([sin(2 pi t / p_1), ..., sin(2 pi t / p_n), cos(2 pi t / p_1), ..., cos(2 pi t / p_n)]) over the
/// periods p_k of band_periods; proj, a Linear(2n, dim) without bias named "proj", is zero at construction.
class SinusoidalTimeEmbedding : public sdk::TimeEmbedding {
 public:
  SinusoidalTimeEmbedding(std::vector<double> periods, int64_t dim);
  at::Tensor forward(const at::Tensor& frame_times) override;
  /// The 2n features of frame_times [..] -> [.., 2n], in float32.
  at::Tensor features(const at::Tensor& frame_times) const;

 private:
  at::Tensor angular_rates_;  ///< float [n]: 2 pi / p_k, a buffer so that it follows the module's device
  torch::nn::Linear proj_{nullptr};
};

/// The embedding of the [time_embedding] section's num_bands, min_period and max_period, `spec.dim` wide.
std::shared_ptr<sdk::TimeEmbedding> make_sinusoidal_time_embedding(const sdk::ConfigView& section,
                                                                   const sdk::TimeEmbeddingSpec& spec);

}  // namespace kforge::video
