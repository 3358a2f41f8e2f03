// A one-pass CSV scanner: a state per character (in a quoted field or not, at a field's start or not).
#include "video/csv_reader.h"

#include <fmt/format.h>

#include <utility>

#include "kforge/sdk/error.h"

namespace kforge::video {

CsvReader::CsvReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

bool CsvReader::next(CsvRecord& record) {
  const auto at_line_end = [this](char c) {
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
    ++line_;
  };
  while (pos_ < text_.size() && (text_[pos_] == '\n' || text_[pos_] == '\r')) at_line_end(text_[pos_++]);
  if (pos_ >= text_.size()) return false;
  record.line = line_;
  record.fields.clear();
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool field_start = true;  // nothing of the current field read yet
  while (pos_ < text_.size()) {
    const char c = text_[pos_++];
    if (quoted) {
      if (c != '"') {
        if (c == '\n') ++line_;
        field += c;
      } else if (pos_ < text_.size() && text_[pos_] == '"') {
        field += '"';
        ++pos_;
      } else {
        quoted = false;
      }
    } else if (c == '"' && field_start) {
      quoted = true;
      field_start = false;
    } else if (c == ',') {
      record.fields.push_back(std::move(field));
      field.clear();
      field_start = true;
    } else if (c == '\n' || c == '\r') {
      at_line_end(c);
      record.fields.push_back(std::move(field));
      return true;
    } else {
      field += c;
      field_start = false;
    }
  }
  if (quoted) {
    throw sdk::Error(fmt::format("{}:{}: a quoted field is not closed before the end of the file", file_, record.line));
  }
  record.fields.push_back(std::move(field));
  return true;
}

}  // namespace kforge::video
