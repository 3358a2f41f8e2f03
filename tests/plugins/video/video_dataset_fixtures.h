// What the video dataset tests share: the [video] section as the host hands it to a component, the host's spec
// (byte tokens, CLIP normalisation, the uniform sampler at 2 fps, 2 to 6 frames), and the checks of a sample's frames
// (against ClipDecoder and ffprobe) and text (shifted, prompt-masked byte tokens).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/section_view.h"
#include "config/value.h"
#include "kforge/sdk/image_text_dataset.h"
#include "support/expect_text.h"  // config_error_of

namespace kforge::test {

inline constexpr int64_t kClipFrameSize = 8;
inline constexpr int64_t kClipMaxFrames = 6;
inline constexpr int64_t kClipTextLen = 48;
inline constexpr int64_t kClipPadId = 0;
inline constexpr int64_t kClipEosId = 1;
/// The sampler of the spec: fps 2, min_frames 2, max_frames kClipMaxFrames (1 s: 2 frames, 2 s: 4, 4 s: 6 of 8).
inline constexpr double kClipFps = 2.0;
inline constexpr int kClipMinFrames = 2;

/// A [video] section with the schema's defaults; set() replaces a key's value.
class VideoSection {
 public:
  VideoSection();
  VideoSection(const VideoSection&) = delete;
  VideoSection& operator=(const VideoSection&) = delete;
  VideoSection& set(const std::string& key, config::Value value);
  const sdk::ConfigView& view() const { return view_; }

 private:
  config::Value table_;
  config::SectionView view_;
};

struct ClipWarnings {
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) { lines.push_back(line); };
  }
};

/// The spec the host would give: frames kClipFrameSize, kClipMaxFrames of them, the uniform sampler above.
sdk::ImageTextSpec clip_spec(ClipWarnings* warnings, int num_workers);

/// Every sample of positions [start, end) of `order`.
std::vector<sdk::ImageTextSample> stream_all(const sdk::VisualTextSource& data,
                                             const std::function<int64_t(int64_t)>& order, int64_t start, int64_t end,
                                             int64_t* skipped = nullptr);

/// input_ids are the byte tokens of prompt, caption and EOS, then padding; labels the next token where it is a
/// caption token or EOS, else -100 (all -100 when `loss` is false).
void expect_clip_text(const sdk::ImageTextSample& s, const std::string& prompt, const std::string& caption, bool loss);

/// The sample holds `frames` real frames of `clip` (the uniform sampler's count for its duration): the frames
/// ClipDecoder gives, normalised with CLIP's statistics, at the pts ffprobe lists, then zero padding.
void expect_clip_frames(const sdk::ImageTextSample& s, const std::string& clip, int64_t frames);

/// No real frame: zero pixels, mask and times (the static shapes kept).
void expect_no_frames(const sdk::ImageTextSample& s);

}  // namespace kforge::test
