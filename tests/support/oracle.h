// The independent reference: Debian's python3-torch running a script from tests/oracles/.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::test {

/// True when /usr/bin/python3 can import torch and numpy.
bool oracle_available();

/// Runs tests/oracles/<script> with `args` under /usr/bin/python3; returns its exit status and
/// puts its combined output into *output.
int run_oracle(const std::string& script, const std::vector<std::string>& args, std::string* output);

}  // namespace kforge::test
