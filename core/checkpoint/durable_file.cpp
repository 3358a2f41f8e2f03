// Durable checkpoint writes: POSIX write/fsync/rename with the path and strerror(errno) on failure.
#include "checkpoint/durable_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kforge/sdk/error.h"

namespace kforge::checkpoint {
namespace fs = std::filesystem;
namespace {

sdk::Error write_error(const char* what, const fs::path& path, int error) {
  return sdk::Error(fmt::format("cannot {} checkpoint path {}: {} (disk full, read-only or no permission?)", what,
                                path.string(), std::strerror(error)));
}

}  // namespace

DurableFile::DurableFile(fs::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw write_error("create", path_, errno);
}

DurableFile::~DurableFile() {
  if (fd_ >= 0) ::close(fd_);
}

void DurableFile::write(const void* data, size_t size) {
  sum_.update(data, size);
  bytes_ += size;
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw write_error("write", path_, n == 0 ? EIO : errno);
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void DurableFile::sync_and_close() {
  if (::fsync(fd_) != 0) throw write_error("fsync", path_, errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw write_error("close", path_, errno);
}

void write_durable(const fs::path& path, const std::string& bytes) {
  DurableFile file(path);
  file.write(bytes.data(), bytes.size());
  file.sync_and_close();
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw write_error("open", dir, errno);
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;  // EINVAL: the filesystem cannot sync directories
  const int error = errno;
  ::close(fd);
  if (!synced) throw write_error("fsync", dir, error);
}

void make_directories(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw write_error("create the directory", dir, ec.value());
}

void rename_path(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw write_error(fmt::format("rename {} onto", from.string()).c_str(), to, errno);
  }
}

fs::path staged_symlink(const fs::path& link) { return link.string() + ".tmp"; }

void stage_symlink(const fs::path& link, const std::string& target) {
  const fs::path tmp = staged_symlink(link);
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) throw write_error("remove", tmp, errno);
  if (::symlink(target.c_str(), tmp.c_str()) != 0) throw write_error("create the symlink", tmp, errno);
}

void commit_symlink(const fs::path& link) { rename_path(staged_symlink(link), link); }

void remove_tree(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw write_error("remove", path, ec.value());
}

}  // namespace kforge::checkpoint
