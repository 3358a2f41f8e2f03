// InputStream: libarchive reading with the raw format (the whole file is one entry) and every filter,
// so a compressed file is recognised by its magic bytes, whatever its name.
#include "data/input_stream.h"

#include <archive.h>
#include <fmt/format.h>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

int input_stream_free(archive* a) { return a ? archive_read_free(a) : ARCHIVE_OK; }

std::string input_stream_error(archive* a) {
  const char* message = archive_error_string(a);
  return message ? message : "libarchive gave no reason";
}

// The decompression filters found, outermost first ("" for a plain file: its only filter is "none").
std::string input_stream_filters(archive* a) {
  std::string names;
  for (int i = 0; i + 1 < archive_filter_count(a); ++i) {
    names += (names.empty() ? "" : "+") + std::string(archive_filter_name(a, i));
  }
  return names;
}

}  // namespace

InputStream::InputStream(const std::filesystem::path& path, size_t block_bytes)
    : path_(path), archive_(archive_read_new(), input_stream_free), block_(std::max<size_t>(block_bytes, 1)) {
  archive* a = archive_.get();
  if (a == nullptr) throw sdk::Error(fmt::format("cannot read input '{}': out of memory", path.string()));
  archive_read_support_filter_all(a);
  archive_read_support_format_raw(a);
  archive_read_support_format_empty(a);  // a 0-byte file is an input without text, not an error
  if (archive_read_open_filename(a, path.c_str(), 64u << 10) != ARCHIVE_OK) fail();
  archive_entry* entry = nullptr;
  const int r = archive_read_next_header(a, &entry);
  if (r == ARCHIVE_EOF) {
    at_end_ = true;
  } else if (r != ARCHIVE_OK) {
    fail();
  }
  if (const std::string names = input_stream_filters(a); !names.empty()) compression_ = names;
}

InputStream::~InputStream() = default;

void InputStream::fail() const {
  archive* a = archive_.get();
  const std::string names = input_stream_filters(a);
  if (names.empty()) {
    throw sdk::Error(fmt::format("cannot read input '{}': {}", path_.string(), input_stream_error(a)));
  }
  // The first filter's output counts the text decoded so far, also what was not yet returned.
  throw sdk::Error(fmt::format(
      "input '{}' ({}) is damaged or truncated: reading stopped after {} bytes of the file ({} bytes of text): {}",
      path_.string(), names, file_bytes(), std::max<la_int64_t>(0, archive_filter_bytes(a, 0)), input_stream_error(a)));
}

std::string_view InputStream::read() {
  if (at_end_) return {};
  const la_ssize_t n = archive_read_data(archive_.get(), block_.data(), block_.size());
  if (n < 0) fail();
  if (n == 0) at_end_ = true;
  text_bytes_ += static_cast<uint64_t>(std::max<la_ssize_t>(n, 0));
  return {block_.data(), static_cast<size_t>(std::max<la_ssize_t>(n, 0))};
}

uint64_t InputStream::file_bytes() const {
  return static_cast<uint64_t>(std::max<la_int64_t>(0, archive_filter_bytes(archive_.get(), -1)));
}

}  // namespace kforge::data
