// CsvReader: the records of CSV text as RFC 4180 writes them (and Python's csv module reads them): comma-separated
// fields, a field that starts with a quote runs to the closing quote (commas, line breaks and doubled quotes "" inside
// it), lines ended by \n, \r\n or \r; blank lines hold no record.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::video {

struct CsvRecord {
  int64_t line = 0;  ///< 1-based line on which the record starts
  std::vector<std::string> fields;
};

class CsvReader {
 public:
  /// `text` must outlive the reader; `file` names it in errors.
  CsvReader(std::string_view text, std::string file);

  /// Reads the next record into `record`; false after the last one. Throws sdk::Error naming the file and the line
  /// of a quoted field that is never closed.
  bool next(CsvRecord& record);

 private:
  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

}  // namespace kforge::video
