// The rows of a CSV file as Python's csv.reader reads them (the excel dialect, which reads MMLU's CSV files): fields
// split on commas; a field that opens with a quote runs to its closing quote, holding commas, line breaks and doubled
// quotes ""; rows end at \n, \r\n or \r; a blank line is no row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::eval_tasks {

struct CsvRow {
  int64_t line = 0;  ///< the 1-based line where the row starts
  std::vector<std::string> fields;
};

/// The rows of `text`. Throws sdk::ConfigError naming `file` and the line of a quoted field never closed.
std::vector<CsvRow> csv_rows(std::string_view text, const std::string& file);

}  // namespace kforge::eval_tasks
