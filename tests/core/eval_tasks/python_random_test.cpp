// eval_tasks::PythonRandom against CPython's random.Random (tests/oracles/python_random_draws.py): sample() in both of
// its branches and across calls, choices(), random(), for small, large and 64-bit seeds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/interop/interop_test_util.h"
#include "eval_tasks/python_random.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test::eval_tasks {
namespace {

TEST(PythonRandom, DrawsWhatCPythonDraws) {
  if (!oracle_available()) GTEST_SKIP() << "no python3 with torch and numpy";
  const auto out = temp_dir("python_random") / "draws.json";
  std::string output;
  ASSERT_EQ(run_oracle("python_random_draws.py", {out.string()}, &output), 0) << output;
  const auto draws = nlohmann::json::parse(interop::file_bytes(out));
  for (const auto& row : draws["sample"]) {
    kforge::eval_tasks::PythonRandom rng(row[0].get<uint64_t>());
    for (const auto& expected : row[3]) {
      EXPECT_EQ(nlohmann::json(rng.sample(row[1].get<size_t>(), row[2].get<size_t>())), expected) << row.dump();
    }
  }
  for (const auto& row : draws["choices"]) {
    kforge::eval_tasks::PythonRandom rng(row[0].get<uint64_t>());
    EXPECT_EQ(nlohmann::json(rng.choices(row[1].get<size_t>(), row[2].get<size_t>())), row[3]) << row.dump();
  }
  for (const auto& row : draws["random"]) {
    kforge::eval_tasks::PythonRandom rng(row[0].get<uint64_t>());
    for (const auto& expected : row[1]) EXPECT_EQ(rng.random(), expected.get<double>()) << row.dump();
  }
}

}  // namespace
}  // namespace kforge::test::eval_tasks
