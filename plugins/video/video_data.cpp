// Checking the host's spec, the streams over the decode pool, and the two datasets' [video] keys.
#include "video/video_data.h"

#include <fmt/format.h>

#include <atomic>
#include <optional>
#include <utility>

#include "image_text_io/decode_pool.h"
#include "kforge/sdk/error.h"
#include "video/video_manifest.h"
#include "video/webvid_source.h"

namespace kforge::video {
namespace {

// The pool reports a clip that could not be decoded as a failure (rate-limited warnings, and the data path stops after
// too many in a row) and hands out its sample without frames and loss; the stream counts them.
class ClipStream : public sdk::ImageTextStream {
 public:
  ClipStream(image_text::OrderedDecodePool<ClipSample>::Load load, std::function<int64_t(int64_t)> index_at,
             int64_t start, int64_t end, image_text::DecodePoolOptions options)
      : pool_(std::move(load), std::move(index_at), start, end, std::move(options), [](const ClipSample& clip) {
          return clip.failure.empty() ? std::string() : clip.failure + "; the sample has no frames and no loss";
        }) {}

  std::optional<sdk::ImageTextSample> next() override {
    std::optional<ClipSample> clip = pool_.next();
    if (!clip) return std::nullopt;
    if (!clip->failure.empty()) ++failed_;
    return std::move(clip->sample);
  }
  int64_t skipped() const override { return failed_.load() + pool_.stats().skipped; }

 private:
  std::atomic<int64_t> failed_{0};
  image_text::OrderedDecodePool<ClipSample> pool_;
};

// Where the clips are: [video] data_root for training, the spec's path ([eval] dataset_path) for evaluation.
std::string clip_root(const sdk::ConfigView& video, const sdk::ImageTextSpec& spec) {
  return spec.path.empty() ? video.get_string("data_root") : spec.path;
}

// The config key of clip_root, for errors.
std::string clip_root_key(const sdk::ImageTextSpec& spec) {
  return spec.path.empty() ? "[video] data_root" : "[" + spec.section + "] dataset_path";
}

}  // namespace

VideoData::VideoData(const sdk::ImageTextSpec& spec, const std::function<std::shared_ptr<const ClipSource>()>& open,
                     int64_t max_clip_bytes)
    : warn_(spec.warn ? spec.warn : image_text::stderr_warn()) {
  if (spec.image_size <= 0) {
    throw sdk::ConfigError(
        fmt::format("video dataset: frame size {} must be > 0 (the vision encoder's input size)", spec.image_size));
  }
  if (spec.max_frames <= 0) throw sdk::ConfigError(fmt::format("[video] max_frames = {} must be > 0", spec.max_frames));
  if (spec.max_text_len <= 0) {
    throw sdk::ConfigError(fmt::format("[vlm] max_text_len = {} must be > 0", spec.max_text_len));
  }
  if (!spec.tokenize) throw sdk::Error("video dataset: the host gave no tokenizer");
  if (!spec.frame_times) throw sdk::Error("video dataset: the host gave no frame sampler (frame_times)");
  if (max_clip_bytes <= 0) {
    throw sdk::ConfigError(fmt::format("[video] max_clip_bytes = {} must be > 0", max_clip_bytes));
  }
  options_.max_clip_bytes = max_clip_bytes;
  options_.frame_size = spec.image_size;
  options_.max_frames = spec.max_frames;
  options_.normalization = image_text::Normalization{spec.pixels.mean, spec.pixels.std};
  options_.text = image_text::TextOptions{spec.max_text_len, spec.pad_id, spec.eos_id};
  options_.tokenize = spec.tokenize;
  options_.frame_times = spec.frame_times;
  num_workers_ = spec.num_workers;
  queue_depth_ = spec.queue_depth;
  source_ = open();
}

std::unique_ptr<sdk::ImageTextStream> VideoData::stream(std::function<int64_t(int64_t)> index_at, int64_t start,
                                                        int64_t end) const {
  auto load = [source = source_, options = options_](int64_t position, int64_t index) {
    ClipSample clip = clip_sample(source->clip(index), options);
    clip.sample.position = position;
    return clip;
  };
  image_text::DecodePoolOptions options{num_workers_, queue_depth_, warn_, source_->describe()};
  return std::make_unique<ClipStream>(std::move(load), std::move(index_at), start, end, std::move(options));
}

std::unique_ptr<sdk::VideoDataset> make_webvid(const sdk::ConfigView& video, const sdk::ImageTextSpec& spec) {
  WebVidOptions options{clip_root(video, spec),
                        video.get_string("dataset_name"),
                        spec.path.empty() ? video.get_string("split") : "validation",
                        video.get_int("max_samples"),
                        video.get_string("prompt"),
                        clip_root_key(spec)};
  return std::make_unique<VideoData>(
      spec, [&] { return std::make_shared<WebVidSource>(std::move(options)); }, video.get_int("max_clip_bytes"));
}

std::unique_ptr<sdk::VideoDataset> make_video_jsonl(const sdk::ConfigView& video, const sdk::ImageTextSpec& spec) {
  return std::make_unique<VideoData>(
      spec,
      [&] {
        return std::make_shared<VideoManifestSource>(clip_root(video, spec), video.get_string("prompt"),
                                                     video.get_int("max_samples"), clip_root_key(spec));
      },
      video.get_int("max_clip_bytes"));
}

}  // namespace kforge::video
