#include "support/oracle.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

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

void expect_within(const at::Tensor& actual, const at::Tensor& expected, const std::string& what, double atol,
                   double rtol) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const at::Tensor a = actual.to(at::kDouble), e = expected.to(at::kDouble);
  const double worst = ((a - e).abs() - (atol + rtol * e.abs())).max().item<double>();
  EXPECT_LE(worst, 0.0) << what << ": max |diff| = " << (a - e).abs().max().item<double>() << " exceeds atol " << atol
                        << " + rtol " << rtol << " * |expected| (max |expected| = " << e.abs().max().item<double>()
                        << ")";
}

}  // namespace kforge::test
