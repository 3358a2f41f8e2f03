// NpzWriter: a NumPy .npz file (a zip of .npy arrays, as numpy.savez writes) built with libarchive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

struct archive;

namespace kforge::data {

class NpzWriter {
 public:
  /// Creates (truncates) `path`; throws kforge::sdk::Error naming it when that fails.
  explicit NpzWriter(const std::filesystem::path& path);
  ~NpzWriter();  ///< closes if still open (errors then are swallowed: call close())
  NpzWriter(const NpzWriter&) = delete;
  NpzWriter& operator=(const NpzWriter&) = delete;

  /// Adds the array `name` (np.load's key; stored as name + ".npy", uncompressed) of NumPy dtype
  /// `descr` (e.g. "<f4", "<i8") and `shape`, C order: `bytes` bytes at `data`, which must be the
  /// product of `shape` times the dtype's size (checked against `item_size`).
  void add(const std::string& name, const std::string& descr, size_t item_size, const std::vector<int64_t>& shape,
           const void* data, size_t bytes);
  /// Writes the zip's central directory; throws naming the file when that fails.
  void close();

 private:
  std::filesystem::path path_;
  std::unique_ptr<archive, int (*)(archive*)> archive_;
};

}  // namespace kforge::data
