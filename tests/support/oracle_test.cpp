// The python3-torch oracle harness (support/oracle.cpp, tests/oracles/oracle_server.py): a script runs as
// `python3 script args...` would run it from the test, and nothing one script does reaches the next.
#include "support/oracle.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "support/test_host.h"

namespace kforge::test {
namespace {

TEST(Oracle, AScriptSeesItsArgumentsDirectoryAndEnvironmentAndItsStatusAndOutputComeBack) {
  ASSERT_TRUE(oracle_available());
  const std::filesystem::path dir = temp_dir("oracle_probe");
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  setenv("KFORGE_ORACLE_PROBE", "seen", 1);
  std::string out;
  const int status = run_oracle("oracle_probe.py", {"exit", "3", "a b"}, &out);
  unsetenv("KFORGE_ORACLE_PROBE");
  std::filesystem::current_path(before);
  EXPECT_EQ(status, 3) << out;
  for (const std::string& line : {"argv ['exit', '3', 'a b']", "env seen", "name __main__"}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << "\n" << out;
  }
  EXPECT_NE(out.find("cwd " + std::filesystem::canonical(dir).string()), std::string::npos) << out;
}

TEST(Oracle, AnUncaughtExceptionExitsOneWithItsTraceback) {
  std::string out;
  EXPECT_EQ(run_oracle("oracle_probe.py", {"raise"}, &out), 1) << out;
  EXPECT_NE(out.find("ValueError: probe failure"), std::string::npos) << out;
}

TEST(Oracle, WhatAScriptChangesDoesNotReachTheNext) {
  std::string out;
  ASSERT_EQ(run_oracle("oracle_probe.py", {"set_dtype"}, &out), 0) << out;
  ASSERT_EQ(run_oracle("oracle_probe.py", {"print"}, &out), 0) << out;
  EXPECT_NE(out.find("dtype torch.float32"), std::string::npos) << out;
  EXPECT_EQ(out.find("env seen"), std::string::npos) << out;  // unset after the first test
}

}  // namespace
}  // namespace kforge::test
