// The mlflow metric backend, read back by tests/oracles/read_mlflow.py (python3-yaml, MLflow's
// FileStore layout): the experiment and run meta.yaml, params from the resolved config, metric lines per
// step with '/' names as nested files, the status through a run's life, and a resumed run continuing
// the same MLflow run with every step once. Also the config flattening the params come from.
#include "config_params.h"
#include "metric_backend_fixture.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;
using MlflowBackend = MetricBackendTest;

std::string ml_store_key(const fs::path& store) { return fmt::format("mlflow_dir = \"{}\"", store.string()); }

TEST_F(MlflowBackend, ARunReadsBackWithParamsMetricsTagsAndItsEndStatus) {
  const fs::path store = dir_ / "mlruns";
  auto ml = backend("mlflow", ml_store_key(store),
                    fresh("[model]\ndim = 32\n\n[optimizer]\nbetas = [0.9, 0.95]\nname = \"adamw\"\n"));
  for (int64_t step = 1; step <= 3; ++step) {
    ml->log(step, {{"train/loss", 2.0 / step + 0.1}, {"eval/loss", 1e-300 * step}, {"loss/web?crawl", -1.5}});
  }
  const auto running = read_back("read_mlflow.py", store);
  ASSERT_EQ(running["runs"].size(), 1u);
  EXPECT_EQ(running["runs"][0]["status"], "RUNNING");
  EXPECT_TRUE(running["runs"][0]["end_time"].is_null());
  ml->end(sdk::RunEnd::finished);

  const auto read = read_back("read_mlflow.py", store);
  EXPECT_EQ(read["experiments"],
            nlohmann::json::parse(R"({"0": "Default", ")" + read["runs"][0]["experiment_id"].get<std::string>() +
                                  R"(": "kforge"})"));
  const auto& run = read["runs"][0];
  EXPECT_EQ(run["run_id"], ml->run_id());
  EXPECT_EQ(run["run_id"].get<std::string>().size(), 32u);
  EXPECT_EQ(run["status"], "FINISHED");
  EXPECT_GE(run["end_time"].get<int64_t>(), run["start_time"].get<int64_t>());
  EXPECT_EQ(run["run_name"], dir_.filename().string());  // mlflow_run_name empty: the run_dir's name
  EXPECT_EQ(run["params"], nlohmann::json::parse(R"({"model.dim": "32", "optimizer.betas": "[0.9, 0.95]",
                                                      "optimizer.name": "adamw"})"));
  EXPECT_EQ(run["tags"]["mlflow.runName"], dir_.filename().string());
  EXPECT_EQ(run["tags"]["mlflow.source.type"], "LOCAL");
  EXPECT_EQ(run["metrics"].size(), 3u);
  for (int64_t step = 1; step <= 3; ++step) {
    EXPECT_EQ(ml_series(run, "train/loss").at(step), 2.0 / step + 0.1);  // full double precision
    EXPECT_EQ(ml_series(run, "eval/loss").at(step), 1e-300 * step);
    EXPECT_EQ(ml_series(run, "loss/web_crawl").at(step), -1.5);  // '?' is not allowed in an MLflow key
  }
}

TEST_F(MlflowBackend, AKilledOrFailedRunSaysSo) {
  const fs::path store = dir_ / "mlruns";
  backend("mlflow", ml_store_key(store) + "\nmlflow_run_name = \"first\"", fresh())->end(sdk::RunEnd::killed);
  backend("mlflow", ml_store_key(store) + "\nmlflow_run_name = \"second\"", fresh())->end(sdk::RunEnd::failed);
  const auto read = read_back("read_mlflow.py", store);
  ASSERT_EQ(read["runs"].size(), 2u);
  EXPECT_EQ(read["experiments"].size(), 2u);  // both runs in the one "kforge" experiment
  std::map<std::string, std::string> status;
  for (const auto& run : read["runs"]) status[run["run_name"]] = run["status"];
  EXPECT_EQ(status, (std::map<std::string, std::string>{{"first", "KILLED"}, {"second", "FAILED"}}));
}

TEST_F(MlflowBackend, AResumedRunContinuesTheSameRunWithEveryStepOnce) {
  const fs::path store = dir_ / "mlruns";
  std::string id;
  {
    auto first = backend("mlflow", ml_store_key(store), fresh("[train]\nmax_steps = 8\n"));
    for (int64_t step = 1; step <= 8; ++step) first->log(step, {{"train/loss", 1.0 / step}});
    first->end(sdk::RunEnd::killed);
    id = first->run_id();
  }
  auto resumed = backend("mlflow", ml_store_key(store), resume(5, id, "[train]\nmax_steps = 10\n"));
  EXPECT_EQ(resumed->run_id(), id);
  EXPECT_EQ(read_back("read_mlflow.py", store)["runs"][0]["status"], "RUNNING");  // reopened
  for (int64_t step = 6; step <= 10; ++step) resumed->log(step, {{"train/loss", 1.0 / step}});
  resumed->end(sdk::RunEnd::finished);
  const auto read = read_back("read_mlflow.py", store);
  ASSERT_EQ(read["runs"].size(), 1u);
  const auto& run = read["runs"][0];
  EXPECT_EQ(run["status"], "FINISHED");
  EXPECT_EQ(run["params"]["train.max_steps"], "10");  // the config it continued with
  const auto loss = ml_series(run, "train/loss");
  ASSERT_EQ(loss.size(), 10u);
  for (const auto& [step, value] : loss) EXPECT_EQ(value, 1.0 / step);
}

TEST_F(MlflowBackend, AResumedRunNotInTheStoreStartsANewOne) {
  const fs::path store = dir_ / "mlruns";
  auto ml = backend("mlflow", ml_store_key(store), resume(5, "0123456789abcdef0123456789abcdef"));
  EXPECT_NE(ml->run_id(), "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(read_back("read_mlflow.py", store)["runs"].size(), 1u);
}

TEST(ConfigParams, EveryLeafIsADottedKeyWithItsValue) {
  const auto params = builtin::metrics::flatten_config_toml(
      "top = 1\n[model]\ndim = 32\nnorm_eps = 1e-05\nscale = 2.0\n[a.b]\nflag = true\nlist = [\"x\", \"y\", {k = "
      "0.5}]\nname = \"q\"\n");
  EXPECT_EQ(params, (std::vector<std::pair<std::string, std::string>>{{"a.b.flag", "true"},
                                                                      {"a.b.list", "[\"x\", \"y\", {k = 0.5}]"},
                                                                      {"a.b.name", "q"},
                                                                      {"model.dim", "32"},
                                                                      {"model.norm_eps", "1e-05"},
                                                                      {"model.scale", "2.0"},
                                                                      {"top", "1"}}));
  EXPECT_THROW(builtin::metrics::flatten_config_toml("[model\n"), sdk::Error);
}

}  // namespace
}  // namespace kforge::test
