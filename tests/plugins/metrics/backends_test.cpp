// The built-in metric backends: the console line is timestamped and shows MFU as a percentage; metrics.jsonl is valid
// JSON for any metric name (read back by nlohmann and by Python), carries a full-precision unix
// time, and a resumed run keeps only the lines of steps up to the one it resumed from.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "support/test_host.h"
#include "plugins/components.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

class Backends : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { plugins_ = load_builtin_plugins().release(); }
  static void TearDownTestSuite() { delete plugins_; }

  /// The named backend, built as the trainer builds it, writing under dir_.
  std::unique_ptr<sdk::MetricBackend> backend(const std::string& name, int64_t resumed_step = 0) {
    const config::JobConfig job = job_from_toml(
        fmt::format("[metrics]\nbackends = [\"{}\"]\nrun_dir = \"{}\"\n", name, dir_.string()), plugins_->registry);
    const plugins::Components components(plugins_->registry, job);
    auto backends = components.metric_backends({dir_.string(), 0, false, resumed_step});
    return std::move(backends.at(0));
  }

  std::vector<std::string> lines() const {
    std::ifstream in(dir_ / "metrics.jsonl");
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

  static plugins::PluginHost* plugins_;
  fs::path dir_ = temp_dir("metrics_backends");
};
plugins::PluginHost* Backends::plugins_ = nullptr;

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

TEST_F(Backends, ConsoleShowsMfuAsAPercentage) {
  auto console = backend("console");
  testing::internal::CaptureStdout();
  console->log(7, {{"train/loss", 2.5}, {"train/mfu", 0.574}});
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("[step 7] loss=2.5000"), std::string::npos) << out;
  EXPECT_NE(out.find("mfu=57.4%"), std::string::npos) << out;
  // Stamped like the host's log lines (SLURM logs need the time).
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \[step 7\] )"))) << out;
}

TEST_F(Backends, JsonlRoundTripsControlCharactersThroughTwoJsonReaders) {
  const std::string name =
      "eval/run \"a\\b\"\n\tnext\x01"
      "end";
  {
    auto jsonl = backend("jsonl");
    jsonl->log(3, {{name, 1.5}, {"train/loss", 2.25}});
  }
  const auto text = lines();
  ASSERT_EQ(text.size(), 1u);
  const auto j = nlohmann::json::parse(text[0]);
  EXPECT_EQ(j.at(name).get<double>(), 1.5);
  EXPECT_EQ(j.at("step").get<int64_t>(), 3);
  // An independent reader: Python's json module, on every line; it prints the key back.
  std::string out;
  const fs::path file = dir_ / "metrics.jsonl";
  ASSERT_EQ(run_command("/usr/bin/python3 -c 'import json,sys; rows=[json.loads(l) for l in open(sys.argv[1])]; "
                        "print(ascii(sorted(k for k in rows[0] if k.startswith(\"eval/\"))))' " +
                            file.string(),
                        &out),
            0)
      << out;
  EXPECT_EQ(out, "['eval/run \"a\\\\b\"\\n\\tnext\\x01end']\n");
}

TEST_F(Backends, JsonlTimeIsAFullPrecisionUnixTimestamp) {
  const double before = unix_now();
  backend("jsonl")->log(1, {{"train/loss", 1.0}});
  const double after = unix_now();
  const auto j = nlohmann::json::parse(lines().at(0));
  ASSERT_TRUE(j.at("time").is_number_float()) << lines()[0];
  const double t = j.at("time").get<double>();
  EXPECT_GE(t, before);  // not rounded to whole seconds: within the call, to the microsecond
  EXPECT_LE(t, after);
}

TEST_F(Backends, JsonlWritesNonFiniteValuesAsNull) {
  backend("jsonl")->log(1, {{"train/loss", std::nan("")}, {"train/grad_norm", HUGE_VAL}});
  const auto j = nlohmann::json::parse(lines().at(0));
  EXPECT_TRUE(j.at("train/loss").is_null());
  EXPECT_TRUE(j.at("train/grad_norm").is_null());
}

TEST_F(Backends, JsonlOnResumeKeepsOnlyTheStepsUpToTheResumedOne) {
  {
    auto first = backend("jsonl");
    for (int64_t step = 1; step <= 8; ++step) first->log(step, {{"train/loss", 1.0 / step}});
  }
  std::ofstream(dir_ / "metrics.jsonl", std::ios::app) << "{\"step\": 9, \"tra";  // torn by a crash
  {
    auto resumed = backend("jsonl", /*resumed_step=*/5);
    for (int64_t step = 6; step <= 10; ++step) resumed->log(step, {{"train/loss", 1.0 / step}});
  }
  std::vector<int64_t> steps;
  for (const auto& line : lines()) steps.push_back(nlohmann::json::parse(line).at("step").get<int64_t>());
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

}  // namespace
}  // namespace kforge::test
