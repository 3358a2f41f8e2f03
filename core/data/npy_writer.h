// NpyTokenWriter: streams a 1-D uint16/uint32 token array to a .npy file (header patched on close).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace kforge::data {

enum class TokenDtype { uint16, uint32 };

/// "uint16" / "uint32".
std::string dtype_name(TokenDtype dtype);
/// uint16 when every id of a `vocab_size` vocabulary fits (vocab_size <= 65536), else uint32.
TokenDtype dtype_for_vocab(int64_t vocab_size);
/// The NumPy 1.0 header of a C-order array of NumPy dtype `descr` (e.g. "<f4") and `shape`, padded
/// with spaces to a multiple of 64 bytes.
std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape);
/// The 128-byte NumPy 1.0 header of a C-order 1-D array of `length` tokens.
std::string npy_header(TokenDtype dtype, int64_t length);

class NpyTokenWriter {
 public:
  /// Creates (truncates) `path`; throws kforge::sdk::Error naming it when that fails.
  NpyTokenWriter(const std::filesystem::path& path, TokenDtype dtype);
  ~NpyTokenWriter();  ///< closes if still open (errors then are swallowed: call close())
  NpyTokenWriter(const NpyTokenWriter&) = delete;
  NpyTokenWriter& operator=(const NpyTokenWriter&) = delete;

  /// Appends ids; throws when one does not fit the dtype.
  void append(const int* ids, size_t n);
  void append(const std::vector<int>& ids) { append(ids.data(), ids.size()); }
  int64_t size() const { return length_; }
  const std::filesystem::path& path() const { return path_; }
  /// Flushes the data and writes the final header.
  void close();

 private:
  void flush();
  std::filesystem::path path_;
  TokenDtype dtype_;
  std::FILE* file_ = nullptr;
  int64_t length_ = 0;
  std::vector<unsigned char> buffer_;
};

/// Writes `ids` as one .npy file.
void write_npy_tokens(const std::filesystem::path& path, TokenDtype dtype, const std::vector<int>& ids);

}  // namespace kforge::data
