// header_text: a C/C++ header reduced to its tokens' spelling, so that comments and layout do not count.
#pragma once

#include <string>
#include <string_view>

namespace kforge::abi {

/// `source` without comments, line splices (backslash-newline) and layout: a run of whitespace
/// and comments becomes one space between two identifier or number characters and between a
/// #define's name and a '(' (an object-like macro), and nothing elsewhere. String and character literals are kept verbatim. Raw string literals are not
/// supported (throws std::invalid_argument naming the line, as for an unterminated comment or literal).
std::string strip_comments_and_whitespace(std::string_view source);

}  // namespace kforge::abi
