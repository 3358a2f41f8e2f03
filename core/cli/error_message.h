// The text of an exception for the user: a LibTorch error's message without the C++ stack trace it carries.
#pragma once

#include <exception>
#include <string>

namespace kforge::cli {

/// e.what(), or for a c10::Error its message without the backtrace LibTorch appends to what().
std::string error_message(const std::exception& e);

}  // namespace kforge::cli
