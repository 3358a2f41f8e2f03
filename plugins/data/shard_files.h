// Shard discovery (glob over a directory, sorted by name) and read-only POSIX memory maps.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kforge::builtin::data {

/// Regular files in `dir` whose names match the glob `pattern`, sorted by name. Throws
/// kforge::sdk::Error when `dir` is missing or not a directory, when nothing matches, or naming the
/// entry when one that matches cannot be stat'ed (a symlink loop, a dangling link).
std::vector<std::string> find_shards(const std::string& dir, const std::string& pattern);

/// A whole file mapped read-only; unmapped on destruction. Empty files map to nothing.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kforge::builtin::data
