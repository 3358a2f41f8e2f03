// Data files through open + fstat (regular files up to a cap), and manifest paths confined to their directory.
#include "image_text_io/regular_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "image_text_io/sample_error.h"
#include "kforge/sdk/error.h"

namespace kforge::image_text {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string stat_refusal(const std::string& path, const struct stat& st, int64_t max_bytes,
                         const std::string& cap_key) {
  if (!S_ISREG(st.st_mode)) return fmt::format("'{}' is {}, not a regular file; only regular files are read", path,
                                               kind_of(st.st_mode));
  if (st.st_size > max_bytes) {
    return fmt::format("'{}' has {} bytes, more than {} = {}; raise it if the file is genuine", path, st.st_size,
                       cap_key, max_bytes);
  }
  return "";
}

struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string data_file_refusal(const std::string& path, int64_t max_bytes, const std::string& cap_key) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return fmt::format("cannot read '{}': {}", path, std::strerror(errno));
  return stat_refusal(path, st, max_bytes, cap_key);
}

std::string read_data_file(const std::string& path, int64_t max_bytes, const std::string& cap_key,
                           const std::string& what) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below, unread).
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  struct stat st {};
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0) {
    throw SampleError(fmt::format("{}: cannot read '{}': {}", what, path, std::strerror(errno)));
  }
  if (const std::string refusal = stat_refusal(path, st, max_bytes, cap_key); !refusal.empty()) {
    throw SampleError(fmt::format("{}: {}", what, refusal));
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      throw SampleError(fmt::format("{}: cannot read '{}': {}", what, path,
                                    got < 0 ? std::strerror(errno) : "it shrank while it was read"));
    }
    done += static_cast<size_t>(got);
  }
  return bytes;
}

std::filesystem::path resolve_manifest_path(const std::filesystem::path& dir, const std::string& path) {
  const std::filesystem::path given(path);
  if (given.is_absolute()) return given;
  const std::filesystem::path normal = given.lexically_normal();
  if (!normal.empty() && *normal.begin() == "..") {
    throw sdk::Error(fmt::format(
        "the relative path \"{}\" leaves the manifest's directory {}; relative paths are read under it (give an "
        "absolute path for a file elsewhere)",
        path, dir.string()));
  }
  return dir / normal;
}

}  // namespace kforge::image_text
