// KFORGE_FAULT, the fault suite's variable, is checked at the front-end's first statement: a malformed value is
// exit 2 naming the variable, its value and the form it takes (it used to abort with code 134 where a thread met
// it first), and a signal may be written with or without its SIG prefix.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

TEST(FaultSpec, AMalformedValueIsExit2NamingTheVariableAndTheForm) {
  std::string output;
  const int code = run_command(fmt::format("KFORGE_FAULT=train.step_end@3:TERMINATE '{}' --version", KFORGE_BIN),
                               &output);
  EXPECT_EQ(code, 2) << output;
  expect_has(output, {"KFORGE_FAULT=\"train.step_end@3:TERMINATE\"", "unknown signal \"TERMINATE\"",
                       "<point>[@<n>][:KILL|TERM|USR1|INT|STOP]"});
  output.clear();
  EXPECT_EQ(run_command(fmt::format("KFORGE_FAULT=train.step_end@x '{}' --version", KFORGE_BIN), &output), 2)
      << output;
  expect_has(output, {"pass \"x\" is not a positive integer"});
}

TEST(FaultSpec, ASignalWithItsSigPrefixIsAccepted) {
  std::string output;
  // A point no process passes: the value parses, nothing is raised, --version answers.
  EXPECT_EQ(run_command(fmt::format("KFORGE_FAULT=no.such_point@3:SIGTERM '{}' --version", KFORGE_BIN), &output), 0)
      << output;
  EXPECT_EQ(output.find("KFORGE_FAULT"), std::string::npos) << output;
}

}  // namespace
}  // namespace kforge::test
