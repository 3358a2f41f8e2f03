// NpyTokenWriter: fixed 128-byte v1.0 header rewritten with the final length on close.
#include "data/npy_writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {
constexpr size_t kBufferBytes = 1 << 20;
}  // namespace

std::string dtype_name(TokenDtype dtype) { return dtype == TokenDtype::uint16 ? "uint16" : "uint32"; }

TokenDtype dtype_for_vocab(int64_t vocab_size) {
  return vocab_size <= 65536 ? TokenDtype::uint16 : TokenDtype::uint32;
}

std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape) {
  // A 1-tuple needs its trailing comma: "(5,)".
  const std::string dims = fmt::format("{}{}", fmt::join(shape, ", "), shape.size() == 1 ? "," : "");
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  // magic (6), version (2), length (2), dict, '\n'; v1.0 lengths are 16-bit.
  const size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  const size_t header_len = total - 10;
  if (header_len > 0xffff) throw sdk::Error(fmt::format("npy header of shape ({}) is too long", dims));
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header_len & 0xff);
  out += static_cast<char>(header_len >> 8);
  dict.resize(header_len - 1, ' ');
  out += dict;
  out += '\n';
  return out;
}

std::string npy_header(TokenDtype dtype, int64_t length) {
  // 128 bytes for every length (a 1-D dict is under 118), so NpyTokenWriter::close rewrites it in place.
  return npy_header(dtype == TokenDtype::uint16 ? "<u2" : "<u4", {length});
}

NpyTokenWriter::NpyTokenWriter(const std::filesystem::path& path, TokenDtype dtype) : path_(path), dtype_(dtype) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    throw sdk::Error(fmt::format("cannot create '{}': {}", path.string(), std::strerror(errno)));
  }
  const std::string header = npy_header(dtype_, 0);
  if (std::fwrite(header.data(), 1, header.size(), file_) != header.size()) {
    throw sdk::Error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
  }
  buffer_.reserve(kBufferBytes);
}

NpyTokenWriter::~NpyTokenWriter() {
  if (file_ != nullptr) {
    try {
      close();
    } catch (...) {
    }
  }
}

void NpyTokenWriter::append(const int* ids, size_t n) {
  const int64_t max_id = dtype_ == TokenDtype::uint16 ? 0xffff : 0xffffffffLL;
  for (size_t i = 0; i < n; ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id > max_id) {
      throw sdk::Error(fmt::format("{}: token id {} does not fit {}", path_.string(), id, dtype_name(dtype_)));
    }
    if (dtype_ == TokenDtype::uint16) {
      buffer_.push_back(static_cast<unsigned char>(id & 0xff));
      buffer_.push_back(static_cast<unsigned char>((id >> 8) & 0xff));
    } else {
      for (int b = 0; b < 4; ++b) buffer_.push_back(static_cast<unsigned char>((id >> (8 * b)) & 0xff));
    }
    if (buffer_.size() >= kBufferBytes) flush();
  }
  length_ += static_cast<int64_t>(n);
}

void NpyTokenWriter::flush() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    throw sdk::Error(fmt::format("cannot write '{}': {} (disk full?)", path_.string(), std::strerror(errno)));
  }
  buffer_.clear();
}

void NpyTokenWriter::close() {
  if (file_ == nullptr) return;
  std::FILE* f = file_;
  flush();
  const std::string header = npy_header(dtype_, length_);
  const bool ok = std::fseek(f, 0, SEEK_SET) == 0 && std::fwrite(header.data(), 1, header.size(), f) == header.size();
  file_ = nullptr;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    throw sdk::Error(fmt::format("cannot finish '{}': {}", path_.string(), std::strerror(errno)));
  }
}

void write_npy_tokens(const std::filesystem::path& path, TokenDtype dtype, const std::vector<int>& ids) {
  NpyTokenWriter w(path, dtype);
  w.append(ids);
  w.close();
}

}  // namespace kforge::data
