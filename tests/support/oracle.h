// The independent reference: Debian's python3-torch running a script from tests/oracles/.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::test {

/// True when /usr/bin/python3 can import torch and numpy (it starts the oracle server, below).
bool oracle_available();

/// Runs tests/oracles/<script> with `args` as /usr/bin/python3 would, in this test process's working directory and
/// environment; returns its exit status and puts its combined output into *output. The scripts run in children
/// forked from one python3 per test process that imported torch and numpy once (tests/oracles/oracle_server.py).
int run_oracle(const std::string& script, const std::vector<std::string>& args, std::string* output);

/// EXPECT: the same shape and |actual - expected| <= atol + rtol * |expected| everywhere, naming `what` and the
/// largest difference (an fp32 model against a float64 reference takes atol 1e-5, rtol 1e-4).
void expect_within(const at::Tensor& actual, const at::Tensor& expected, const std::string& what, double atol,
                   double rtol);

}  // namespace kforge::test
