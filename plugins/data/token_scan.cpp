// Token id scans: one sequential pass over a shard's ids (uint16 or uint32, little-endian like the formats).
#include "token_scan.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::builtin::data {
namespace {

template <class T>
T scan_load(const unsigned char* tokens, int64_t i) {
  T v;
  std::memcpy(&v, tokens + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

template <class T>
int64_t scan_max(const unsigned char* tokens, int64_t n) {
  T best = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T v = scan_load<T>(tokens, i);
    best = v > best ? v : best;
  }
  return n == 0 ? -1 : static_cast<int64_t>(best);
}

template <class T>
int64_t scan_first_at_least(const unsigned char* tokens, int64_t n, int64_t bound) {
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<int64_t>(scan_load<T>(tokens, i)) >= bound) return i;
  }
  return -1;
}

}  // namespace

int64_t token_at(const unsigned char* tokens, int64_t i, size_t itemsize) {
  return itemsize == 2 ? scan_load<uint16_t>(tokens, i) : scan_load<uint32_t>(tokens, i);
}

int64_t max_token_id_in_file(const std::string& path, uint64_t offset, int64_t n, size_t itemsize) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw sdk::Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::vector<unsigned char> chunk(size_t{4} << 20);  // a whole number of 2- and 4-byte ids
  int64_t best = -1;
  uint64_t left = static_cast<uint64_t>(n) * itemsize;  // n * itemsize <= the file size (checked at open)
  while (left > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    size_t got = 0;
    while (got < want) {
      const ssize_t k = ::pread(fd, chunk.data() + got, want - got, static_cast<off_t>(offset + got));
      if (k <= 0) {
        const std::string why =
            k == 0 ? "the file ended early (was it truncated while opening?)" : std::strerror(errno);
        ::close(fd);
        throw sdk::Error(fmt::format("{}: cannot read its token ids: {}", path, why));
      }
      got += static_cast<size_t>(k);
    }
    const int64_t ids = static_cast<int64_t>(want / itemsize);
    const int64_t m = itemsize == 2 ? scan_max<uint16_t>(chunk.data(), ids) : scan_max<uint32_t>(chunk.data(), ids);
    best = m > best ? m : best;
    offset += want;
    left -= want;
  }
  ::close(fd);
  return best;
}

int64_t first_token_at_least(const unsigned char* tokens, int64_t n, size_t itemsize, int64_t bound) {
  return itemsize == 2 ? scan_first_at_least<uint16_t>(tokens, n, bound)
                       : scan_first_at_least<uint32_t>(tokens, n, bound);
}

}  // namespace kforge::builtin::data
