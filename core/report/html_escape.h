// Escaping text for HTML and inline SVG: element content and quoted attribute values alike.
#pragma once

#include <string>
#include <string_view>

namespace kforge::report {

/// `text` with & < > " ' replaced by their character references, so it can go anywhere in a page
/// as text or inside a quoted attribute value.
std::string html_escape(std::string_view text);

}  // namespace kforge::report
