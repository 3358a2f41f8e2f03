#include "support/expect_text.h"

#include <gtest/gtest.h>
#include <kforge/sdk/error.h>

namespace kforge::test {

void expect_has(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "missing '" << p << "' in:\n" << text;
}

}  // namespace kforge::test
