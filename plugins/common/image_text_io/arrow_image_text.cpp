// ArrowImageTextSource: the rows of the Arrow files indexed through data::read_arrow_rows, and each row's image read
// from its file (embedded bytes) or from the path the row names.
#include "image_text_io/arrow_image_text.h"

#include <fmt/format.h>

#include <fstream>
#include <utility>

#include "data/arrow_stream.h"
#include "image_text_io/regular_file.h"
#include "image_text_io/sample_error.h"
#include "kforge/sdk/error.h"

namespace kforge::image_text {

namespace fs = std::filesystem;

ArrowImageTextSource::ArrowImageTextSource(std::vector<fs::path> files, ArrowImageTextColumns columns,
                                           int64_t max_image_bytes)
    : files_(std::move(files)), max_image_bytes_(max_image_bytes) {
  std::vector<data::ArrowColumn> wanted = {{columns.image + ".bytes", data::ArrowKind::binary},
                                           {columns.image + ".path", data::ArrowKind::text},
                                           {columns.text, data::ArrowKind::text}};
  if (!columns.prompt.empty()) wanted.push_back({columns.prompt, data::ArrowKind::text});
  for (size_t f = 0; f < files_.size(); ++f) {
    const std::string name = files_[f].string();
    std::ifstream in(files_[f], std::ios::binary);
    if (!in) throw sdk::Error(fmt::format("cannot open Arrow file '{}'", name));
    data::read_arrow_rows(in, name, wanted, [&](int64_t row, const std::vector<data::ArrowCell>& cells) {
      Row r;
      r.file = static_cast<uint32_t>(f);
      r.row = row;
      if (!cells[0].null && cells[0].size > 0) {
        r.offset = cells[0].file_offset;
        r.bytes = cells[0].size;
      } else if (!cells[1].null && !cells[1].bytes.empty()) {
        r.path = std::string(cells[1].bytes);
      } else {
        throw sdk::Error(fmt::format("Arrow file '{}', row {}: column '{}' holds no image (null, or neither bytes nor "
                                     "a path)",
                                     name, row, columns.image));
      }
      if (cells[2].null) {
        throw sdk::Error(fmt::format("Arrow file '{}', row {}: the caption column '{}' is null", name, row,
                                     columns.text));
      }
      r.caption = std::string(cells[2].bytes);
      if (cells.size() > 3 && !cells[3].null) r.prompt = std::string(cells[3].bytes);
      rows_.push_back(std::move(r));
    });
  }
}

RawSample ArrowImageTextSource::load(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw sdk::Error(fmt::format("Arrow image-text dataset: sample {} out of range (0 to {})", index, size() - 1));
  }
  const Row& r = rows_[static_cast<size_t>(index)];
  const std::string file = files_[r.file].string();
  const std::string key = fmt::format("row {}", r.row);
  if (r.bytes == 0) {
    std::string image = read_data_file(r.path, max_image_bytes_, "[vlm] max_image_bytes",
                                       fmt::format("Arrow file '{}' {}: the image", file, key));
    return RawSample{file, fmt::format("{} ({})", key, r.path), std::move(image), r.caption, r.prompt};
  }
  if (r.bytes > static_cast<uint64_t>(max_image_bytes_)) {
    throw SampleError(fmt::format("Arrow file '{}' {}: the image is {} bytes, more than [vlm] max_image_bytes = {}",
                                  file, key, r.bytes, max_image_bytes_));
  }
  std::string image(static_cast<size_t>(r.bytes), '\0');
  std::ifstream in(files_[r.file], std::ios::binary);
  in.seekg(static_cast<std::streamoff>(r.offset));
  if (!in.read(image.data(), static_cast<std::streamsize>(r.bytes))) {
    throw sdk::Error(fmt::format("Arrow file '{}' {}: cannot read the image's {} bytes at byte {} (was the file "
                                  "changed since the run started?)",
                                  file, key, r.bytes, r.offset));
  }
  return RawSample{file, key, std::move(image), r.caption, r.prompt};
}

}  // namespace kforge::image_text
