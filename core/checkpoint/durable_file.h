// Durable checkpoint writes through POSIX calls (open/write/fsync/rename/symlink, so a shim that
// fails write() is seen): every failure throws sdk::Error naming the path and strerror(errno).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "checkpoint/checksum.h"

namespace kforge::checkpoint {

/// A file created (truncated) for writing; tracks its size and XXH3 as bytes go out.
class DurableFile {
 public:
  explicit DurableFile(std::filesystem::path path);
  ~DurableFile();
  DurableFile(const DurableFile&) = delete;
  DurableFile& operator=(const DurableFile&) = delete;

  void write(const void* data, size_t size);
  /// fsync, then close; the file is durable once this returns.
  void sync_and_close();
  size_t bytes() const { return bytes_; }
  uint64_t checksum() const { return sum_.value(); }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  size_t bytes_ = 0;
  Checksum sum_;
};

/// Writes `bytes` to `path` and fsyncs it.
void write_durable(const std::filesystem::path& path, const std::string& bytes);
/// fsync of a directory (its entries: created, renamed or removed files) .
void sync_directory(const std::filesystem::path& dir);
void make_directories(const std::filesystem::path& dir);
/// rename(2) of `from` onto `to` (atomic within one filesystem).
void rename_path(const std::filesystem::path& from, const std::filesystem::path& to);
/// Where stage_symlink puts `link`'s next version: link.tmp.
std::filesystem::path staged_symlink(const std::filesystem::path& link);
/// staged_symlink(link) made a symlink to `target` (an older one replaced); `link` itself is untouched.
void stage_symlink(const std::filesystem::path& link, const std::string& target);
/// The staged symlink renamed onto `link` (atomic: `link` is the old or the new symlink, never missing).
void commit_symlink(const std::filesystem::path& link);
/// remove_all, naming the path on failure.
void remove_tree(const std::filesystem::path& path);

}  // namespace kforge::checkpoint
