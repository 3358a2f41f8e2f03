// [eval] tasks: checked before the run (the tasks load), then scored at each evaluation with the trainer's forward.
#include "train/task_evaluation.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "data/tokenizer.h"
#include "dist/device.h"
#include "eval_tasks/run_tasks.h"
#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::train {
namespace {

std::vector<eval_tasks::TaskSpec> load_tasks(const config::JobConfig& job) {
  const auto view = job.view("eval");
  std::vector<eval_tasks::TaskSpec> tasks;
  for (const std::string& name : view.get_string_list("tasks")) {
    tasks.push_back(eval_tasks::load_task(view.get_string("task_dir"), name));
  }
  return tasks;
}

}  // namespace

void check_eval_tasks(const config::JobConfig& job) {
  const auto view = job.view("eval");
  if (view.get_string_list("tasks").empty()) return;
  const auto refuse = [](const std::string& why) { throw sdk::ConfigError("[eval] tasks: " + why); };
  if (!job.eval.enabled) refuse("the tasks run at each evaluation: set [eval] enabled = true (and interval)");
  if (view.get_string("task_dir").empty()) refuse("set [eval] task_dir, the directory holding the tasks' directories");
  if (job.data.tokenizer_path.empty()) refuse("the prompts are text: set [data] tokenizer_path");
  if (job.tree.find("vlm")) refuse("a vision-language run scores no downstream tasks (their documents hold no images)");
  const auto dist = job.view("distributed");
  if (dist.get_int("tp") > 1 || dist.get_int("pp") > 1 || dist.get_int("cp") > 1) {
    refuse(fmt::format("scored with whole sequences and logits on every rank: not with [distributed] tp = {}, pp = {} "
                       "or cp = {} (use kforge eval --tasks on a checkpoint)",
                       dist.get_int("tp"), dist.get_int("pp"), dist.get_int("cp")));
  }
  load_tasks(job);  // a task file at fault is refused now, not at the first evaluation
}

sdk::MetricList evaluate_tasks(const config::JobConfig& job, sdk::Model& model,
                               const std::function<at::Tensor(const at::Tensor&)>& forward, const dist::Group& ranks) {
  const std::vector<eval_tasks::TaskSpec> tasks = load_tasks(job);
  if (tasks.empty()) return {};
  const auto view = job.view("eval");
  const data::Tokenizer tokenizer(job.data.tokenizer_path);
  const at::Device device = dist::parameter_device(model);
  const int64_t max_length = model.max_seq_len() > 0 ? model.max_seq_len() : job.train.seq_len;
  eval_tasks::ScoringModel scoring{[&](const at::Tensor& tokens) { return forward(tokens.to(device)); }, max_length,
                                   job.train.batch_size};
  scoring.ranks = ranks.size() > 1 ? &ranks : nullptr;
  scoring.lockstep = true;
  const eval_tasks::Scorer scorer(std::move(scoring), tokenizer);
  eval_tasks::RunOptions run;
  run.limit = static_cast<size_t>(view.get_int("task_limit"));
  run.seed = static_cast<uint64_t>(view.get_int("seed"));
  run.bootstrap_iters = 0;  // the run logs values, not their stderrs
  const bool was_training = model.is_training();
  model.eval();
  nlohmann::json results;
  try {
    results = eval_tasks::run_tasks(tasks, scorer, run, nullptr,
                                    [](const std::string& line) { log::get().debug("eval tasks: {}", line); });
  } catch (...) {
    model.train(was_training);
    throw;
  }
  model.train(was_training);
  return eval_tasks::flat_metrics(results);
}

}  // namespace kforge::train
