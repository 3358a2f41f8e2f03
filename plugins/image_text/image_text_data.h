// ImageTextData: the image_text_dataset component, an sdk::ImageTextDataset over WebDataset tar shards, a JSONL
// manifest or a Hugging Face dataset's Arrow files, whose samples are decoded, resized, normalised and tokenised on a
// DecodePool in the sampler's order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "image_text_io/image_decode.h"
#include "image_text_io/image_text_source.h"
#include "image_text_io/sample_preprocess.h"
#include "image_text_io/warn.h"
#include "kforge/sdk/image_text_dataset.h"

namespace kforge::image_text {

class ImageTextData : public sdk::ImageTextDataset {
 public:
  /// Opens spec.hf when given (a Hugging Face image-text dataset's Arrow files, ArrowImageTextSource; its refusals
  /// are ConfigErrors naming the hf_dataset_* keys), else spec.path (none when empty: no samples, for pixel_values()
  /// alone): a regular *.jsonl file is a JSONL manifest; a directory holds WebDataset shards, the regular files whose
  /// names match spec.file_pattern (fnmatch; empty: "*.tar"), in name order. Throws sdk::ConfigError naming [spec.section] dataset_path ([data] or [eval]) for a path that is neither, a directory
  /// without a matching shard, a manifest or shard the source refuses (a bad line, not a tar archive) and a dataset
  /// without samples; and for a non-positive image size, max_text_len or max_image_bytes. Images (and WebDataset
  /// members) are read up to `max_image_bytes` bytes ([vlm] max_image_bytes), from regular files only.
  explicit ImageTextData(const sdk::ImageTextSpec& spec, int64_t max_image_bytes = kDefaultMaxImageBytes);

  int64_t size() const override { return source_ ? source_->size() : 0; }
  std::string describe() const override { return description_; }
  std::unique_ptr<sdk::ImageTextStream> stream(std::function<int64_t(int64_t)> index_at, int64_t start,
                                               int64_t end) const override;
  at::Tensor pixel_values(const std::string& image_file) const override;

 private:
  std::shared_ptr<const ImageTextSource> source_;
  PreprocessOptions preprocess_;
  int num_workers_ = 0;
  int queue_depth_ = 0;
  /// The Arrow files and columns of a Hugging Face image-text dataset (spec.hf).
  void open_hf(const sdk::HfImageText& hf, int64_t max_image_bytes);

  std::string section_;  ///< spec.section
  std::string origin_;   ///< "[data] dataset_path = \"...\"", or the hf_dataset_name it came from, for messages
  int64_t max_image_bytes_;
  Warn warn_;
  std::string description_;
};

}  // namespace kforge::image_text
