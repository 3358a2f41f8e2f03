// A linear scan of TOML text for its longest dotted key (see dotted_key_scan.h).
#include "config/dotted_key_scan.h"

namespace kforge::config {
namespace {

bool is_bare_key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// Scans one token after another; `pos`, `line` and `column` follow the text.
class DottedRunScanner {
 public:
  DottedRunScanner(std::string_view text, size_t limit) : text_(text), limit_(limit) {}

  DottedRun run() {
    while (pos_ < text_.size() && best_.parts <= limit_) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t') {
        advance(1);
      } else if (c == '.') {
        dot();
        advance(1);
      } else if (c == '"' || c == '\'') {
        part();
        skip_string(c);
      } else if (is_bare_key_char(c)) {
        part();
        while (pos_ < text_.size() && is_bare_key_char(text_[pos_])) advance(1);
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance(1);
      } else {
        parts_ = 0;  // '=', brackets, commas, newlines... end the run
        advance(1);
      }
    }
    return best_;
  }

 private:
  void advance(size_t n) {
    for (size_t k = 0; k < n && pos_ < text_.size(); ++k, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        column_ = 1;
      } else {
        ++column_;
      }
    }
  }

  // A key part (or a value) starts here: it extends the run after a dot, else starts a new one.
  void part() {
    if (after_dot_) {
      ++parts_;
    } else {
      parts_ = 1;
      start_ = DottedRun{0, line_, column_};
    }
    after_dot_ = false;
    if (parts_ > best_.parts) best_ = DottedRun{parts_, start_.line, start_.column};
  }

  void dot() {
    if (parts_ > 0 && !after_dot_) {
      after_dot_ = true;
    } else {
      parts_ = 0;
      after_dot_ = false;
    }
  }

  bool at(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }

  // A basic ("...", """...""") or literal ('...', '''...''') string, escapes and all; stops at the
  // end of the text when it is not closed (the parser reports that).
  void skip_string(char quote) {
    const std::string_view triple = quote == '"' ? "\"\"\"" : "'''";
    const bool multiline = at(triple);
    advance(multiline ? 3 : 1);
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (quote == '"' && c == '\\') {
        advance(2);
      } else if (multiline && at(triple)) {
        advance(3);
        // Up to two more quotes belong to the content: """a"""" is the string a".
        for (int k = 0; k < 2 && pos_ < text_.size() && text_[pos_] == quote; ++k) advance(1);
        return;
      } else if (!multiline && (c == quote || c == '\n')) {
        if (c == quote) advance(1);
        return;
      } else {
        advance(1);
      }
    }
  }

  std::string_view text_;
  size_t limit_;
  size_t pos_ = 0, line_ = 1, column_ = 1;
  size_t parts_ = 0;
  bool after_dot_ = false;
  DottedRun start_, best_;
};

}  // namespace

DottedRun longest_dotted_run(std::string_view text, size_t limit) { return DottedRunScanner(text, limit).run(); }

}  // namespace kforge::config
