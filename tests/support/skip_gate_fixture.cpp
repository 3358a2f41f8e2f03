// A GoogleTest binary for skip_gate_test.sh: one test that skips, one that passes, one that fails.
#include <gtest/gtest.h>

TEST(SkipGate, Skips) { GTEST_SKIP() << "the skip under test"; }

TEST(SkipGate, Passes) { SUCCEED(); }

TEST(SkipGate, Fails) { FAIL() << "the failure under test"; }
