// The TensorBoard and MLflow backend tests' fixture: a backend built as the trainer builds it (through
// the loaded metrics plugin), writing under a fresh directory, and the independent readers' output.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plugins/components.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test {

class MetricBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { plugins_ = load_builtin_plugins().release(); }
  static void TearDownTestSuite() {
    delete plugins_;
    plugins_ = nullptr;
  }

  /// What the host hands a backend at start: a resume's step and run id, the resolved config, the rank.
  struct Start {
    int64_t resumed_step = 0;
    std::string resumed_run_id;
    std::string config_toml;
    int rank = 0;
  };
  static Start fresh(std::string config_toml = "") { return {0, "", std::move(config_toml), 0}; }
  static Start resume(int64_t step, std::string run_id, std::string config_toml = "") {
    return {step, std::move(run_id), std::move(config_toml), 0};
  }

  /// Backend `name` with run_dir = dir_ and `extra` [metrics] lines, started as `start` says.
  std::unique_ptr<sdk::MetricBackend> backend(const std::string& name, const std::string& extra, const Start& start) {
    const config::JobConfig job =
        job_from_toml(fmt::format("[metrics]\nbackends = [\"{}\"]\nrun_dir = \"{}\"\n{}\n", name, dir_.string(), extra),
                      plugins_->registry);
    const plugins::Components components(plugins_->registry, job);
    sdk::RunInfo run{dir_.string(), start.rank, false, start.resumed_step, "", start.config_toml};
    auto backends = components.metric_backends(run, {{name, start.resumed_run_id}});
    return std::move(backends.at(0));
  }

  static inline plugins::PluginHost* plugins_ = nullptr;
  std::filesystem::path dir_ = temp_dir("metric_backends");
};

/// What tests/oracles/<script> prints about `path` (a test failure when it refuses the files).
inline nlohmann::json read_back(const std::string& script, const std::filesystem::path& path) {
  std::string out;
  if (run_oracle(script, {path.string()}, &out) != 0) {
    ADD_FAILURE() << script << " refused " << path << ":\n" << out;
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(out);
}

/// read_tensorboard.py's [tag, step, value] list as tag -> step -> value (NaN for null), failing on a
/// (tag, step) there twice.
inline std::map<std::string, std::map<int64_t, double>> tb_by_tag(const nlohmann::json& scalars) {
  std::map<std::string, std::map<int64_t, double>> out;
  for (const auto& s : scalars) {
    const double value = s[2].is_null() ? std::nan("") : s[2].get<double>();
    const bool first_time = out[s[0].get<std::string>()].emplace(s[1].get<int64_t>(), value).second;
    EXPECT_TRUE(first_time) << "tag " << s[0] << " step " << s[1] << " is there twice";
  }
  return out;
}

/// The steps of a series, in order.
inline std::vector<int64_t> steps_of(const std::map<int64_t, double>& series) {
  std::vector<int64_t> steps;
  for (const auto& [step, value] : series) steps.push_back(step);
  return steps;
}

/// step -> value of metric `key` of one run read_mlflow.py printed, failing on a step there twice.
inline std::map<int64_t, double> ml_series(const nlohmann::json& run, const std::string& key) {
  std::map<int64_t, double> out;
  for (const auto& row : run["metrics"].at(key)) {
    const double value = row[1].is_null() ? std::nan("") : row[1].get<double>();
    EXPECT_TRUE(out.emplace(row[2].get<int64_t>(), value).second) << key << " step " << row[2];
  }
  return out;
}

}  // namespace kforge::test
