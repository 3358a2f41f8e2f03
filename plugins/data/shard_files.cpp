// Shard discovery and read-only memory maps (POSIX fnmatch, open, mmap, munmap).
#include "shard_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fnmatch.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "kforge/sdk/error.h"

namespace kforge::builtin::data {

std::vector<std::string> find_shards(const std::string& dir, const std::string& pattern) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (dir.empty()) {
    throw sdk::ConfigError("no data directory given: set [data] dataset_path (or [eval] dataset_path) to a "
                           "directory of token shards (see `kforge prepare-data --help`)");
  }
  if (!fs::exists(dir, ec)) {
    throw sdk::ConfigError(fmt::format("data directory '{}' does not exist (check [data] dataset_path)", dir));
  }
  if (!fs::is_directory(dir, ec)) {
    throw sdk::ConfigError(fmt::format("data path '{}' is not a directory; dataset_path must name the directory that "
                                 "holds the shards, and file_pattern selects them",
                                 dir));
  }
  // An entry the pattern does not select is never looked at, so a broken one hides nothing. One it selects
  // but cannot stat (a symlink loop, a dangling link) is refused by name rather than skipped: training on
  // fewer shards than the user pointed at would silently change the data.
  std::vector<std::string> names;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (::fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
    std::error_code type_ec;
    const bool regular = it->is_regular_file(type_ec);
    if (type_ec) {
      throw sdk::Error(
          fmt::format("{}: matches file_pattern '{}' but cannot be opened: {} (a symlink loop or a "
                      "dangling link?); fix or remove it, or narrow [data] file_pattern",
                      it->path().string(), pattern, type_ec.message()));
    }
    if (regular) names.push_back(name);
  }
  if (ec) throw sdk::Error(fmt::format("cannot list data directory '{}': {}", dir, ec.message()));
  if (names.empty()) {
    throw sdk::ConfigError(fmt::format("no file in '{}' matches file_pattern '{}' (check [data] file_pattern, e.g. "
                                 "\"*.npy\" or \"*.bin\")",
                                 dir, pattern));
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> paths;
  paths.reserve(names.size());
  for (const auto& n : names) paths.push_back((fs::path(dir) / n).string());
  return paths;
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw sdk::Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw sdk::Error(fmt::format("{}: cannot stat: {}", path, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw sdk::Error(fmt::format("{}: not a regular file; token shards must be plain files", path));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw sdk::Error(fmt::format("{}: cannot mmap {} bytes: {}", path, size_, std::strerror(err)));
    }
    data_ = static_cast<const unsigned char*>(p);
  }
  ::close(fd);  // the mapping stays valid
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace kforge::builtin::data
