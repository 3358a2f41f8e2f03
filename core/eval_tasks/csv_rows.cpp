// CSV rows by the state machine of CPython's _csv.c (non-strict): after a closing quote, characters other than a
// comma or a line end join the field as they are.
#include "eval_tasks/csv_rows.h"

#include <fmt/format.h>

#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {

std::vector<CsvRow> csv_rows(std::string_view text, const std::string& file) {
  std::vector<CsvRow> rows;
  CsvRow row;
  std::string field;
  bool in_quotes = false, field_quoted = false, row_open = false;
  int64_t line = 1;
  const auto end_field = [&] {
    row.fields.push_back(std::move(field));
    field.clear();
    field_quoted = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const size_t start = i;
    const bool line_end = c == '\n' || c == '\r';
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;  // \r\n: one line end
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field.append(text.substr(start, i + 1 - start));
      }
      if (line_end) ++line;
      continue;
    }
    if (line_end) {
      if (row_open) {
        end_field();
        rows.push_back(std::move(row));
        row = CsvRow{};
      }
      row_open = false;
      ++line;
      continue;
    }
    if (!row_open) {
      row.line = line;
      row_open = true;
    }
    if (c == ',') {
      end_field();
    } else if (c == '"' && field.empty() && !field_quoted) {
      in_quotes = field_quoted = true;
    } else {
      field += c;
    }
  }
  if (in_quotes) {
    throw sdk::ConfigError(
        fmt::format("{}:{}: a quoted field is not closed before the end of the file", file, row.line));
  }
  if (row_open) {
    end_field();
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kforge::eval_tasks
