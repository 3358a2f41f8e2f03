// VideoData: an sdk::VideoDataset over a ClipSource whose clips are decoded, normalised, padded and tokenised on the
// image-text path's ordered decode pool; make_webvid and make_video_jsonl build it from the [video] section (the
// video_dataset components webvid and video_jsonl).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "image_text_io/warn.h"
#include "kforge/sdk/config_view.h"
#include "kforge/sdk/image_text_dataset.h"
#include "video/clip_sample.h"
#include "video/clip_source.h"

namespace kforge::video {

class VideoData : public sdk::VideoDataset {
 public:
  /// Checks `spec`, then opens the source. Throws sdk::ConfigError for a non-positive frame size, max_frames,
  /// max_text_len or max_clip_bytes, sdk::Error when the host gave no tokenizer or frame sampler, and what `open`
  /// throws. Clips are read from regular files of at most `max_clip_bytes` ([video] max_clip_bytes).
  VideoData(const sdk::ImageTextSpec& spec, const std::function<std::shared_ptr<const ClipSource>()>& open,
            int64_t max_clip_bytes = kDefaultMaxClipBytes);

  int64_t size() const override { return source_->size(); }
  std::string describe() const override { return source_->describe(); }
  /// A stream whose skipped() counts the clips that could not be decoded (each a sample without frames or loss,
  /// warned about in order as it is handed out, rate-limited); next() throws sdk::ConfigError once
  /// image_text::kMaxConsecutiveFailures clips in a row failed.
  std::unique_ptr<sdk::ImageTextStream> stream(std::function<int64_t(int64_t)> index_at, int64_t start,
                                               int64_t end) const override;

 private:
  std::shared_ptr<const ClipSource> source_;
  ClipOptions options_;
  int num_workers_ = 0;
  int queue_depth_ = 0;
  image_text::Warn warn_;
};

/// video_dataset "webvid": a WebVidSource over [video] data_root, dataset_name, split, max_samples and prompt, clips
/// up to [video] max_clip_bytes; in
/// evaluation (spec.path set: [eval] dataset_path) the "validation" split of the WebVid root at spec.path.
std::unique_ptr<sdk::VideoDataset> make_webvid(const sdk::ConfigView& video, const sdk::ImageTextSpec& spec);
/// video_dataset "video_jsonl": a VideoManifestSource at [video] data_root (in evaluation at spec.path), with
/// max_samples, prompt and max_clip_bytes.
std::unique_ptr<sdk::VideoDataset> make_video_jsonl(const sdk::ConfigView& video, const sdk::ImageTextSpec& spec);

}  // namespace kforge::video
