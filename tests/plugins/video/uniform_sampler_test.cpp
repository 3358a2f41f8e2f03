// The frame sampler uniform: KempnerForge's timestamps for the [video] section's fps, min_frames and max_frames, and
// a bad value refused as a config error naming its key.
#include "video/uniform_sampler.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kforge/sdk/error.h"
#include "video_dataset_fixtures.h"

namespace kforge::test {
namespace {

TEST(UniformSampler, TimestampsAreUniformTimestampsOfTheSectionsSettings) {
  VideoSection section;
  section.set("fps", config::Value::floating(3.0)).set("min_frames", config::Value::integer(2));
  section.set("max_frames", config::Value::integer(5));
  const auto sampler = video::make_uniform_sampler(section.view());
  for (const double duration : {0.0, 0.2, 1.0, 1.5, 10.0}) {
    EXPECT_EQ(sampler->timestamps(duration), video::uniform_timestamps(duration, 3.0, 2, 5)) << duration;
  }
  EXPECT_EQ(sampler->timestamps(1.0), (std::vector<double>{0.0, 0.5, 1.0}));
  EXPECT_EQ(sampler->timestamps(10.0).size(), 5u);
  EXPECT_EQ(sampler->timestamps(0.0), (std::vector<double>{0.0}));
  // The schema's defaults: 2 fps, 4 to 16 frames.
  EXPECT_EQ(video::make_uniform_sampler(VideoSection().view())->timestamps(3.0).size(), 6u);
}

TEST(UniformSampler, BadValuesAreConfigErrorsNamingTheirKey) {
  const auto error_with = [](const std::string& key, config::Value value) {
    VideoSection section;
    section.set(key, std::move(value));
    return config_error_of([&] { video::make_uniform_sampler(section.view()); });
  };
  EXPECT_NE(error_with("fps", config::Value::floating(0.0)).find("[video] fps must be > 0"), std::string::npos);
  EXPECT_NE(error_with("fps", config::Value::floating(-1.5)).find("[video] fps must be > 0, got -1.5"),
            std::string::npos);
  EXPECT_NE(error_with("min_frames", config::Value::integer(0)).find("[video] min_frames must be >= 1, got 0"),
            std::string::npos);
  EXPECT_NE(error_with("max_frames", config::Value::integer(3)).find("[video] max_frames must be >= min_frames"),
            std::string::npos);
  EXPECT_NE(error_with("max_frames", config::Value::integer(int64_t{1} << 40)).find("[video] max_frames = "),
            std::string::npos);
  EXPECT_NE(error_with("min_frames", config::Value::integer(-(int64_t{1} << 40))).find("[video] min_frames = "),
            std::string::npos);
}

}  // namespace
}  // namespace kforge::test
