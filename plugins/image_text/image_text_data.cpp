// Choosing the source for the dataset path (a JSONL manifest or a directory of WebDataset shards), the
// preprocessing from the host's spec, and streams that hand out the decode pool's samples as sdk samples.
#include "image_text/image_text_data.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

#include "image_text_io/arrow_image_text.h"
#include "image_text_io/decode_pool.h"
#include "image_text_io/image_decode.h"
#include "image_text_io/image_transform.h"
#include "image_text_io/jsonl_manifest.h"
#include "image_text_io/regular_file.h"
#include "image_text_io/webdataset_source.h"
#include "kforge/sdk/error.h"

namespace kforge::image_text {
namespace {

namespace fs = std::filesystem;

constexpr const char* kExpected = "expected a directory of WebDataset .tar shards, or a .jsonl manifest";

std::string plural(int64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// The regular files of `dir` (the value of [section] dataset_path) whose names match `pattern` ([section]
// file_pattern), in name order. Throws ConfigError when none does, saying to set file_pattern when the directory holds
// .tar files (the default file_pattern selects token shards).
std::vector<fs::path> matching_shards(const std::string& section, const fs::path& dir, const std::string& pattern) {
  std::vector<std::string> names;
  int64_t tar_files = 0;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    const bool regular = it->is_regular_file(type_ec);
    if (regular && it->path().extension() == ".tar") ++tar_files;
    if (::fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
    if (type_ec) {
      throw sdk::Error(
          fmt::format("{}: matches [{}] file_pattern = \"{}\" but cannot be opened: {} (a symlink "
                      "loop or a dangling link?); fix or remove it, or narrow the pattern",
                      it->path().string(), section, pattern, type_ec.message()));
    }
    if (regular) names.push_back(name);
  }
  if (ec)
    throw sdk::Error(fmt::format("cannot list [{}] dataset_path = \"{}\": {}", section, dir.string(), ec.message()));
  if (names.empty() && tar_files > 0) {
    throw sdk::ConfigError(fmt::format(
        "[{0}] dataset_path = \"{1}\": no file matches [{0}] file_pattern = \"{2}\", but the directory holds {3}: "
        "set [{0}] file_pattern = \"*.tar\" to read them as WebDataset shards",
        section, dir.string(), pattern, plural(tar_files, ".tar file", ".tar files")));
  }
  if (names.empty()) {
    throw sdk::ConfigError(
        fmt::format("[{0}] dataset_path = \"{1}\": no file matches [{0}] file_pattern = \"{2}\"; {3}", section,
                    dir.string(), pattern, kExpected));
  }
  std::sort(names.begin(), names.end());
  std::vector<fs::path> shards;
  shards.reserve(names.size());
  for (const std::string& name : names) shards.push_back(dir / name);
  return shards;
}

// Opens a source; its errors (a bad manifest line, a shard that is not a tar archive, an empty manifest) are the
// user's data, so they become ConfigErrors naming [section] dataset_path and `path`.
template <typename Open>
auto open_source(const std::string& section, const std::string& path, Open open) {
  try {
    return open();
  } catch (const sdk::ConfigError&) {
    throw;
  } catch (const sdk::Error& e) {
    throw sdk::ConfigError(fmt::format("[{}] dataset_path = \"{}\": {}", section, path, e.what()));
  }
}

// "WebDataset: 3 shards in /dir, 120 samples (2 incomplete skipped, 1 shard truncated)"; the parenthesis only
// when something was dropped while indexing.
std::string webdataset_description(const std::string& dir, int64_t shards, const WebDatasetSource& source) {
  const WebDatasetIndexStats& stats = source.stats();
  std::string dropped;
  if (stats.incomplete_samples > 0) dropped = fmt::format("{} incomplete skipped", stats.incomplete_samples);
  if (stats.truncated_shards > 0) {
    if (!dropped.empty()) dropped += ", ";
    dropped += plural(stats.truncated_shards, "shard truncated", "shards truncated");
  }
  return fmt::format("WebDataset: {} in {}, {}{}", plural(shards, "shard", "shards"), dir,
                     plural(source.size(), "sample", "samples"), dropped.empty() ? "" : " (" + dropped + ")");
}

class PoolStream : public sdk::ImageTextStream {
 public:
  PoolStream(std::shared_ptr<const ImageTextSource> source, PreprocessOptions preprocess,
             std::function<int64_t(int64_t)> index_at, int64_t start, int64_t end, DecodePoolOptions options)
      : pool_(std::move(source), std::move(preprocess), std::move(index_at), start, end, std::move(options)) {}

  std::optional<sdk::ImageTextSample> next() override {
    std::optional<Sample> sample = pool_.next();
    if (!sample) return std::nullopt;
    return sdk::ImageTextSample{sample->position, std::move(sample->pixel_values), std::move(sample->input_ids),
                                std::move(sample->labels)};
  }
  int64_t skipped() const override { return pool_.stats().skipped; }

 private:
  DecodePool pool_;
};

}  // namespace

ImageTextData::ImageTextData(const sdk::ImageTextSpec& spec, int64_t max_image_bytes)
    : max_image_bytes_(max_image_bytes), warn_(spec.warn ? spec.warn : stderr_warn()) {
  if (spec.image_size <= 0) {
    throw sdk::ConfigError(fmt::format(
        "image_text dataset: image size {} must be > 0 (the vision encoder's input size)", spec.image_size));
  }
  if (spec.max_text_len <= 0) {
    throw sdk::ConfigError(fmt::format("[vlm] max_text_len = {} must be > 0", spec.max_text_len));
  }
  if (!spec.tokenize) throw sdk::Error("image_text dataset: the host gave no tokenizer");
  if (max_image_bytes <= 0) {
    throw sdk::ConfigError(fmt::format("[vlm] max_image_bytes = {} must be > 0", max_image_bytes));
  }
  preprocess_.image_height = spec.image_size;
  preprocess_.image_width = spec.image_size;
  preprocess_.normalization = Normalization{spec.pixels.mean, spec.pixels.std};
  preprocess_.text = TextOptions{spec.max_text_len, spec.pad_id, spec.eos_id};
  preprocess_.tokenize = spec.tokenize;
  num_workers_ = spec.num_workers;
  queue_depth_ = spec.queue_depth;
  section_ = spec.section;
  origin_ = fmt::format("[{}] dataset_path = \"{}\"", spec.section, spec.path);

  if (spec.hf) {
    open_hf(*spec.hf, max_image_bytes);
    return;
  }
  if (spec.path.empty()) {
    description_ = "no samples: images read one at a time";
    return;
  }
  const fs::path path(spec.path);
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    throw sdk::ConfigError(
        fmt::format("[{}] dataset_path = \"{}\" does not exist; {}", spec.section, spec.path, kExpected));
  }
  if (fs::is_regular_file(status) && path.extension() == ".jsonl") {
    source_ = open_source(spec.section, spec.path, [&] { return std::make_shared<JsonlManifestSource>(path, max_image_bytes); });
    description_ = fmt::format("JSONL manifest {}: {}", spec.path, plural(source_->size(), "sample", "samples"));
  } else if (fs::is_directory(status)) {
    const std::string pattern = spec.file_pattern.empty() ? "*.tar" : spec.file_pattern;
    std::vector<fs::path> shards = matching_shards(spec.section, path, pattern);
    const int64_t shard_count = static_cast<int64_t>(shards.size());
    auto webdataset = open_source(spec.section, spec.path,
                                  [&] { return std::make_shared<WebDatasetSource>(std::move(shards), warn_, max_image_bytes); });
    description_ = webdataset_description(spec.path, shard_count, *webdataset);
    source_ = std::move(webdataset);
  } else {
    throw sdk::ConfigError(fmt::format("[{}] dataset_path = \"{}\" is neither a directory nor a .jsonl file; {}",
                                       spec.section, spec.path, kExpected));
  }
  if (source_->size() == 0) {
    throw sdk::ConfigError(fmt::format("[{}] dataset_path = \"{}\" holds no usable sample ({}); {}", spec.section,
                                       spec.path, description_, kExpected));
  }
}

void ImageTextData::open_hf(const sdk::HfImageText& hf, int64_t max_image_bytes) {
  origin_ = hf.where;
  const ArrowImageTextColumns columns{hf.image_field, hf.text_field, hf.prompt_field};
  try {
    source_ = std::make_shared<ArrowImageTextSource>(std::vector<fs::path>(hf.files.begin(), hf.files.end()), columns,
                                                     max_image_bytes);
  } catch (const sdk::ConfigError&) {
    throw;
  } catch (const sdk::Error& e) {
    throw sdk::ConfigError(fmt::format(
        "{}: {} (read as [data] hf_dataset_image_field = \"{}\", an Image column: a struct of bytes and path as "
        "`datasets` writes it; hf_dataset_text_field = \"{}\", the caption; hf_dataset_prompt_field = \"{}\")",
        hf.where, e.what(), hf.image_field, hf.text_field, hf.prompt_field));
  }
  const std::string files = plural(static_cast<int64_t>(hf.files.size()), "Arrow file", "Arrow files");
  description_ = fmt::format("Hugging Face dataset: {}{}, {}", files,
                             hf.files.empty() ? "" : " in " + fs::path(hf.files.front()).parent_path().string(),
                             plural(source_->size(), "sample", "samples"));
  if (source_->size() == 0) throw sdk::ConfigError(fmt::format("{}: holds no sample ({})", hf.where, description_));
}

std::unique_ptr<sdk::ImageTextStream> ImageTextData::stream(std::function<int64_t(int64_t)> index_at, int64_t start,
                                                            int64_t end) const {
  if (!source_)
    throw sdk::Error("image_text dataset: no [" + section_ + "] dataset_path was given, so there are no samples");
  DecodePoolOptions options;
  options.num_workers = num_workers_;
  options.queue_depth = queue_depth_;
  options.warn = warn_;
  options.dataset = fmt::format("{} ({})", origin_, description_);
  return std::make_unique<PoolStream>(source_, preprocess_, std::move(index_at), start, end, std::move(options));
}

at::Tensor ImageTextData::pixel_values(const std::string& image_file) const {
  const std::string bytes = read_data_file(image_file, max_image_bytes_, "[vlm] max_image_bytes", "the image");
  const RgbImage image = decode_image(bytes, image_file);
  return to_pixel_values(image, preprocess_.image_height, preprocess_.image_width, preprocess_.normalization);
}

}  // namespace kforge::image_text
