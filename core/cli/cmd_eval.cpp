// kforge eval: eval loss and perplexity of a checkpoint on its config's eval dataset (KempnerForge §9.5).
#include <fmt/format.h>

#include <cxxopts.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/eval_ranks.h"
#include "cli/eval_tasks_command.h"
#include "cli/exit_codes.h"
#include "feed/hf_data.h"
#include "feed/image_text_feed.h"
#include "feed/packing.h"
#include "generate/checkpoint_session.h"
#include "kforge/sdk/error.h"
#include "plugins/components.h"
#include "train/evaluator.h"

namespace kforge::cli {
namespace {
constexpr const char* kEvalCommand = "kforge eval";
}  // namespace

cxxopts::Options eval_options() {
  cxxopts::Options options(kEvalCommand,
                           "Evaluate a checkpoint: rebuilds the model from the checkpoint's config.toml (plus any\n"
                           "--section.key=value or --section.key value overrides, e.g. --eval.dataset_path=DIR\n"
                           "--eval.steps 50), loads its weights and reports the mean loss over eval.steps batches\n"
                           "of train.batch_size windows of eval.dataset_path (or of the eval.hf_dataset_name\n"
                           "export, through its token cache), in order, and perplexity =\n"
                           "exp(min(loss, 20)). A vision-language checkpoint evaluates on the image-text data of\n"
                           "eval.dataset_path (WebDataset shards or a JSON Lines manifest), read as in training;\n"
                           "one of a video run on the clips there, read by its [video] dataset_type (webvid: the\n"
                           "validation split of the WebVid root; video_jsonl: the manifest).\n"
                           "Prints a table line, then one JSON line {step, tokens_seen,\n"
                           "eval/loss, eval/perplexity}.\n"
                           "Under `kforge launch --nproc-per-node N -- eval ...` the ranks share the batches (or\n"
                           "the task requests), each holding the whole model, and rank 0 prints (and writes) the\n"
                           "numbers one process gives, bit for bit.\n"
                           "With --tasks, scores downstream tasks instead (lm-eval-harness's requests and metrics,\n"
                           "docs/how-to/downstream-eval.md): prints the results table and writes the results JSON\n"
                           "to --output (text checkpoints only).\n"
                           "Exit codes: 0 done, 1 failed, 2 bad arguments, checkpoint or config.");
  options.add_options()("checkpoint", "a step_N directory, or a checkpoint.dir (its newest checkpoint)",
                        cxxopts::value<std::string>());
  add_plugin_dir_option(options);
  add_allow_unsafe_plugin_dir_option(options);
  options.add_options()("h,help", "this help");
  add_eval_tasks_options(options);
  return options;
}

int cmd_eval(int argc, char** argv) {
  cxxopts::Options options = eval_options();
  const ParsedOptions parsed = parse_options_and_overrides(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  if (!args.count("checkpoint")) return usage_error(options, "missing --checkpoint DIR");
  if (args.count("tasks")) return run_eval_tasks(options, args, parsed.overrides);
  if (const std::string stray = stray_task_option(args); !stray.empty()) {
    return usage_error(options, stray + " is an option of downstream tasks: give --tasks too");
  }
  const auto session = generate::open_checkpoint_session(kEvalCommand, args["checkpoint"].as<std::string>(),
                                                         plugin_dirs_given(args), unsafe_plugins_allowed(args),
                                                         parsed.overrides, generate::ModelKinds::TextAndVisionLanguage);
  if (!session) return kExitUsage;
  const auto& ckpt = session->checkpoint;
  const config::JobConfig& job = ckpt.job;
  std::unique_ptr<dist::Runtime> ranks;
  const dist::Group self;  // each rank reads every batch; `ranks` shares them out
  std::unique_ptr<sdk::Loss> loss;
  std::unique_ptr<sdk::Dataset> data;
  std::unique_ptr<feed::ImageTextFeed> images;  // a vision-language checkpoint's eval data (then no `data`)
  int64_t eos_id = -1;  // [data] pack_sequences: evaluate packed documents as the run trained on them
  try {
    ranks = join_eval_ranks(job);
    if (job.eval.dataset_path.empty() && !job.eval.hf) {
      throw sdk::ConfigError(
          "the checkpoint's config has no eval.dataset_path: pass --eval.dataset_path=DIR (or "
          "--eval.hf_dataset_name=DIR for a Hugging Face JSON Lines export)");
    }
    if (job.eval.steps < 1) {
      throw sdk::ConfigError(fmt::format("eval.steps = {}: pass --eval.steps=N with N >= 1", job.eval.steps));
    }
    const plugins::Components components(session->host->registry, job);
    loss = components.loss();
    if (ckpt.vision_language) {
      if (job.eval.hf) {
        throw sdk::ConfigError(
            "a vision-language checkpoint evaluates on image-text data: pass --eval.dataset_path "
            "(WebDataset .tar shards or a JSON Lines manifest) instead of eval.hf_dataset_name");
      }
      images =
          std::make_unique<feed::ImageTextFeed>(job, components, ckpt.pixels, self, feed::ImageTextFeed::Split::Eval);
    } else if (job.eval.hf) {  // through its token cache, written now if missing (by rank 0)
      const auto cache = feed::hf_shards(job, *job.eval.hf, [&ranks]() -> const dist::Group& { return ranks->world(); });
      data = components.dataset(cache->dir, cache->pattern, job.view("model").get_int("vocab_size"));
    } else {
      data = components.dataset(job.eval.dataset_path, job.eval.file_pattern, job.view("model").get_int("vocab_size"));
    }
    eos_id = feed::packing_eos_id(job, components.model_capabilities());
  } catch (const std::exception& e) {
    std::cerr << kEvalCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }
  sdk::MetricList metrics;
  try {
    metrics = images ? train::evaluate_images(
                           *ckpt.vision_language, *loss, *images, job.eval.steps, self,
                           [&](const at::Tensor& tokens) { return ckpt.model->forward(tokens); }, ranks->world())
                     : train::evaluate(*ckpt.model, *loss, *data, job.train.batch_size, job.eval.steps,
                                       job.view("model").get_int("vocab_size"), self, nullptr, eos_id, nullptr,
                                       ranks->world());
  } catch (const std::exception& e) {
    std::cerr << kEvalCommand << ": evaluation failed: " << e.what() << "\n";
    return kExitFailure;
  }
  if (ranks->rank() != 0) return kExitOk;
  nlohmann::json out = {{"step", ckpt.snapshot.step}, {"tokens_seen", ckpt.snapshot.tokens_seen}};
  for (const auto& [name, value] : metrics) out[name] = value;
  std::cout << fmt::format("step {} | tokens_seen {} | eval/loss {:.4f} | eval/perplexity {:.4f}\n",
                           ckpt.snapshot.step, ckpt.snapshot.tokens_seen, out["eval/loss"].get<double>(),
                           out["eval/perplexity"].get<double>())
            << out.dump() << "\n";
  return kExitOk;
}

}  // namespace kforge::cli
