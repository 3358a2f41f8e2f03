// Indexing WebDataset shards with libarchive (one pass per shard, data skipped), and reading one sample's
// members back from the offset of its first header.
#include "image_text_io/webdataset_source.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "image_text_io/sample_error.h"
#include "kforge/sdk/error.h"

namespace kforge::image_text {
namespace {

using ArchiveReader = std::unique_ptr<archive, decltype(&archive_read_free)>;

ArchiveReader new_tar_reader() {
  ArchiveReader a(archive_read_new(), archive_read_free);
  if (!a || archive_read_support_format_tar(a.get()) != ARCHIVE_OK) throw sdk::Error("libarchive: out of memory");
  return a;
}

std::string tar_error(archive* a) {
  const char* message = archive_error_string(a);
  return message ? message : "libarchive gave no reason";
}

// WebDataset's split of a member path: the key is everything before the first dot of the file name, the
// extension (lower-cased) everything after it.
struct MemberName {
  std::string key;
  std::string extension;
};

MemberName split_member_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t dot = path.find('.', slash == std::string::npos ? 0 : slash + 1);
  if (dot == std::string::npos) return {path, ""};
  std::string extension = path.substr(dot + 1);
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return {path.substr(0, dot), extension};
}

bool is_image_extension(const std::string& e) { return e == "jpg" || e == "jpeg" || e == "png" || e == "webp"; }

struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::vector<std::filesystem::path> find_shards(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw sdk::Error(fmt::format("WebDataset: '{}' is neither a .tar shard nor a directory of them", path.string()));
    }
    return {path};
  }
  std::vector<std::filesystem::path> shards;
  for (const auto& entry : std::filesystem::directory_iterator(path)) {
    if (entry.is_regular_file() && entry.path().extension() == ".tar") shards.push_back(entry.path());
  }
  if (shards.empty()) throw sdk::Error(fmt::format("WebDataset: no *.tar shard in '{}'", path.string()));
  std::sort(shards.begin(), shards.end());
  return shards;
}

WebDatasetSource::WebDatasetSource(std::vector<std::filesystem::path> shards, Warn warn, int64_t max_image_bytes)
    : shards_(std::move(shards)), warn_(std::move(warn)), max_image_bytes_(max_image_bytes) {
  if (max_image_bytes <= 0) {
    throw sdk::ConfigError(fmt::format("[vlm] max_image_bytes = {} must be > 0", max_image_bytes));
  }
  for (uint32_t s = 0; s < shards_.size(); ++s) index_shard(s);
  stats_.shards = static_cast<int64_t>(shards_.size());
  stats_.samples = size();
}

void WebDatasetSource::index_shard(uint32_t shard) {
  const std::string name = shards_[shard].string();
  ArchiveReader reader = new_tar_reader();
  archive* a = reader.get();
  if (archive_read_open_filename(a, name.c_str(), 1 << 16) != ARCHIVE_OK) {
    throw sdk::Error(fmt::format("WebDataset: '{}' is not a readable tar archive: {}", name, tar_error(a)));
  }
  Entry current;
  bool has_image = false;
  bool has_caption = false;
  const auto finish = [&] {
    if (current.members == 0) return;
    if (has_image && has_caption) {
      entries_.push_back(current);
    } else {
      ++stats_.incomplete_samples;
      warn_(fmt::format("WebDataset shard '{}': sample '{}' has no {} member; skipped", name, current.key,
                        has_image ? "caption (.txt or .json)" : "image (.jpg, .jpeg, .png or .webp)"));
    }
  };
  const auto file_size = static_cast<int64_t>(std::filesystem::file_size(shards_[shard]));
  const auto truncated = [&](int64_t members_read, const std::string& key, const std::string& reason) {
    ++stats_.truncated_shards;
    warn_(
        fmt::format("WebDataset shard '{}' is truncated or damaged after {} member(s): sample '{}' and the rest of "
                    "the shard skipped ({})",
                    name, members_read, key, reason));
  };
  int64_t members_read = 0;
  for (;;) {
    archive_entry* entry = nullptr;
    const int status = archive_read_next_header(a, &entry);
    if (status == ARCHIVE_EOF) break;
    if (status < ARCHIVE_WARN) {
      if (members_read == 0) {
        throw sdk::Error(fmt::format("WebDataset: '{}' is not a readable tar archive: {}", name, tar_error(a)));
      }
      truncated(members_read, current.members > 0 ? current.key : std::string("(next)"), tar_error(a));
      return;
    }
    ++members_read;
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const MemberName member = split_member_name(archive_entry_pathname(entry));
    if (current.members == 0 || member.key != current.key) {
      finish();
      current = Entry{shard, 0, archive_read_header_position(a), member.key};
      has_image = has_caption = false;
    }
    // The member's data (after its 512-byte header, at least) must lie within the file.
    const int64_t data_end = archive_read_header_position(a) + 512 + archive_entry_size(entry);
    if (data_end > file_size) {
      truncated(members_read - 1, member.key,
                fmt::format("member '{}' ends at byte {} of a {}-byte file", archive_entry_pathname(entry), data_end,
                            file_size));
      return;
    }
    ++current.members;
    has_image = has_image || is_image_extension(member.extension);
    has_caption = has_caption || member.extension == "txt" || member.extension == "json";
  }
  finish();
}

RawSample WebDatasetSource::load(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw sdk::Error(fmt::format("WebDataset: sample {} out of range (0 to {})", index, size() - 1));
  }
  const Entry& e = entries_[index];
  const std::string name = shards_[e.shard].string();
  FileDescriptor file{::open(name.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0 || ::lseek(file.fd, e.offset, SEEK_SET) != e.offset) {
    throw SampleError(fmt::format("WebDataset shard '{}': cannot open it to read sample '{}'", name, e.key));
  }
  ArchiveReader reader = new_tar_reader();
  archive* a = reader.get();
  if (archive_read_open_fd(a, file.fd, 1 << 16) != ARCHIVE_OK) {
    throw SampleError(fmt::format("WebDataset shard '{}': sample '{}': {}", name, e.key, tar_error(a)));
  }
  RawSample sample{name, e.key, {}, {}, {}};
  std::string json;
  bool has_text = false;
  for (int32_t m = 0; m < e.members; ++m) {
    archive_entry* entry = nullptr;
    if (archive_read_next_header(a, &entry) < ARCHIVE_WARN) {
      throw SampleError(fmt::format("WebDataset shard '{}': sample '{}': {}", name, e.key, tar_error(a)));
    }
    const MemberName member = split_member_name(archive_entry_pathname(entry));
    if (member.key != e.key) {
      throw sdk::Error(
          fmt::format("WebDataset shard '{}' changed since it was indexed: member '{}' where sample '{}' was", name,
                      archive_entry_pathname(entry), e.key));
    }
    const bool wanted = is_image_extension(member.extension) ? sample.image.empty()
                                                             : member.extension == "txt" || member.extension == "json";
    if (!wanted) continue;
    if (archive_entry_size(entry) > max_image_bytes_) {  // the image's cap bounds the caption's too
      throw SampleError(fmt::format("WebDataset shard '{}': sample '{}': member '{}' has {} bytes, more than [vlm] "
                                    "max_image_bytes = {}; raise it if the member is genuine",
                                    name, e.key, archive_entry_pathname(entry), archive_entry_size(entry),
                                    max_image_bytes_));
    }
    std::string data(static_cast<size_t>(std::max<la_int64_t>(archive_entry_size(entry), 0)), '\0');
    const la_ssize_t got = data.empty() ? 0 : archive_read_data(a, data.data(), data.size());
    if (got != static_cast<la_ssize_t>(data.size())) {
      throw SampleError(fmt::format("WebDataset shard '{}': sample '{}': member '{}' is cut short ({})", name, e.key,
                                    archive_entry_pathname(entry),
                                    got < 0 ? tar_error(a) : fmt::format("{} of {} bytes", got, data.size())));
    }
    if (is_image_extension(member.extension)) {
      sample.image = std::move(data);
    } else if (member.extension == "txt") {
      sample.caption = std::move(data);
      has_text = true;
    } else {
      json = std::move(data);
    }
  }
  if (!json.empty()) {
    const nlohmann::json meta = nlohmann::json::parse(json, nullptr, false);
    if (!meta.is_object()) {
      throw SampleError(fmt::format("WebDataset shard '{}': sample '{}': its .json is not a JSON object", name, e.key));
    }
    for (const char* field : {"caption", "text"}) {
      if (has_text || !meta.contains(field) || !meta[field].is_string()) continue;
      sample.caption = meta[field].get<std::string>();
      has_text = true;
    }
    if (meta.contains("prompt") && meta["prompt"].is_string()) sample.prompt = meta["prompt"].get<std::string>();
  }
  if (!has_text) {
    throw SampleError(
        fmt::format("WebDataset shard '{}': sample '{}' has neither a .txt caption nor a \"caption\" or "
                    "\"text\" string in its .json",
                    name, e.key));
  }
  return sample;
}

}  // namespace kforge::image_text
