// arrow_stream: the text of one utf8 / large_utf8 column of an Arrow IPC stream file (what the `datasets`
// library's save_to_disk writes), read message by message with a small bounds-checked flatbuffer parser.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <istream>
#include <string>
#include <string_view>

namespace kforge::data {

struct ArrowTextCount {
  int64_t rows = 0;   ///< rows of every record batch
  int64_t nulls = 0;  ///< null values of the column, skipped
};

/// Calls `on_text` with every non-null value of the top-level column `column` (type utf8 or large_utf8), in row
/// order, each valid until the call returns; null values are skipped and counted. Other columns are skipped
/// unread. Reads the IPC stream format (with or without the 0xFFFFFFFF continuation marker) one message at a time.
/// Throws sdk::Error naming `name` and the byte offset of the fault for damaged or truncated data, a missing
/// column or one of another type, dictionary-encoded or compressed data, or a big-endian stream.
ArrowTextCount read_arrow_texts(std::istream& in, const std::string& name, const std::string& column,
                                const std::function<void(std::string_view)>& on_text);

/// The same for the file at `path` (named in the errors).
ArrowTextCount read_arrow_texts(const std::filesystem::path& path, const std::string& column,
                                const std::function<void(std::string_view)>& on_text);

}  // namespace kforge::data
