// [eval] tasks in a training run: eval/<task>/<metric> at every [eval] interval, the scores `kforge eval --tasks`
// gives the checkpoint of that step (on one rank, and on two FSDP ranks under kforge launch); two data-parallel ranks
// sharing the requests in step give one rank's; the refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/eval_tasks/task_files.h"
#include "core/interop/interop_test_util.h"
#include "core/train/train_fixture.h"
#include "kforge/sdk/error.h"
#include "plugins/components.h"
#include "support/launch_job.h"
#include "support/two_ranks.h"
#include "train/task_evaluation.h"
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

/// Every metric `kforge eval --tasks` (batch 4, the fixture's train.batch_size, and `extra`) gives the checkpoint
/// `step_dir` is `logged` (eval/<task>/<metric>), bit for bit, and `logged` holds no other but eval/loss and
/// eval/perplexity.
void expect_kforge_eval_scores(const std::map<std::string, double>& logged, const fs::path& step_dir,
                               const std::string& tasks, const fs::path& task_dir, const std::string& extra) {
  int rc = 0;
  const fs::path out = temp_dir("training_tasks_eval") / "results.json";
  const std::string output =
      interop::kforge_cli(fmt::format("eval --checkpoint {} --tasks {} --task-dir {} --batch-size 4 --output {} {}",
                                      step_dir.string(), tasks, task_dir.string(), out.string(), extra),
                          &rc);
  ASSERT_EQ(rc, 0) << output;
  const auto results = nlohmann::json::parse(interop::file_bytes(out));
  size_t compared = 0;
  for (const auto& [task, metrics] : results["results"].items()) {
    for (const auto& [key, value] : metrics.items()) {
      if (key == "alias" || key.find("_stderr") != std::string::npos) continue;
      const std::string name = fmt::format("eval/{}/{}", task, key.substr(0, key.find(',')));
      ASSERT_TRUE(logged.count(name)) << name;
      EXPECT_EQ(logged.at(name), value.get<double>()) << name;
      ++compared;
    }
  }
  EXPECT_EQ(compared, logged.size() - 2);  // all but eval/loss and eval/perplexity
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
  expect_kforge_eval_scores(at_10, fx.checkpoint_dir / "step_10", tasks, task_dir, "");
}

TEST(TrainingEvalTasks, TwoFsdpRanksLogWhatKforgeEvalScoresTheCheckpointWhole) {
  TrainFixture fx;
  const fs::path task_dir = temp_dir("training_tasks_fsdp");
  const std::string tasks = write_tasks(task_dir);
  std::vector<std::string> overrides = task_overrides(fx, task_dir);
  overrides[2] = "'" + overrides[2] + "'";  // a shell word: the launcher runs a command line
  launch(fx, 2, overrides);                 // FSDP over both ranks: collective forwards
  std::map<std::string, double> at_10;
  std::ifstream lines(fx.checkpoint_dir / "metrics.jsonl");
  for (std::string line; std::getline(lines, line);) {
    const auto row = nlohmann::json::parse(line);
    if (row.value("step", -1) != 10) continue;
    for (const auto& [key, value] : row.items()) {
      if (key.rfind("eval/", 0) == 0) at_10[key] = value.get<double>();
    }
  }
  ASSERT_TRUE(at_10.count("eval/choice/acc")) << "no eval/<task> metrics at step 10";
  // Training scores every request whole: kforge eval --no-shared-prefix of the step's checkpoint, to the bit.
  expect_kforge_eval_scores(at_10, fx.checkpoint_dir / "step_10", tasks, task_dir, "--no-shared-prefix");
}

TEST(TrainingEvalTasks, TwoRanksShareTheRequestsInStepAndLogOneRanksMetrics) {
  TrainFixture fx;
  const fs::path task_dir = temp_dir("training_tasks_ranks");
  write_tasks(task_dir);
  const config::JobConfig job = fx.job(task_overrides(fx, task_dir));
  std::vector<std::shared_ptr<sdk::Model>> models;  // one rank's, then each of two ranks': the same weights
  for (int m = 0; m < 3; ++m) {
    at::manual_seed(7);
    models.push_back(plugins::Components(fx.plugins->registry, job).model());
  }
  int alone_forwards = 0;
  const sdk::MetricList alone = train::evaluate_tasks(job, *models[0], [&](const at::Tensor& t) {
    ++alone_forwards;
    return models[0]->forward(t);
  });
  ASSERT_FALSE(alone.empty());
  std::vector<sdk::MetricList> shared(2);
  std::vector<int> forwards(2, 0);
  const auto errors = on_two_ranks([&](const dist::Runtime& runtime) {
    const int r = runtime.rank();
    sdk::Model& model = *models[1 + r];
    // Collective, as FSDP's: the ranks' forwards pair up only if every rank runs as many.
    const auto forward = [&](const at::Tensor& tokens) {
      at::Tensor token = at::ones({1});
      runtime.dp().all_reduce(token);
      ++forwards[r];
      return model.forward(tokens);
    };
    shared[r] = train::evaluate_tasks(job, model, forward, runtime.dp());
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(forwards[0], forwards[1]);
  EXPECT_LT(forwards[0], alone_forwards * 3 / 4) << "each rank should run about half the forwards";
  EXPECT_EQ(shared[0], alone);
  EXPECT_EQ(shared[1], alone);
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
