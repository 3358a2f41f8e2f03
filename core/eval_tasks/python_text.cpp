// Python's string semantics on UTF-8: code points decoded by utf8proc, whitespace and case as CPython defines them.
#include "eval_tasks/python_text.h"

#include <utf8proc.h>

namespace kforge::eval_tasks {
namespace {

// The code point at text[pos] and its length in bytes; a byte that does not start valid UTF-8 counts as itself.
std::pair<char32_t, size_t> py_decode(std::string_view text, size_t pos) {
  utf8proc_int32_t c = 0;
  const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                                              static_cast<utf8proc_ssize_t>(text.size() - pos), &c);
  if (n <= 0) return {static_cast<unsigned char>(text[pos]), 1};
  return {static_cast<char32_t>(c), static_cast<size_t>(n)};
}

// The start of the code point that ends just before `end`.
size_t py_previous(std::string_view text, size_t end) {
  size_t start = end - 1;
  while (start > 0 && end - start < 4 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return py_decode(text, start).second == end - start ? start : end - 1;
}

void py_append(std::string& out, utf8proc_int32_t c) {
  utf8proc_uint8_t bytes[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(c, bytes);
  out.append(reinterpret_cast<const char*>(bytes), static_cast<size_t>(n));
}

}  // namespace

bool py_isspace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string py_strip(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end) {
    const auto [c, n] = py_decode(text, begin);
    if (!py_isspace(c)) break;
    begin += n;
  }
  while (end > begin) {
    const size_t start = py_previous(text, end);
    if (!py_isspace(py_decode(text, start).first)) break;
    end = start;
  }
  return std::string(text.substr(begin, end - begin));
}

std::string py_capitalize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const auto [c, n] = py_decode(text, pos);
    const auto code = static_cast<utf8proc_int32_t>(c);
    py_append(out, pos == 0 ? utf8proc_totitle(code) : utf8proc_tolower(code));
    pos += n;
  }
  return out;
}

std::string py_replace(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = text.find(from, pos)) != std::string_view::npos; pos = hit + from.size()) {
    out.append(text.substr(pos, hit - pos));
    out.append(to);
  }
  out.append(text.substr(pos));
  return out;
}

std::string py_strip_inside(std::string_view text, char open, char close) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find(open, pos);
    const size_t end = start == std::string_view::npos ? start : text.find(close, start + 1);
    if (end == std::string_view::npos) break;
    out.append(text.substr(pos, start - pos));
    out += open;
    out += py_strip(text.substr(start + 1, end - start - 1));
    out += close;
    pos = end + 1;
  }
  out.append(text.substr(pos));
  return out;
}

}  // namespace kforge::eval_tasks
