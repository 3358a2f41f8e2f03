// Visual-text data: map-style sources of samples (an image or a video clip, its caption, an optional prompt) that read
// and preprocess them on background threads in the order the host's sampler gives. ImageTextDataset serves images
// ([vlm] dataset), VideoDataset clips ([video] dataset_type), both through the same streams and samples.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kforge/sdk/vision_encoder.h"

namespace kforge::sdk {

/// Text to token ids, without special tokens. Called from several threads at once.
using Tokenize = std::function<std::vector<int64_t>(std::string_view)>;

/// A Hugging Face image-text dataset ([data] hf_dataset_name) as KempnerForge reads it, its files found by the host.
struct HfImageText {
  std::vector<std::string> files;  ///< the split's Arrow IPC stream files, in order
  std::string image_field;         ///< [data] hf_dataset_image_field: an Image column (a struct of bytes and path)
  std::string text_field;          ///< [data] hf_dataset_text_field: the caption
  std::string prompt_field;        ///< [data] hf_dataset_prompt_field: "" for none
  std::string where;               ///< for messages: "<file>:<line>: [data] hf_dataset_name = \"<name>\""
};

/// What the host asks of the samples. The callables are called from the dataset's threads and stay valid for
/// the dataset's lifetime.
struct ImageTextSpec {
  /// [data] dataset_path (or [eval]'s, in evaluation); "": no samples, a dataset for pixel_values() alone. A
  /// VideoDataset finds its training clips from its own [video] keys (path ""), and its evaluation clips (section
  /// "eval") at path, which then takes the place of [video] data_root.
  std::string path;
  std::string section = "data";  ///< the config section of dataset_path and file_pattern, as errors name them ("eval")
  std::string file_pattern;  ///< [data] file_pattern, when the config sets it; "": the dataset's own default
  /// Training on [data] hf_dataset_name (path is then ""): the dataset's files and columns. An image dataset reads
  /// them; a VideoDataset is never given one.
  std::optional<HfImageText> hf;
  int64_t image_size = 0;    ///< every image is resized to image_size x image_size
  PixelFormat pixels;        ///< the encoder's per-channel normalisation (mean, std)
  int64_t max_text_len = 0;  ///< [vlm] max_text_len: input_ids and labels always have this length
  int64_t pad_id = 0;        ///< fills input_ids after the text
  int64_t eos_id = -1;       ///< >= 0: appended to the caption; -1: none
  Tokenize tokenize;
  int num_workers = 0;  ///< [data] num_workers: decoding threads (0: on the caller's thread)
  int queue_depth = 0;  ///< samples prepared ahead at most (0: 2 x num_workers)
  std::function<void(const std::string&)> warn;  ///< a skipped sample, named by its origin and key
  /// Clips only (a VideoDataset's spec): frames per sample ([video] max_frames), and the times in seconds at which to
  /// take frames from a clip of the given duration (the [video] sampling_policy's frame sampler; at most max_frames).
  int64_t max_frames = 0;
  std::function<std::vector<double>(double duration_s)> frame_times;
};

struct ImageTextSample {
  int64_t position = 0;     ///< its place in the stream's order
  at::Tensor pixel_values;  ///< float32 [3, image_size, image_size]; a clip's: [max_frames, 3, image_size, image_size]
  at::Tensor input_ids;     ///< int64 [max_text_len]
  at::Tensor labels;        ///< int64 [max_text_len]: the next token, -100 on prompt targets and padding
  /// A clip's: bool [max_frames], its real frames first, then padding (zero pixels); none real when the clip could not
  /// be decoded (its labels are then all -100). Undefined for an image.
  at::Tensor frame_mask;
  at::Tensor frame_times;  ///< a clip's: float32 [max_frames], each frame's time in the clip in seconds (0: padding)
};

/// Samples index_at(p) for positions p in order, prepared ahead on the dataset's threads.
class ImageTextStream {
 public:
  virtual ~ImageTextStream() = default;
  /// The next usable sample; nullopt after the last position. A sample whose image cannot be decoded is
  /// skipped (spec.warn names it); any other error is thrown here.
  virtual std::optional<ImageTextSample> next() = 0;
  /// Samples skipped so far.
  virtual int64_t skipped() const = 0;
};

/// What the host reads samples from.
class VisualTextSource {
 public:
  virtual ~VisualTextSource() = default;
  /// Number of samples.
  virtual int64_t size() const = 0;
  /// One line for the log: format, files, samples.
  virtual std::string describe() const = 0;
  /// Serves positions [start, end); `index_at(p)` is the dataset index at position p (called in order, one
  /// call at a time, from any thread).
  virtual std::unique_ptr<ImageTextStream> stream(std::function<int64_t(int64_t)> index_at, int64_t start,
                                                  int64_t end) const = 0;
};

class ImageTextDataset : public VisualTextSource {
 public:
  /// An image file read as the samples' images are (decoded, resized, normalised): float32 [3, image_size,
  /// image_size], e.g. for kforge generate --image. Throws sdk::Error naming the file when it cannot be read or
  /// decoded.
  virtual at::Tensor pixel_values(const std::string& image_file) const = 0;
};

/// Clips: samples with frame_mask and frame_times, pixel_values [spec.max_frames, 3, S, S], a clip that cannot be
/// decoded given as a sample without real frames whose labels are all -100 (counted by the stream's skipped()).
class VideoDataset : public VisualTextSource {};

/// A clip's frame times: [video] sampling_policy.
class FrameSampler {
 public:
  virtual ~FrameSampler() = default;
  /// The times, in seconds from the clip's start and in increasing order, of the frames to take from a clip of
  /// `duration_s` seconds (0 when unknown); at least one, at most the [video] max_frames.
  virtual std::vector<double> timestamps(double duration_s) const = 0;
};

}  // namespace kforge::sdk
