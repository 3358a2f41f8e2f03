#include "support/oracle.h"

#include "support/test_host.h"

namespace kforge::test {

bool oracle_available() {
  static const bool available =
      run_command(std::string(KFORGE_PYTHON) + " -c 'import torch, numpy'", nullptr) == 0;
  return available;
}

int run_oracle(const std::string& script, const std::vector<std::string>& args, std::string* output) {
  std::string command = std::string(KFORGE_PYTHON) + " " + KFORGE_SOURCE_DIR + "/tests/oracles/" + script;
  for (const auto& a : args) command += " '" + a + "'";
  return run_command(command, output);
}

}  // namespace kforge::test
