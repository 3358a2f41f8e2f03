// kforge eval --tasks: load the text checkpoint, its tokenizer and the tasks; score; print the table; write the JSON.
#include "cli/eval_tasks_command.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <optional>

#include "cli/command_options.h"
#include "cli/eval_ranks.h"
#include "cli/exit_codes.h"
#include "data/tokenizer.h"
#include "dist/device.h"
#include "eval_tasks/model_decoding.h"
#include "eval_tasks/run_tasks.h"
#include "generate/checkpoint_session.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {
namespace {

constexpr const char* kCommand = "kforge eval";

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw sdk::Error(fmt::format("cannot write {}", path));
}

}  // namespace

void add_eval_tasks_options(cxxopts::Options& options) {
  options.add_options("downstream tasks")(
      "tasks", "comma-separated task names: score them (each <task-dir>/<name>/task.toml) instead of the eval loss",
      cxxopts::value<std::string>())("task-dir", "the directory holding the tasks' directories",
                                     cxxopts::value<std::string>())(
      "limit", "score only the first N documents of each task (0: all)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "num-fewshot", "few-shot examples per prompt, for every task (default: each task.toml's num_fewshot)",
      cxxopts::value<int64_t>())("seed", "seed of the few-shot sampler (lm-eval's fewshot_seed)",
                                 cxxopts::value<uint64_t>()->default_value("1234"))(
      "batch-size", "sequences per forward", cxxopts::value<int64_t>()->default_value("16"))(
      "bootstrap-iters", "resamples for perplexity's stderr (0: none)",
      cxxopts::value<int64_t>()->default_value("100000"))("output", "write the results JSON (lm-eval's layout) here",
                                                          cxxopts::value<std::string>())(
      "log-samples", "write every request (tokens, log-likelihood, greedy flag or generation) here, one JSON a line",
      cxxopts::value<std::string>())(
      "tokenizer", "tokenizer (default: data.tokenizer_path of the checkpoint's config)", cxxopts::value<std::string>())(
      "no-shared-prefix",
      "run every choice whole with its context, not the context once for all a question's choices (a benchmark and "
      "debugging switch: the log-likelihoods agree within fp32 rounding)");
}

std::string stray_task_option(const cxxopts::ParseResult& args) {
  if (args.count("tasks")) return "";
  for (const char* name : {"task-dir", "limit", "num-fewshot", "seed", "batch-size", "bootstrap-iters", "output",
                           "log-samples", "tokenizer", "no-shared-prefix"}) {
    if (args.count(name)) return std::string("--") + name;
  }
  return "";
}

int run_eval_tasks(const cxxopts::Options& options, const cxxopts::ParseResult& args,
                   const std::vector<std::string>& overrides) {
  eval_tasks::RunOptions run;
  std::vector<eval_tasks::TaskSpec> tasks;
  int64_t batch_size = 0;
  try {
    if (!args.count("task-dir")) throw sdk::ConfigError("--tasks needs --task-dir DIR (where the tasks' directories are)");
    if (args["limit"].as<int64_t>() < 0) throw sdk::ConfigError("--limit must be >= 0 (0: every document)");
    if (args.count("num-fewshot") && args["num-fewshot"].as<int64_t>() < 0) {
      throw sdk::ConfigError("--num-fewshot must be >= 0");
    }
    batch_size = args["batch-size"].as<int64_t>();
    if (batch_size < 1) throw sdk::ConfigError("--batch-size must be >= 1");
    run.limit = static_cast<size_t>(args["limit"].as<int64_t>());
    if (args.count("num-fewshot")) run.num_fewshot = args["num-fewshot"].as<int64_t>();
    run.seed = args["seed"].as<uint64_t>();
    run.bootstrap_iters = args["bootstrap-iters"].as<int64_t>();
    if (run.bootstrap_iters < 0) throw sdk::ConfigError("--bootstrap-iters must be >= 0 (0: no perplexity stderr)");
    for (const std::string& name : eval_tasks::split_task_names(args["tasks"].as<std::string>())) {
      tasks.push_back(eval_tasks::load_task(args["task-dir"].as<std::string>(), name));
    }
  } catch (const std::exception& e) {
    return usage_error(options, e.what());
  }
  const auto session = generate::open_checkpoint_session(kCommand, args["checkpoint"].as<std::string>(),
                                                         plugin_dirs_given(args), unsafe_plugins_allowed(args),
                                                         overrides, generate::ModelKinds::TextAndVisionLanguage);
  if (!session) return kExitUsage;
  const generate::CheckpointModel& ckpt = session->checkpoint;
  std::optional<data::Tokenizer> tokenizer;
  std::unique_ptr<dist::Runtime> ranks;
  try {
    ranks = join_eval_ranks(ckpt.job);
    if (ckpt.vision_language) {
      throw sdk::ConfigError(fmt::format(
          "checkpoint step {} is a vision-language model ([vlm] arch = \"{}\"): downstream tasks score text models "
          "only (their documents hold no images)",
          ckpt.snapshot.step, ckpt.job.view("vlm").get_string("arch")));
    }
    const std::string path = args.count("tokenizer") ? args["tokenizer"].as<std::string>() : ckpt.job.data.tokenizer_path;
    if (path.empty()) throw sdk::ConfigError("the checkpoint's config has no data.tokenizer_path: pass --tokenizer PATH");
    tokenizer.emplace(path);
  } catch (const std::exception& e) {
    std::cerr << kCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }
  sdk::Model& model = *ckpt.model;
  const at::Device device = dist::parameter_device(model);
  const int64_t max_length = model.max_seq_len() > 0 ? model.max_seq_len() : ckpt.job.train.seq_len;
  const eval_tasks::ScoringModel scoring{
      [&](const at::Tensor& tokens) { return model.forward(tokens.to(device)); }, max_length, batch_size,
      &ranks->world(), eval_tasks::cached_decoder(model, device),
      args.count("no-shared-prefix") ? nullptr : eval_tasks::shared_prefix(model, device)};
  std::vector<nlohmann::json> samples;
  nlohmann::json results;
  try {
    model.eval();
    const eval_tasks::Scorer scorer(scoring, *tokenizer);
    results = eval_tasks::run_tasks(tasks, scorer, run, args.count("log-samples") ? &samples : nullptr,
                                    [](const std::string& line) { std::cerr << kCommand << ": " << line << "\n"; });
  } catch (const std::exception& e) {
    std::cerr << kCommand << ": scoring failed: " << e.what() << "\n";
    return kExitFailure;
  }
  if (ranks->rank() != 0) return kExitOk;  // every rank holds every result; rank 0 reports them
  results["config"] = {{"model", "kforge"},
                       {"model_args", ckpt.step_dir.string()},
                       {"step", ckpt.snapshot.step},
                       {"batch_size", batch_size},
                       {"max_length", max_length},
                       {"shared_prefix", static_cast<bool>(scoring.shared_prefix)},
                       {"limit", run.limit == 0 ? nlohmann::json(nullptr) : nlohmann::json(run.limit)},
                       {"bootstrap_iters", run.bootstrap_iters},
                       {"fewshot_seed", run.seed},
                       {"tokenizer", tokenizer->path().string()}};
  try {
    if (args.count("output")) write_file(args["output"].as<std::string>(), results.dump(2) + "\n");
    if (args.count("log-samples")) {
      std::string lines;
      for (const auto& s : samples) lines += s.dump() + "\n";
      write_file(args["log-samples"].as<std::string>(), lines);
    }
  } catch (const std::exception& e) {
    std::cerr << kCommand << ": " << e.what() << "\n";
    return kExitFailure;
  }
  std::cout << eval_tasks::results_table(results);
  return kExitOk;
}

}  // namespace kforge::cli
