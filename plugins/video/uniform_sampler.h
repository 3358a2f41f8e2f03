// UniformSampler: the frame_sampler "uniform" ([video] sampling_policy), KempnerForge's policy: uniform_timestamps
// with [video] fps, min_frames and max_frames.
#pragma once

#include <memory>
#include <vector>

#include "kforge/sdk/config_view.h"
#include "kforge/sdk/image_text_dataset.h"
#include "video/frame_timestamps.h"

namespace kforge::video {

class UniformSampler : public sdk::FrameSampler {
 public:
  /// Throws sdk::ConfigError naming the [video] key of a bad value (fps <= 0 or not finite, min_frames < 1,
  /// max_frames < min_frames, a frame count out of int range).
  UniformSampler(double fps, int64_t min_frames, int64_t max_frames);

  std::vector<double> timestamps(double duration_s) const override { return policy_(duration_s); }

 private:
  TimestampPolicy policy_;
};

/// The sampler of the [video] section's fps, min_frames and max_frames.
std::unique_ptr<sdk::FrameSampler> make_uniform_sampler(const sdk::ConfigView& video);

}  // namespace kforge::video
