// ArrowImageTextSource: a Hugging Face image-text dataset in Arrow IPC stream files (a save_to_disk directory's or
// the `datasets` cache's), as KempnerForge's HuggingFaceVLMDataset reads it: an Image column (a struct of `bytes` and
// `path`), a caption column and an optional prompt column. The files are read once to index the rows (captions and
// prompts kept, image bytes located, not read); sample i is the i-th row of the files in order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "image_text_io/image_decode.h"
#include "image_text_io/image_text_source.h"

namespace kforge::image_text {

struct ArrowImageTextColumns {
  std::string image = "image";  ///< [data] hf_dataset_image_field
  std::string text = "text";    ///< [data] hf_dataset_text_field
  std::string prompt;           ///< [data] hf_dataset_prompt_field; "": none
};

class ArrowImageTextSource : public ImageTextSource {
 public:
  /// Indexes the rows of `files`. Throws sdk::Error naming the file (and row) for a file that cannot be read (the
  /// Arrow reader's refusals: a missing column, one of another type), a row whose image is null or has neither bytes
  /// nor a path, or whose caption is null (KempnerForge's dataset fails on these too). A null prompt is no prompt.
  ArrowImageTextSource(std::vector<std::filesystem::path> files, ArrowImageTextColumns columns,
                       int64_t max_image_bytes = kDefaultMaxImageBytes);

  int64_t size() const override { return static_cast<int64_t>(rows_.size()); }
  /// The row's image bytes (embedded, read from its Arrow file; else the file its path names, relative to the
  /// working directory as `datasets` opens it); more than max_image_bytes, or a path that is not a readable regular
  /// file, throws SampleError.
  RawSample load(int64_t index) const override;

 private:
  struct Row {
    uint32_t file = 0;
    int64_t row = 0;                   ///< in its file
    uint64_t offset = 0, bytes = 0;    ///< the embedded image's place in the file; bytes 0: read `path`
    std::string path, caption, prompt;
  };

  std::vector<std::filesystem::path> files_;
  int64_t max_image_bytes_;
  std::vector<Row> rows_;
};

}  // namespace kforge::image_text
