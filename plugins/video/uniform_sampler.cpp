// The uniform policy's settings checked once, as config errors.
#include "video/uniform_sampler.h"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <utility>

#include "kforge/sdk/error.h"

namespace kforge::video {

UniformSampler::UniformSampler(double fps, int64_t min_frames, int64_t max_frames) {
  for (const auto& [key, value] : {std::pair{"min_frames", min_frames}, std::pair{"max_frames", max_frames}}) {
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
      throw sdk::ConfigError(fmt::format("[video] {} = {} is out of range", key, value));
    }
  }
  try {
    policy_ = uniform_policy(fps, static_cast<int>(min_frames), static_cast<int>(max_frames));
  } catch (const std::invalid_argument& e) {
    throw sdk::ConfigError(e.what());
  }
}

std::unique_ptr<sdk::FrameSampler> make_uniform_sampler(const sdk::ConfigView& video) {
  return std::make_unique<UniformSampler>(video.get_float("fps"), video.get_int("min_frames"),
                                          video.get_int("max_frames"));
}

}  // namespace kforge::video
