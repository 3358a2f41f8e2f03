// /proc/PID/stat split into fields: a command name holding spaces and parentheses stays one field, so the fields after
// it (the state, the parent, the start time, ...) are where the kernel's documentation puts them.
#include "resilience/proc_stat.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace kforge::test {
namespace {

TEST(ProcStat, ACommandNameWithSpacesAndParenthesesIsOneFieldAndAGoneProcessHasNone) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_NAME, "a) (b c");
    const char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    for (;;) ::pause();  // until the test kills it
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);  // named
  ::close(ready[0]);
  const std::vector<std::string> fields = resilience::proc_stat_fields(child);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_GE(fields.size(), 52u);  // Linux has printed 52 fields since 3.5
  EXPECT_EQ(fields[0], std::to_string(child));
  EXPECT_EQ(fields[1], "(a) (b c)");
  EXPECT_EQ(fields[2].size(), 1u) << fields[2];      // the state, one letter
  EXPECT_EQ(fields[3], std::to_string(::getpid()));  // field 4: the parent

  EXPECT_EQ(resilience::proc_stat_fields()[0], std::to_string(::getpid()));  // pid 0: this process
  EXPECT_TRUE(resilience::proc_stat_fields(child).empty());                 // reaped: /proc/PID is gone
}

}  // namespace
}  // namespace kforge::test
