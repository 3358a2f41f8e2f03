// Listing and parsing the WebVid CSV partitions, and each clip's path from its video id.
#include "video/webvid_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

#include "kforge/sdk/error.h"
#include "video/csv_reader.h"

namespace kforge::video {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLayout = "raw/<dataset_name>/data/{train|val}/partitions/*.csv";

[[noreturn]] void refuse_webvid(const WebVidOptions& options, const std::string& what) {
  throw sdk::ConfigError(fmt::format("{} = \"{}\": {}", options.root_key, options.data_root, what));
}

// The .csv files of `dir`, in name order.
std::vector<std::string> csv_files(const WebVidOptions& options, const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    refuse_webvid(options,
                  fmt::format("no directory {} (WebVid's captions are expected in {})", dir.string(), kLayout));
  }
  std::vector<std::string> files;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().extension() == ".csv" && it->is_regular_file(type_ec)) files.push_back(it->path().string());
  }
  if (ec) refuse_webvid(options, fmt::format("cannot list {}: {}", dir.string(), ec.message()));
  if (files.empty()) {
    refuse_webvid(options,
                  fmt::format("no .csv file in {} (WebVid's captions are expected in {})", dir.string(), kLayout));
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const WebVidOptions& options, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) refuse_webvid(options, fmt::format("cannot open {}", file));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) refuse_webvid(options, fmt::format("cannot read {}", file));
  return text;
}

}  // namespace

std::string webvid_video_path(const std::string& data_root, const std::string& split, const std::string& id) {
  const fs::path videos = fs::path(data_root) / "raw" / "videos";
  if (split == "validation") return (videos / "validation" / (id + ".mp4")).string();
  return (videos / "train" / id.substr(0, 2) / id.substr(0, 4) / id.substr(0, 6) / (id + ".mp4")).string();
}

WebVidSource::WebVidSource(WebVidOptions options) : options_(std::move(options)) {
  const std::string& root = options_.data_root;
  if (root.empty()) {
    throw sdk::ConfigError(
        fmt::format("{} is not set: the WebVid dataset reads {} under it", options_.root_key, kLayout));
  }
  if (options_.split != "train" && options_.split != "validation") {
    throw sdk::ConfigError(fmt::format("[video] split = \"{}\" must be \"train\" or \"validation\"", options_.split));
  }
  if (options_.dataset_name.empty()) {
    throw sdk::ConfigError("[video] dataset_name is empty: it names raw/<dataset_name>");
  }
  if (options_.max_samples < 0) {
    throw sdk::ConfigError(fmt::format("[video] max_samples = {} must be >= 0 (0: all)", options_.max_samples));
  }
  partitions_ = (fs::path(root) / "raw" / options_.dataset_name / "data" /
                 (options_.split == "train" ? "train" : "val") / "partitions")
                    .string();
  for (const std::string& file : csv_files(options_, partitions_)) {
    if (!read_partition(file)) break;
  }
  if (rows_.empty()) refuse_webvid(options_, fmt::format("the .csv files in {} hold no row", partitions_));
}

bool WebVidSource::read_partition(const std::string& file) {
  const std::string text = read_text(options_, file);
  CsvReader reader(text, file);
  CsvRecord record;
  try {
    if (!reader.next(record)) return true;  // an empty partition
  } catch (const sdk::Error& e) {
    refuse_webvid(options_, e.what());
  }
  if (!record.fields.empty() && record.fields[0].rfind("\xEF\xBB\xBF", 0) == 0) record.fields[0].erase(0, 3);
  const auto column = [&](const char* name) {
    const auto it = std::find(record.fields.begin(), record.fields.end(), name);
    if (it == record.fields.end()) {
      refuse_webvid(options_,
                    fmt::format("{}:{}: the header has no \"{}\" column (WebVid's partitions have videoid and name)",
                                file, record.line, name));
    }
    return static_cast<size_t>(it - record.fields.begin());
  };
  const size_t id_column = column("videoid");
  const size_t caption_column = column("name");
  const size_t needed = std::max(id_column, caption_column) + 1;
  files_.push_back(file);
  for (;;) {
    if (options_.max_samples > 0 && static_cast<int64_t>(rows_.size()) >= options_.max_samples) return false;
    try {
      if (!reader.next(record)) return true;
    } catch (const sdk::Error& e) {
      refuse_webvid(options_, e.what());
    }
    if (record.fields.size() < needed) {
      refuse_webvid(
          options_,
          fmt::format("{}:{}: the row has {} field(s), but the header puts videoid in column {} and name in column {}",
                      file, record.line, record.fields.size(), id_column + 1, caption_column + 1));
    }
    const std::string& id = record.fields[id_column];
    if (id.empty()) refuse_webvid(options_, fmt::format("{}:{}: the row's videoid is empty", file, record.line));
    // An id names a file under raw/videos: no separator, and no leading dot ("..", or a prefix such as "../x").
    if (id.find_first_of("/\\") != std::string::npos || id.front() == '.') {
      refuse_webvid(options_, fmt::format("{}:{}: the row's videoid \"{}\" is not an id (it may not hold '/' or '\\' "
                                          "or start with '.'): clips are read under raw/videos only",
                                          file, record.line, id));
    }
    rows_.push_back(Row{std::move(record.fields[id_column]), std::move(record.fields[caption_column]),
                        static_cast<uint32_t>(files_.size() - 1), record.line});
  }
}

Clip WebVidSource::clip(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw sdk::Error(fmt::format("WebVid dataset: clip {} out of range (0 to {})", index, size() - 1));
  }
  const Row& row = rows_[static_cast<size_t>(index)];
  return Clip{webvid_video_path(options_.data_root, options_.split, row.id), row.caption, options_.prompt,
              fmt::format("WebVid clip {} ({} line {})", row.id, files_[row.file], row.line)};
}

std::string WebVidSource::describe() const {
  return fmt::format("WebVid {} {}: {} clips from {} CSV file{} in {}{}", options_.dataset_name, options_.split, size(),
                     files_.size(), files_.size() == 1 ? "" : "s", partitions_,
                     options_.max_samples > 0 ? fmt::format(" ([video] max_samples = {})", options_.max_samples) : "");
}

}  // namespace kforge::video
