// .npy header parsing for token shards (a strict subset of the NumPy format, version 1-3), safe on any bytes.
#include "npy_header.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <limits>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::builtin::data {
namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kQuotedChars = 120;  // header text quoted in an error message, at most

[[noreturn]] void npy_fail(const std::string& file, const std::string& what) {
  throw sdk::Error(fmt::format("{}: {}", file, what));
}

// `text` for an error message: printable ASCII only, at most kQuotedChars characters.
std::string npy_quote(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < kQuotedChars; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  return text.size() > kQuotedChars ? out + "..." : out;
}

// The header dict, read the way NumPy writes it: {'descr': '<u2', 'fortran_order': False, 'shape': (N,), }
// (either quote style, any spacing, keys in any order, each of the three exactly once, nothing else).
class NpyDictReader {
 public:
  NpyDictReader(const std::string& file, const std::string& text) : file_(file), text_(text) {}

  void read(std::string* descr, bool* fortran, std::vector<uint64_t>* shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = string_literal("a key");
      expect(':');
      if (key == "descr" && !seen_descr) {
        *descr = string_literal("the descr value");
        seen_descr = true;
      } else if (key == "fortran_order" && !seen_fortran) {
        *fortran = boolean();
        seen_fortran = true;
      } else if (key == "shape" && !seen_shape) {
        *shape = tuple();
        seen_shape = true;
      } else {
        bad(fmt::format("unexpected or repeated key '{}'", npy_quote(key)));
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (pos_ != text_.size()) bad("text after the closing '}'");
    if (!seen_descr || !seen_fortran || !seen_shape) bad("it needs the keys 'descr', 'fortran_order' and 'shape'");
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    npy_fail(file_, fmt::format("invalid .npy header ({} at byte {} of the header text: {}); write the shard "
                                "with numpy.save or kforge prepare-data",
                                what, pos_, npy_quote(text_)));
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) bad(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string string_literal(const char* what) {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) bad(fmt::format("expected {}", what));
    const char quote = text_[pos_];
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) bad("unterminated string");
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    if (value.find('\\') != std::string::npos) bad("escape in a string");
    pos_ = end + 1;
    return value;
  }
  bool word(const char* w) {
    const size_t n = std::strlen(w);
    if (text_.compare(pos_, n, w) != 0) return false;
    const size_t after = pos_ + n;
    if (after < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[after])) || text_[after] == '_')) {
      return false;
    }
    pos_ = after;
    return true;
  }
  bool boolean() {
    skip_space();
    if (word("True")) return true;
    if (word("False")) return false;
    bad("fortran_order is neither True nor False");
  }
  // A tuple of non-negative integers (Python 2 "L" suffixes allowed), each at most INT64_MAX.
  std::vector<uint64_t> tuple() {
    expect('(');
    std::vector<uint64_t> dims;
    while (!peek(')')) {
      if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        bad("shape is not a tuple of non-negative integers");
      }
      size_t end = pos_;
      while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
      uint64_t v = 0;
      for (size_t i = pos_; i < end; ++i) {
        if (__builtin_mul_overflow(v, uint64_t{10}, &v) ||
            __builtin_add_overflow(v, static_cast<uint64_t>(text_[i] - '0'), &v) ||
            v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          npy_fail(file_, fmt::format("shape dimension {} is larger than any file (over 2^63); the header is "
                                      "corrupt or crafted",
                                      npy_quote(text_.substr(pos_, end - pos_))));
        }
      }
      pos_ = end;
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
      dims.push_back(v);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return dims;
  }

  const std::string& file_;
  const std::string& text_;
  size_t pos_ = 0;
};

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return npy_quote(s + (dims.size() == 1 ? ",)" : ")"));
}

}  // namespace

NpyInfo parse_npy_header(const std::string& file, const unsigned char* bytes, size_t file_size) {
  if (file_size < 10 || std::memcmp(bytes, kMagic, sizeof kMagic) != 0) {
    npy_fail(file, "not a .npy file (bad magic: expected the bytes \\x93NUMPY at the start)");
  }
  const int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    npy_fail(file, fmt::format("unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor));
  }
  size_t prefix = 10, header_len = bytes[8] | (size_t{bytes[9]} << 8);
  if (major != 1) {
    if (file_size < 12) npy_fail(file, fmt::format("truncated .npy header: the file has only {} bytes", file_size));
    prefix = 12;
    header_len |= (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
  }
  if (header_len > file_size - prefix) {
    npy_fail(file, fmt::format("truncated .npy header: it declares {} header bytes after the {}-byte prefix but "
                               "the file has {} bytes",
                               header_len, prefix, file_size));
  }
  const std::string header(reinterpret_cast<const char*>(bytes + prefix), header_len);

  std::string descr;
  bool fortran = false;
  std::vector<uint64_t> dims;
  NpyDictReader(file, header).read(&descr, &fortran, &dims);

  NpyInfo info;
  info.data_offset = prefix + header_len;
  if (descr == "<u2" || descr == "=u2") {
    info.itemsize = 2;
  } else if (descr == "<u4" || descr == "=u4") {
    info.itemsize = 4;
  } else {
    npy_fail(file, fmt::format("unsupported dtype '{}' (token shards must be little-endian uint16 '<u2' or "
                               "uint32 '<u4'; convert with numpy: arr.astype(np.uint16 or np.uint32))",
                               npy_quote(descr)));
  }
  if (fortran) {
    npy_fail(file,
             "fortran_order is True; token shards must be C-order 1-D arrays (save with np.save on a flat array)");
  }
  if (dims.size() != 1) {
    npy_fail(file, fmt::format("shape {} is not 1-D; token shards must be flat 1-D arrays (use arr.reshape(-1))",
                               shape_text(dims)));
  }
  const size_t available = file_size - info.data_offset;
  uint64_t needed = 0;
  const bool wraps = __builtin_mul_overflow(dims[0], uint64_t{info.itemsize}, &needed);
  if (wraps || needed > available) {
    npy_fail(file, fmt::format("file size {} does not match its header: shape {} of {}-byte tokens needs {} data "
                               "bytes after the {}-byte header, but the file has {}; the file is truncated (an "
                               "interrupted write?) or its header is corrupt",
                               file_size, shape_text(dims), info.itemsize,
                               wraps ? "more than 2^64" : std::to_string(needed), info.data_offset, available));
  }
  if (needed < available) {
    npy_fail(file, fmt::format("file size {} does not match its header: shape {} of {}-byte tokens needs {} bytes; "
                               "the file is longer than its header says",
                               file_size, shape_text(dims), info.itemsize, info.data_offset + needed));
  }
  info.length = static_cast<int64_t>(dims[0]);
  return info;
}

}  // namespace kforge::builtin::data
