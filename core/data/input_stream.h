// InputStream: one input file read in blocks, decompressed on the fly when it is gzip, zstd, xz, bzip2 or
// lz4 (told by its content, through libarchive's raw format and every filter), never held whole in memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct archive;

namespace kforge::data {

class InputStream {
 public:
  /// Opens `path`; throws kforge::sdk::Error naming it when it cannot be read.
  explicit InputStream(const std::filesystem::path& path, size_t block_bytes = 256u << 10);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  /// The next block of (decompressed) text, valid until the next call; empty at the end. Throws
  /// kforge::sdk::Error naming the file and how far it got when the data is damaged or truncated.
  std::string_view read();
  /// "none", or the compression found ("gzip", "zstd", "xz", ...; outermost first, joined by '+').
  const std::string& compression() const { return compression_; }
  /// Bytes of the file consumed so far (compressed bytes for a compressed file).
  uint64_t file_bytes() const;
  /// Decompressed bytes returned so far.
  uint64_t text_bytes() const { return text_bytes_; }

 private:
  [[noreturn]] void fail() const;  ///< throws libarchive's error, naming the file and how far it was read
  std::filesystem::path path_;
  std::unique_ptr<archive, int (*)(archive*)> archive_;
  std::vector<char> block_;
  std::string compression_ = "none";
  uint64_t text_bytes_ = 0;
  bool at_end_ = false;
};

}  // namespace kforge::data
