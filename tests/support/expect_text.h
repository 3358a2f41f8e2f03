// Asserting on message text: every expected fragment appears in an error message or an output.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::test {

/// One test failure per fragment of `parts` missing from `text`, showing the whole text.
void expect_has(const std::string& text, const std::vector<std::string>& parts);

/// The message of the `E` (e.g. sdk::Error) `f` throws; a test failure and "" when it throws none.
template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return "";
}

/// The message of the sdk::ConfigError `f` throws; a test failure and "" when it throws none.
inline std::string config_error_of(const std::function<void()>& f) { return error_of<sdk::ConfigError>(f); }

}  // namespace kforge::test
