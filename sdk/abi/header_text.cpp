// header_text: strips comments and layout from a header (see header_text.h).
#include "header_text.h"

#include <cctype>
#include <stdexcept>

namespace kforge::abi {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Translation phase 2: a backslash at the end of a line joins it with the next.
std::string splice_lines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\\' && i + 1 < source.size() && source[i + 1] == '\n') {
      ++i;
    } else if (source[i] == '\\' && i + 2 < source.size() && source[i + 1] == '\r' && source[i + 2] == '\n') {
      i += 2;
    } else {
      out += source[i];
    }
  }
  return out;
}

class Stripper {
 public:
  explicit Stripper(std::string text) : text_(std::move(text)) {}

  std::string run() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '/' && peek(1) == '/') {
        skip_line_comment();
      } else if (c == '/' && peek(1) == '*') {
        skip_block_comment();
      } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
        ++pos_;
        gap_ = true;
      } else if (c == '"' || c == '\'') {
        if (c == '"' && raw_string_prefix()) fail("raw string literals are not supported");
        emit_literal(c);
      } else {
        emit(c);
        ++pos_;
      }
    }
    return out_;
  }

 private:
  char peek(size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }

  bool ends_with_macro_name() const {
    size_t start = out_.size();
    while (start > 0 && word_char(out_[start - 1])) --start;
    return start < out_.size() && std::string_view(out_).substr(0, start).ends_with("#define ");
  }

  // R"( begins a raw string when R (or LR, uR, UR, u8R) is a whole token right before the quote.
  bool raw_string_prefix() const {
    if (gap_) return false;
    size_t start = out_.size();
    while (start > 0 && word_char(out_[start - 1])) --start;
    const std::string_view token = std::string_view(out_).substr(start);
    return token == "R" || token == "LR" || token == "uR" || token == "UR" || token == "u8R";
  }

  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
    throw std::invalid_argument("line " + std::to_string(line) + ": " + what);
  }

  // A gap survives only where dropping it would join two words ("const char" stays two tokens) or
  // turn an object-like macro into a function-like one ("#define X (1)" is not "#define X(1)").
  void emit(char c) {
    if (gap_ && !out_.empty() && ((word_char(out_.back()) && word_char(c)) || (c == '(' && ends_with_macro_name()))) {
      out_ += ' ';
    }
    gap_ = false;
    out_ += c;
  }

  void skip_line_comment() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    gap_ = true;
  }

  void skip_block_comment() {
    const size_t end = text_.find("*/", pos_ + 2);
    if (end == std::string::npos) fail("unterminated /* comment");
    pos_ = end + 2;
    gap_ = true;
  }

  void emit_literal(char quote) {
    emit(quote);
    for (++pos_; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (c == '\n') break;
      out_ += c;
      if (c == '\\' && pos_ + 1 < text_.size()) {
        out_ += text_[++pos_];
      } else if (c == quote) {
        ++pos_;
        return;
      }
    }
    fail(std::string("unterminated ") + (quote == '"' ? "string" : "character") + " literal");
  }

  std::string text_;
  std::string out_;
  size_t pos_ = 0;
  bool gap_ = false;
};

}  // namespace

std::string strip_comments_and_whitespace(std::string_view source) { return Stripper(splice_lines(source)).run(); }

}  // namespace kforge::abi
