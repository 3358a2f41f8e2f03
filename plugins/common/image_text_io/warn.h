// Warn: where the data path reports what it skipped (the plugin hands it the host's logger; stderr by default).
#pragma once

#include <functional>
#include <string>

namespace kforge::image_text {

using Warn = std::function<void(const std::string&)>;

/// Writes "warning: <message>" to stderr.
Warn stderr_warn();

}  // namespace kforge::image_text
