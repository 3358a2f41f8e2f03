// MappedFile: open, fstat, mmap(PROT_READ, MAP_PRIVATE), close the descriptor; munmap at the end.
#include "checkpoint/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "kforge/sdk/error.h"

namespace kforge::checkpoint {

MappedFile::MappedFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw sdk::Error(fmt::format("{}: missing or unreadable ({})", path.string(), std::strerror(errno)));
  struct stat info {};
  const bool stated = ::fstat(fd, &info) == 0;
  if (!stated || !S_ISREG(info.st_mode)) {
    const std::string why = stated ? "not a regular file" : std::strerror(errno);
    ::close(fd);
    throw sdk::Error(fmt::format("{}: missing or unreadable ({})", path.string(), why));
  }
  size_ = static_cast<size_t>(info.st_size);
  if (size_ > 0) {
    data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data_ == MAP_FAILED) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw sdk::Error(fmt::format("{}: cannot be mapped into memory ({})", path.string(), why));
    }
  }
  ::close(fd);  // the mapping stays valid without the descriptor
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace kforge::checkpoint
