// arrow_stream: the values of string and binary columns of an Arrow IPC stream file (what the `datasets` library's
// save_to_disk and its cache write), top-level or a struct's child (an Image column's bytes and path), read message by
// message with a small bounds-checked flatbuffer parser.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::data {

/// What a requested column must hold, and whether its values are read or only located.
enum class ArrowKind {
  text,    ///< utf8 or large_utf8, values read
  binary,  ///< binary or large_binary, values only located (ArrowCell::bytes stays empty)
};

struct ArrowColumn {
  std::string path;  ///< "text", or a struct column's child "image.bytes" (names split at the first '.')
  ArrowKind kind = ArrowKind::text;
};

/// One column's value in a row.
struct ArrowCell {
  bool null = true;         ///< null, or inside a null struct
  std::string_view bytes;   ///< a text column's value, valid until the row callback returns
  uint64_t file_offset = 0; ///< where the value's bytes begin in the stream
  uint64_t size = 0;        ///< the value's length in bytes
};

/// Calls `on_row(row, cells)` for every row in order, cells[k] being the value of columns[k]; returns the rows.
/// Columns not asked for are skipped unread (a binary column's data too). Reads the IPC stream format (with or
/// without the 0xFFFFFFFF continuation marker) one message at a time. Throws sdk::Error naming `name` and the byte
/// offset of the fault for damaged or truncated data, a missing column (naming the columns there) or one of another
/// type, dictionary-encoded or compressed data, or a big-endian stream.
int64_t read_arrow_rows(std::istream& in, const std::string& name, const std::vector<ArrowColumn>& columns,
                        const std::function<void(int64_t row, const std::vector<ArrowCell>& cells)>& on_row);

struct ArrowTextCount {
  int64_t rows = 0;   ///< rows of every record batch
  int64_t nulls = 0;  ///< null values of the column, skipped
};

/// Calls `on_text` with every non-null value of the text column `column` (read_arrow_rows), in row order, each valid
/// until the call returns; null values are skipped and counted.
ArrowTextCount read_arrow_texts(std::istream& in, const std::string& name, const std::string& column,
                                const std::function<void(std::string_view)>& on_text);

/// The same for the file at `path` (named in the errors).
ArrowTextCount read_arrow_texts(const std::filesystem::path& path, const std::string& column,
                                const std::function<void(std::string_view)>& on_text);

}  // namespace kforge::data
