// The shared [video] section, spec and sample checks of the video dataset tests.
#include "video_dataset_fixtures.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "image_text_io/image_transform.h"
#include "kforge/sdk/error.h"
#include "video/clip_decoder.h"
#include "video/uniform_sampler.h"
#include "video_fixtures.h"

namespace kforge::test {

VideoSection::VideoSection() : table_(config::Value::make_table()), view_("video", table_) {
  table_.set("data_root", config::Value::string(""));
  table_.set("dataset_type", config::Value::string("webvid"));
  table_.set("dataset_name", config::Value::string("webvid-10M"));
  table_.set("sampling_policy", config::Value::string("uniform"));
  table_.set("split", config::Value::string("train"));
  table_.set("max_samples", config::Value::integer(0));
  table_.set("max_frames", config::Value::integer(16));
  table_.set("min_frames", config::Value::integer(4));
  table_.set("fps", config::Value::floating(2.0));
  table_.set("frame_size", config::Value::integer(224));
  table_.set("max_clip_bytes", config::Value::integer(int64_t{2} << 30));
  table_.set("prompt", config::Value::string(""));
}

VideoSection& VideoSection::set(const std::string& key, config::Value value) {
  table_.set(key, std::move(value));
  return *this;
}

sdk::ImageTextSpec clip_spec(ClipWarnings* warnings, int num_workers) {
  sdk::ImageTextSpec spec;
  spec.image_size = kClipFrameSize;
  const image_text::Normalization clip = image_text::clip_normalization();
  spec.pixels.mean = clip.mean;
  spec.pixels.std = clip.std;
  spec.max_text_len = kClipTextLen;
  spec.pad_id = kClipPadId;
  spec.eos_id = kClipEosId;
  spec.tokenize = [](std::string_view text) {
    std::vector<int64_t> ids;
    for (const char c : text) ids.push_back(static_cast<unsigned char>(c));
    return ids;
  };
  spec.num_workers = num_workers;
  spec.queue_depth = 3;
  if (warnings) spec.warn = warnings->sink();
  spec.max_frames = kClipMaxFrames;
  auto sampler = std::make_shared<video::UniformSampler>(kClipFps, kClipMinFrames, kClipMaxFrames);
  spec.frame_times = [sampler](double duration_s) { return sampler->timestamps(duration_s); };
  return spec;
}

std::vector<sdk::ImageTextSample> stream_all(const sdk::VisualTextSource& data,
                                             const std::function<int64_t(int64_t)>& order, int64_t start, int64_t end,
                                             int64_t* skipped) {
  std::unique_ptr<sdk::ImageTextStream> stream = data.stream(order, start, end);
  std::vector<sdk::ImageTextSample> samples;
  while (std::optional<sdk::ImageTextSample> s = stream->next()) samples.push_back(std::move(*s));
  if (skipped) *skipped = stream->skipped();
  return samples;
}

namespace {

std::vector<int64_t> long_values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

void expect_clip_shapes(const sdk::ImageTextSample& s) {
  EXPECT_EQ(s.pixel_values.sizes(), (at::IntArrayRef{kClipMaxFrames, 3, kClipFrameSize, kClipFrameSize}));
  EXPECT_EQ(s.pixel_values.scalar_type(), at::kFloat);
  EXPECT_EQ(s.frame_mask.sizes(), (at::IntArrayRef{kClipMaxFrames}));
  EXPECT_EQ(s.frame_mask.scalar_type(), at::kBool);
  EXPECT_EQ(s.frame_times.sizes(), (at::IntArrayRef{kClipMaxFrames}));
  EXPECT_EQ(s.frame_times.scalar_type(), at::kFloat);
  EXPECT_EQ(s.input_ids.sizes(), (at::IntArrayRef{kClipTextLen}));
  EXPECT_EQ(s.labels.sizes(), (at::IntArrayRef{kClipTextLen}));
}

}  // namespace

void expect_clip_text(const sdk::ImageTextSample& s, const std::string& prompt, const std::string& caption, bool loss) {
  std::vector<int64_t> tokens;
  for (const char c : prompt + caption) tokens.push_back(static_cast<unsigned char>(c));
  tokens.push_back(kClipEosId);
  ASSERT_LE(tokens.size(), static_cast<size_t>(kClipTextLen));
  std::vector<int64_t> ids(kClipTextLen, kClipPadId);
  std::copy(tokens.begin(), tokens.end(), ids.begin());
  EXPECT_EQ(long_values(s.input_ids), ids) << caption;
  const std::vector<int64_t> labels = long_values(s.labels);
  ASSERT_EQ(labels.size(), static_cast<size_t>(kClipTextLen));
  const size_t first_target = prompt.empty() ? 0 : prompt.size() - 1;  // predicts the first caption token
  const size_t last_target = tokens.size() - 2;                        // predicts EOS
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool target = loss && i >= first_target && i <= last_target;
    EXPECT_EQ(labels[i], target ? ids[i + 1] : -100) << caption << ": label " << i;
  }
}

void expect_clip_frames(const sdk::ImageTextSample& s, const std::string& clip, int64_t frames) {
  expect_clip_shapes(s);
  video::ClipDecoder decoder(clip);
  const std::vector<double> targets =
      video::uniform_timestamps(decoder.duration_s(), kClipFps, kClipMinFrames, kClipMaxFrames);
  ASSERT_EQ(static_cast<int64_t>(targets.size()), frames) << clip << " lasts " << decoder.duration_s() << " s";
  EXPECT_EQ(s.frame_mask.sum().item<int64_t>(), frames) << clip;
  EXPECT_TRUE(s.frame_mask.narrow(0, 0, frames).all().item<bool>()) << clip << ": the real frames come first";

  video::DecodeOptions options;
  options.frame_size = kClipFrameSize;
  const at::Tensor rgb = video::ClipDecoder(clip, options).decode(targets).frames.to(at::kFloat) / 255.0f;
  const image_text::Normalization norm = image_text::clip_normalization();
  const at::Tensor mean = at::tensor(std::vector<float>(norm.mean.begin(), norm.mean.end())).view({1, 3, 1, 1});
  const at::Tensor std = at::tensor(std::vector<float>(norm.std.begin(), norm.std.end())).view({1, 3, 1, 1});
  EXPECT_TRUE(at::allclose(s.pixel_values.narrow(0, 0, frames), (rgb - mean) / std, 1e-6, 1e-6)) << clip;
  EXPECT_EQ(s.pixel_values.narrow(0, frames, kClipMaxFrames - frames).abs().sum().item<float>(), 0.0f) << clip;

  const std::vector<double> pts = cli_frames(clip, kClipFrameSize).pts_s;
  for (int64_t i = 0; i < kClipMaxFrames; ++i) {
    const double expected = i < frames ? pts[cli_pick(pts, targets[static_cast<size_t>(i)])] : 0.0;
    EXPECT_NEAR(s.frame_times[i].item<float>(), expected, 1e-6) << clip << " frame " << i;
  }
}

void expect_no_frames(const sdk::ImageTextSample& s) {
  expect_clip_shapes(s);
  EXPECT_FALSE(s.frame_mask.any().item<bool>());
  EXPECT_EQ(s.pixel_values.abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(s.frame_times.abs().sum().item<float>(), 0.0f);
}

}  // namespace kforge::test
