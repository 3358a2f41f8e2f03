// [eval] tasks in a training run: eval/<task>/<metric> at every [eval] interval, the scores `kforge eval --tasks`
// gives the checkpoint of that step; the refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "core/eval_tasks/task_files.h"
#include "core/interop/interop_test_util.h"
#include "core/train/train_fixture.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"
#include "support/tiny_tokenizer.h"

namespace kforge::test::eval_tasks {
namespace {
namespace fs = std::filesystem;

class EvalCapture final : public sdk::Hook {
 public:
  std::map<int64_t, std::map<std::string, double>> metrics;  ///< step -> name -> value
  void on_eval_end(int64_t step, const sdk::MetricList& list) override {
    for (const auto& [name, value] : list) metrics[step][name] = value;
  }
};

std::vector<std::string> task_overrides(const TrainFixture& fx, const fs::path& task_dir) {
  return {"--train.max_steps=10",
          "--eval.enabled=true",
          "--eval.tasks=[\"choice\", \"partial\", \"last_word\", \"rolling\", \"answer\"]",
          "--eval.task_dir=" + task_dir.string(),
          "--data.tokenizer_path=" + tiny_tokenizer(fx.root).string()};
}

TEST(TrainingEvalTasks, EveryIntervalLogsEachTasksMetricsAsKforgeEvalScoresTheCheckpoint) {
  TrainFixture fx;
  const fs::path task_dir = temp_dir("training_tasks");
  const std::string tasks = write_tasks(task_dir);
  auto capture = std::make_shared<EvalCapture>();
  fx.run(task_overrides(fx, task_dir), {capture});
  ASSERT_EQ(capture->metrics.size(), 2u);  // steps 5 and 10 ([eval] interval = 5)
  const auto& at_10 = capture->metrics.at(10);
  for (const char* name : {"eval/loss", "eval/choice/acc", "eval/choice/acc_norm", "eval/partial/acc", "eval/grp/acc",
                           "eval/last_word/perplexity", "eval/last_word/acc", "eval/rolling/word_perplexity",
                           "eval/rolling/bits_per_byte", "eval/answer/exact_match"}) {
    EXPECT_TRUE(at_10.count(name)) << name;
  }
  // The same weights, requests and batches (train.batch_size = 4 rows a forward): the same numbers.
  int rc = 0;
  const fs::path out = temp_dir("training_tasks_eval") / "results.json";
  const std::string output = interop::kforge_cli(
      fmt::format("eval --checkpoint {} --tasks {} --task-dir {} --batch-size 4 --output {}",
                  (fx.checkpoint_dir / "step_10").string(), tasks, task_dir.string(), out.string()),
      &rc);
  ASSERT_EQ(rc, 0) << output;
  const auto results = nlohmann::json::parse(interop::file_bytes(out));
  size_t compared = 0;
  for (const auto& [task, metrics] : results["results"].items()) {
    for (const auto& [key, value] : metrics.items()) {
      if (key == "alias" || key.find("_stderr") != std::string::npos) continue;
      const std::string name = fmt::format("eval/{}/{}", task, key.substr(0, key.find(',')));
      ASSERT_TRUE(at_10.count(name)) << name;
      EXPECT_EQ(at_10.at(name), value.get<double>()) << name;
      ++compared;
    }
  }
  EXPECT_EQ(compared, at_10.size() - 2);  // all but eval/loss and eval/perplexity
}

TEST(TrainingEvalTasks, RefusedWithoutTaskDirOrEnabledOrWithABadTask) {
  TrainFixture fx;
  const fs::path task_dir = temp_dir("training_tasks_bad");
  write_tasks(task_dir);
  std::vector<std::string> overrides = task_overrides(fx, task_dir);
  overrides[3] = "--eval.task_dir=";
  EXPECT_THROW(
      {
        try {
          fx.run(overrides, {});
        } catch (const sdk::ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("[eval] tasks: set [eval] task_dir"), std::string::npos) << e.what();
          throw;
        }
      },
      sdk::ConfigError);
  overrides = task_overrides(fx, task_dir);
  overrides[1] = "--eval.enabled=false";
  EXPECT_THROW(fx.run(overrides, {}), sdk::ConfigError);
  overrides = task_overrides(fx, task_dir);
  overrides[2] = "--eval.tasks=[\"nowhere\"]";
  EXPECT_THROW(fx.run(overrides, {}), sdk::ConfigError);
}

}  // namespace
}  // namespace kforge::test::eval_tasks
