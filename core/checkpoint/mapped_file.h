// MappedFile: a whole file mapped read-only into memory (POSIX mmap), unmapped on destruction.
#pragma once

#include <filesystem>
#include <string_view>

namespace kforge::checkpoint {

/// The bytes are read from the page cache on first touch; nothing is copied.
class MappedFile {
 public:
  /// Throws sdk::Error naming `path` when it is missing, unreadable or cannot be mapped.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;  ///< null for an empty file (mmap refuses length 0)
  size_t size_ = 0;
};

}  // namespace kforge::checkpoint
