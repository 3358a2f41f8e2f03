// Token id scans: one sequential pass over a shard's ids (uint16 or uint32, little-endian like the formats).
#include "token_scan.h"

#include <cstring>

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

int64_t max_token_id(const unsigned char* tokens, int64_t n, size_t itemsize) {
  return itemsize == 2 ? scan_max<uint16_t>(tokens, n) : scan_max<uint32_t>(tokens, n);
}

int64_t first_token_at_least(const unsigned char* tokens, int64_t n, size_t itemsize, int64_t bound) {
  return itemsize == 2 ? scan_first_at_least<uint16_t>(tokens, n, bound)
                       : scan_first_at_least<uint32_t>(tokens, n, bound);
}

}  // namespace kforge::builtin::data
