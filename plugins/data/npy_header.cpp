// .npy header parsing for token shards (a strict subset of the NumPy format, version 1-3).
#include "npy_header.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::builtin::data {
namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw sdk::Error(fmt::format("{}: {}", file, what));
}

// The text after `'key':` in the header dict, with leading spaces skipped.
size_t value_pos(const std::string& file, const std::string& header, const char* key) {
  const std::string quoted = fmt::format("'{}'", key);
  size_t at = header.find(quoted);
  if (at == std::string::npos) {
    const std::string dq = fmt::format("\"{}\"", key);
    at = header.find(dq);
    if (at == std::string::npos) fail(file, fmt::format("invalid .npy header: no '{}' entry in {}", key, header));
  }
  size_t p = header.find(':', at + quoted.size());
  if (p == std::string::npos) fail(file, fmt::format("invalid .npy header: no value for '{}' in {}", key, header));
  ++p;
  while (p < header.size() && std::isspace(static_cast<unsigned char>(header[p]))) ++p;
  return p;
}

std::string parse_descr(const std::string& file, const std::string& header) {
  size_t p = value_pos(file, header, "descr");
  if (p >= header.size() || (header[p] != '\'' && header[p] != '"')) {
    fail(file, fmt::format("unsupported dtype in .npy header {} (structured arrays are not token shards)", header));
  }
  const char quote = header[p];
  const size_t end = header.find(quote, p + 1);
  if (end == std::string::npos) fail(file, fmt::format("invalid .npy header: unterminated descr in {}", header));
  return header.substr(p + 1, end - p - 1);
}

bool parse_fortran(const std::string& file, const std::string& header) {
  const size_t p = value_pos(file, header, "fortran_order");
  if (header.compare(p, 4, "True") == 0) return true;
  if (header.compare(p, 5, "False") == 0) return false;
  fail(file, fmt::format("invalid .npy header: fortran_order is neither True nor False in {}", header));
}

std::vector<int64_t> parse_shape(const std::string& file, const std::string& header) {
  const size_t p = value_pos(file, header, "shape");
  const size_t end = header.find(')', p);
  if (p >= header.size() || header[p] != '(' || end == std::string::npos) {
    fail(file, fmt::format("invalid .npy header: shape is not a tuple in {}", header));
  }
  std::vector<int64_t> dims;
  size_t i = p + 1;
  while (i < end) {
    while (i < end && (std::isspace(static_cast<unsigned char>(header[i])) || header[i] == ',')) ++i;
    if (i >= end) break;
    if (!std::isdigit(static_cast<unsigned char>(header[i]))) {
      fail(file, fmt::format("invalid .npy header: bad shape {}", header.substr(p, end - p + 1)));
    }
    int64_t v = 0;
    while (i < end && std::isdigit(static_cast<unsigned char>(header[i]))) {
      v = v * 10 + (header[i] - '0');
      ++i;
    }
    while (i < end && header[i] == 'L') ++i;  // Python 2 longs
    dims.push_back(v);
  }
  return dims;
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

}  // namespace

NpyInfo parse_npy_header(const std::string& file, const unsigned char* bytes, size_t file_size) {
  if (file_size < 10 || std::memcmp(bytes, kMagic, sizeof kMagic) != 0) {
    fail(file, "not a .npy file (bad magic: expected the bytes \\x93NUMPY at the start)");
  }
  const int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    fail(file, fmt::format("unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor));
  }
  size_t prefix = 0, header_len = 0;
  if (major == 1) {
    prefix = 10;
    header_len = bytes[8] | (size_t{bytes[9]} << 8);
  } else {
    if (file_size < 12) fail(file, "truncated .npy header");
    prefix = 12;
    header_len = bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
  }
  if (prefix + header_len > file_size) {
    fail(file, fmt::format("truncated .npy header: it declares {} header bytes but the file has {} bytes",
                           prefix + header_len, file_size));
  }
  const std::string header(reinterpret_cast<const char*>(bytes + prefix), header_len);

  NpyInfo info;
  info.data_offset = prefix + header_len;
  const std::string descr = parse_descr(file, header);
  if (descr == "<u2" || descr == "=u2") {
    info.itemsize = 2;
  } else if (descr == "<u4" || descr == "=u4") {
    info.itemsize = 4;
  } else {
    fail(file, fmt::format("unsupported dtype '{}' (token shards must be little-endian uint16 '<u2' or "
                           "uint32 '<u4'; convert with numpy: arr.astype(np.uint16 or np.uint32))",
                           descr));
  }
  if (parse_fortran(file, header)) {
    fail(file, "fortran_order is True; token shards must be C-order 1-D arrays (save with np.save on a flat array)");
  }
  const std::vector<int64_t> dims = parse_shape(file, header);
  if (dims.size() != 1) {
    fail(file, fmt::format("shape {} is not 1-D; token shards must be flat 1-D arrays (use arr.reshape(-1))",
                           shape_text(dims)));
  }
  info.length = dims[0];
  const size_t expected = info.data_offset + static_cast<size_t>(info.length) * info.itemsize;
  if (expected != file_size) {
    fail(file, fmt::format("file size {} does not match its header: shape {} of {}-byte tokens needs {} bytes; "
                           "the file is {}",
                           file_size, shape_text(dims), info.itemsize, expected,
                           file_size < expected ? "truncated (an interrupted write?)" : "longer than its header says"));
  }
  return info;
}

}  // namespace kforge::builtin::data
