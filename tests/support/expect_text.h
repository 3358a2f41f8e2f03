// Asserting on message text: every expected fragment appears in an error message or an output.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace kforge::test {

/// One test failure per fragment of `parts` missing from `text`, showing the whole text.
void expect_has(const std::string& text, const std::vector<std::string>& parts);

/// The message of the sdk::ConfigError `f` throws; a test failure and "" when it throws none.
std::string config_error_of(const std::function<void()>& f);

}  // namespace kforge::test
