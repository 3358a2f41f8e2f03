// A real training run with TensorBoard (metrics.enable_tensorboard) and MLflow, stopped by SIGTERM and
// resumed: every scalar of metrics.jsonl is in the event files (as float32) and in the MLflow run (exact),
// each step once; the MLflow run is KILLED after the signal, the same run FINISHED after the resume, and
// its params hold the resolved config.
#include <sys/wait.h>

#include <csignal>
#include <fstream>

#include "core/train/train_fixture.h"
#include "metric_backend_fixture.h"
#include "support/launch_job.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

// key -> step -> value of every numeric metric in metrics.jsonl.
std::map<std::string, std::map<int64_t, double>> run_jsonl_metrics(const fs::path& path) {
  std::map<std::string, std::map<int64_t, double>> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    for (const auto& [key, value] : j.items()) {
      if (key != "step" && key != "time" && value.is_number()) {
        EXPECT_TRUE(out[key].emplace(j["step"].get<int64_t>(), value.get<double>()).second) << line;
      }
    }
  }
  return out;
}

TEST(MetricBackendsRun, AStoppedAndResumedRunLogsEveryStepOnceToTensorBoardAndMlflow) {
  TrainFixture fx;
  const fs::path store = fx.root / "mlruns";
  const std::vector<std::string> common = {
      "--metrics.enable_tensorboard=true", "'--metrics.backends=[\"jsonl\", \"mlflow\"]'",
      "--metrics.mlflow_dir=" + store.string(), "--checkpoint.interval=2", "--eval.enabled=true"};
  std::vector<std::string> first = common;
  first.push_back("--train.max_steps=2000");  // ends at the signal
  std::string output;
  const int status = signal_after_checkpoint(launch_command(fx, 1, first), "kforge launch: pid %d", SIGTERM, output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  ASSERT_EQ(WEXITSTATUS(status), 75) << output;
  const auto killed = read_back("read_mlflow.py", store);
  ASSERT_EQ(killed["runs"].size(), 1u) << killed;
  EXPECT_EQ(killed["runs"][0]["status"], "KILLED");
  const int64_t stopped_at = steps_of(ml_series(killed["runs"][0], "train/loss")).back();
  const std::string latest = fs::read_symlink(fx.checkpoint_dir / "latest").string();  // "step_N"
  const int64_t resumed_step = std::stoll(latest.substr(latest.find('_') + 1));

  std::vector<std::string> second = common;
  second.push_back("--train.max_steps=" + std::to_string(stopped_at + 4));
  ASSERT_EQ(launch(fx, 1, second, &output), 0) << output;

  const auto jsonl = run_jsonl_metrics(fx.checkpoint_dir / "metrics.jsonl");
  ASSERT_EQ(steps_of(jsonl.at("train/loss")).size(), static_cast<size_t>(stopped_at + 4));
  ASSERT_TRUE(jsonl.count("eval/loss"));  // [eval] interval 5: logged at step 5 in a line of its own
  const auto tb = read_back("read_tensorboard.py", fx.checkpoint_dir / "tb_logs");
  const auto mlflow = read_back("read_mlflow.py", store);
  ASSERT_EQ(mlflow["runs"].size(), 1u) << "the resumed run continues the same MLflow run";
  const auto& run = mlflow["runs"][0];
  EXPECT_EQ(run["status"], "FINISHED");
  for (const char* view : {"scalars", "raw_scalars"}) {
    SCOPED_TRACE(view);
    const auto scalars = tb_by_tag(tb[view]);  // fails on a step there twice
    for (const auto& [key, series] : jsonl) {
      ASSERT_TRUE(scalars.count(key)) << key;
      EXPECT_EQ(steps_of(scalars.at(key)), steps_of(series)) << key;
      for (const auto& [step, value] : series) {
        EXPECT_EQ(scalars.at(key).at(step), static_cast<double>(static_cast<float>(value))) << key << " " << step;
      }
    }
  }
  for (const auto& [key, series] : jsonl) {
    const auto logged = ml_series(run, key);  // fails on a step there twice
    EXPECT_EQ(logged, series) << key;
  }
  EXPECT_EQ(run["params"]["model.dim"], "32");
  EXPECT_EQ(run["params"]["train.max_steps"], std::to_string(stopped_at + 4));
  EXPECT_EQ(run["params"]["metrics.enable_tensorboard"], "true");
  ASSERT_EQ(tb["texts"].size(), 2u);  // the config of each session, at its first step
  EXPECT_EQ(tb["texts"][1][1], resumed_step + 1);
  EXPECT_NE(tb["texts"][1][2].get<std::string>().find("max_steps = " + std::to_string(stopped_at + 4)),
            std::string::npos);
}

}  // namespace
}  // namespace kforge::test
