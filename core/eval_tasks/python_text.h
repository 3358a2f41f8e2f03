// Python's str methods that lm-eval-harness's prompt code calls, on UTF-8 text: strip(), capitalize(), replace().
#pragma once

#include <string>
#include <string_view>

namespace kforge::eval_tasks {

/// True for the code points Python's str.isspace() accepts (ASCII \t\n\v\f\r, \x1c-\x1f and space, and Unicode's
/// U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
bool py_isspace(char32_t c);

/// str.strip(): `text` without the leading and trailing whitespace (py_isspace).
std::string py_strip(std::string_view text);

/// str.capitalize() (Python >= 3.8): the first character in title case, the rest in lower case. By utf8proc's
/// one-to-one case mappings: the few characters whose full mapping is longer ("ß" title-cased is "Ss" in Python) or
/// depends on context (a final capital sigma) keep the simple mapping.
std::string py_capitalize(std::string_view text);

/// str.replace(old, new): every non-overlapping `from`, left to right, replaced by `to`.
std::string py_replace(std::string_view text, std::string_view from, std::string_view to);

/// The text of a bracketed span with Python's `\s*` on both sides removed, as re.sub(r"\(\s*([^\)]*?)\s*\)", r"(\1)")
/// leaves it: for each `open` (left to right), the text up to the next `close` is stripped of whitespace; an `open`
/// with no `close` after it is kept as it is.
std::string py_strip_inside(std::string_view text, char open, char close);

}  // namespace kforge::eval_tasks
