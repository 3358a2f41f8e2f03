// libkforge_video.so as the host loads it: the two video datasets and the uniform frame sampler registered with the
// [video] keys they read, and their factories building from the BuildContext's [video] section. Its own executable:
// the plugin holds a second copy of the decoder, whose FFmpeg log callback (process-wide) would take the messages
// the failure tests of test_video's copy expect.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "kforge/sdk/logger.h"
#include "kforge/sdk/registrar.h"
#include "support/test_host.h"
#include "video_dataset_fixtures.h"
#include "video_fixtures.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

struct SilentLogger : sdk::Logger {
  void debug(std::string_view) override {}
  void info(std::string_view) override {}
  void warn(std::string_view) override {}
  void error(std::string_view) override {}
};

struct NoComponents : sdk::ComponentSource {
  std::shared_ptr<sdk::Router> make_router(const std::string&, const sdk::RouterSpec&) const override {
    return nullptr;
  }
};

const plugins::Entry& registered(const plugins::PluginHost& host, const std::string& kind, const std::string& name) {
  const plugins::Entry* entry = host.registry.find(kind, name);
  if (entry == nullptr) throw std::runtime_error(kind + " " + name + " is not registered: " + host.set.errors());
  return *entry;
}

TEST(VideoPlugin, RegistersTheDatasetsAndTheSamplerWithTheVideoKeysTheyRead) {
  const auto host = load_builtin_plugins();
  using Keys = std::vector<std::string>;
  const plugins::Entry& webvid = registered(*host, "video_dataset", "webvid");
  EXPECT_EQ(webvid.plugin->path.filename(), "libkforge_video.so");
  EXPECT_EQ(webvid.meta.core_keys,
            (Keys{"data_root", "dataset_name", "split", "max_samples", "prompt", "max_clip_bytes"}));
  EXPECT_EQ(registered(*host, "video_dataset", "video_jsonl").meta.core_keys,
            (Keys{"data_root", "max_samples", "prompt", "max_clip_bytes"}));
  EXPECT_EQ(registered(*host, "frame_sampler", "uniform").meta.core_keys, (Keys{"fps", "min_frames", "max_frames"}));
}

TEST(VideoPlugin, FactoriesBuildFromTheVideoSection) {
  const auto host = load_builtin_plugins();
  SilentLogger log;
  NoComponents components;
  VideoSection section;
  section.set("fps", config::Value::floating(1.0)).set("min_frames", config::Value::integer(1));
  const sdk::BuildContext ctx{log, section.view(), components};
  const auto sampler = std::get<sdk::FrameSamplerFactory>(registered(*host, "frame_sampler", "uniform").factory)(ctx);
  EXPECT_EQ(sampler->timestamps(3.0), (std::vector<double>{0.0, 1.5, 3.0}));

  const fs::path dir = temp_dir("video_plugin");
  write_testsrc_clip((dir / "a.mp4").string(), 1);
  std::ofstream(dir / "m.jsonl") << "{\"video\": \"a.mp4\", \"text\": \"hi\"}\n";
  section.set("data_root", config::Value::string((dir / "m.jsonl").string()));
  const auto jsonl = std::get<sdk::VideoDatasetFactory>(registered(*host, "video_dataset", "video_jsonl").factory)(
      ctx, clip_spec(nullptr, 0));
  ASSERT_EQ(jsonl->size(), 1);
  const std::vector<sdk::ImageTextSample> samples = stream_all(
      *jsonl, [](int64_t p) { return p; }, 0, 1);
  ASSERT_EQ(samples.size(), 1u);
  expect_clip_frames(samples[0], (dir / "a.mp4").string(), 2);

  const std::string error = config_error_of([&] {
    std::get<sdk::VideoDatasetFactory>(registered(*host, "video_dataset", "webvid").factory)(ctx,
                                                                                             clip_spec(nullptr, 0));
  });
  EXPECT_NE(error.find("[video] data_root = \"" + (dir / "m.jsonl").string() + "\": no directory"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace kforge::test
