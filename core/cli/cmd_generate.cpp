// kforge generate: text continuation from a checkpoint with the KV-cache sampler (KempnerForge §3.3).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cxxopts.hpp>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "config/hub_cache.h"
#include "data/tokenizer.h"
#include "generate/checkpoint_session.h"
#include "generate/generate.h"
#include "generate/image_input.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {
namespace {

constexpr const char* kGenerateCommand = "kforge generate";

/// --prompt values, then the non-empty lines of --prompts-file. Throws sdk::Error naming the file.
std::vector<std::string> read_prompts(const cxxopts::ParseResult& args) {
  std::vector<std::string> prompts;
  if (args.count("prompt")) prompts = args["prompt"].as<std::vector<std::string>>();
  if (args.count("prompts-file")) {
    const auto file = args["prompts-file"].as<std::string>();
    std::ifstream in(file);
    if (!in) throw sdk::Error(fmt::format("--prompts-file {}: cannot open it", file));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) prompts.push_back(line);
    }
  }
  if (prompts.empty()) throw sdk::Error("no prompt: give --prompt TEXT (repeatable) or --prompts-file FILE");
  return prompts;
}

/// Generates each group of equal-length prompts as one batch; results in the prompts' order. A vision-language model
/// sees `image` ([3, H, W]) in every row.
std::vector<std::vector<int64_t>> generate_by_length(const generate::CheckpointModel& checkpoint,
                                                     const std::vector<std::vector<int64_t>>& prompts,
                                                     const at::Tensor& image,
                                                     const generate::GenerateOptions& options) {
  std::map<size_t, std::vector<size_t>> by_length;
  for (size_t i = 0; i < prompts.size(); ++i) by_length[prompts[i].size()].push_back(i);
  std::vector<std::vector<int64_t>> out(prompts.size());
  for (const auto& [length, rows] : by_length) {
    std::vector<std::vector<int64_t>> batch;
    for (size_t i : rows) batch.push_back(prompts[i]);
    if (checkpoint.vision_language) {
      const auto n = static_cast<int64_t>(rows.size());
      checkpoint.vision_language->set_images(image.unsqueeze(0).expand({n, -1, -1, -1}).contiguous());
    }
    auto generated = generate::generate(*checkpoint.model, batch, options);
    for (size_t k = 0; k < rows.size(); ++k) out[rows[k]] = std::move(generated[k]);
  }
  return out;
}

/// --image read for a vision-language checkpoint (an undefined tensor for a text one). Throws sdk::Error when it is
/// missing, given to a text model, or unreadable, and for a checkpoint of a video run (which takes clips).
at::Tensor checkpoint_image(const generate::CheckpointSession& session, const cxxopts::ParseResult& args) {
  const generate::CheckpointModel& checkpoint = session.checkpoint;
  if (checkpoint.job.tree.find("video") != nullptr) {
    throw sdk::Error(fmt::format(
        "checkpoint step {} was trained on video clips ([video] max_frames = {}): kforge generate continues prompts "
        "about one --image, and generating from clips is not supported; evaluate it with kforge eval instead",
        checkpoint.snapshot.step, checkpoint.job.view("video").get_int("max_frames")));
  }
  const std::string arch = checkpoint.vision_language ? checkpoint.job.view("vlm").get_string("arch") : "";
  if (!args.count("image")) {
    if (!checkpoint.vision_language) return {};
    throw sdk::Error(
        fmt::format("checkpoint step {} is a vision-language model ([vlm] arch = \"{}\"): give --image "
                    "PATH, the image the prompts are about",
                    checkpoint.snapshot.step, arch));
  }
  const auto file = args["image"].as<std::string>();
  if (!checkpoint.vision_language) {
    throw sdk::Error(fmt::format("--image {}: checkpoint step {} is a text model, which takes no image", file,
                                 checkpoint.snapshot.step));
  }
  return generate::read_image(checkpoint, session.host->registry, file);
}

}  // namespace

/// Encodes `prompts`, generates and prints each prompt with its continuation (cut at EOS), numbered when
/// `numbered`. Returns the exit code: 2 for what the user can fix (options, an empty or over-long prompt), 1 for a
/// failure, each said on stderr.
int continue_prompts(const generate::CheckpointModel& checkpoint, const data::Tokenizer& tokenizer,
                     const std::vector<std::string>& prompts, const at::Tensor& image,
                     const generate::GenerateOptions& gen, bool numbered) {
  std::vector<std::vector<int64_t>> ids;
  for (const auto& text : prompts) {
    const std::vector<int> encoded = tokenizer.encode(text);
    ids.emplace_back(encoded.begin(), encoded.end());
  }
  std::vector<std::vector<int64_t>> outputs;
  try {
    outputs = generate_by_length(checkpoint, ids, image, gen);
  } catch (const sdk::Error& e) {  // bad options, empty or over-long prompt: the user's to fix
    std::cerr << kGenerateCommand << ": " << e.what() << " (see --max-new-tokens, --temperature, --top-k, --top-p)\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << kGenerateCommand << ": generation failed: " << e.what() << "\n";
    return kExitFailure;
  }
  try {
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::vector<int64_t> continuation(outputs[i].begin() + static_cast<std::ptrdiff_t>(ids[i].size()),
                                        outputs[i].end());
      const auto eos = std::find(continuation.begin(), continuation.end(), gen.eos_id);
      continuation.erase(eos, continuation.end());
      if (numbered) std::cout << fmt::format("=== prompt {} ===\n", i);
      continuation.insert(continuation.begin(), ids[i].begin(), ids[i].end());
      std::cout << tokenizer.decode(continuation) << std::endl;  // flushed: a reader of a pipe sees each at once
    }
  } catch (const std::exception& e) {
    std::cerr << kGenerateCommand << ": cannot decode the output: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

/// --interactive: one prompt per line of stdin until its end, the model loaded once (KempnerForge's REPL; blank lines
/// skipped). A prompt the user can fix is reported and the loop goes on; a failure ends it with exit code 1.
int continue_stdin_prompts(const generate::CheckpointModel& checkpoint, const data::Tokenizer& tokenizer,
                           const at::Tensor& image, const generate::GenerateOptions& gen) {
  const bool terminal = ::isatty(STDIN_FILENO) != 0;
  if (terminal) std::cerr << kGenerateCommand << ": type a prompt and press Enter; Ctrl-D ends\n";
  for (std::string line;;) {
    if (terminal) std::cerr << ">>> " << std::flush;
    if (!std::getline(std::cin, line)) break;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (continue_prompts(checkpoint, tokenizer, {line}, image, gen, false) == kExitFailure) return kExitFailure;
  }
  return kExitOk;
}

cxxopts::Options generate_options() {
  cxxopts::Options options(kGenerateCommand,
                           "Continue prompts with a trained checkpoint: rebuilds the model from the checkpoint's\n"
                           "config.toml, loads its weights, tokenises with its data.tokenizer_path (or --tokenizer),\n"
                           "then prefills each prompt and samples one token at a time with a KV cache until\n"
                           "--max-new-tokens or until every row of the batch has emitted EOS. Sampling:\n"
                           "temperature 0 is greedy; else logits/T, top-k, top-p (nucleus), multinomial.\n"
                           "There is no padding: prompts of different token lengths run as separate batches,\n"
                           "one batch per distinct prompt length (all with the same --seed). Prints each prompt\n"
                           "followed by its continuation (cut at EOS). --interactive reads one prompt per line\n"
                           "of stdin until its end instead, keeping the model loaded. The defaults are\n"
                           "KempnerForge's (scripts/generate.py): 128 new tokens, temperature 1, no top-k or top-p.\n"
                           "A vision-language checkpoint continues the prompts about --image PATH (an arch that\n"
                           "decodes, as its listing in `kforge list-plugins` says; the image is read as its\n"
                           "training images were; not one of a video run).\n"
                           "Exit codes: 0 done, 1 failed, 2 bad arguments, checkpoint, tokenizer, image or length.");
  options.add_options()("checkpoint", "a step_N directory, or a checkpoint.dir (its newest checkpoint)",
                        cxxopts::value<std::string>())("prompt", "prompt text (repeatable)",
                                                       cxxopts::value<std::vector<std::string>>())(
      "prompts-file", "file with one prompt per line (empty lines skipped)", cxxopts::value<std::string>())(
      "image",
      "image file (JPEG, PNG or WebP) every prompt is about: required by, and only for, a vision-language "
      "checkpoint",
      cxxopts::value<std::string>())("interactive",
                                     "read prompts from stdin, one per line, until its end (the model stays loaded)")(
      "max-new-tokens", "tokens to generate per prompt", cxxopts::value<int64_t>()->default_value("128"))(
      "temperature", "sampling temperature (0 = greedy)", cxxopts::value<double>()->default_value("1.0"))(
      "top-k", "keep the k most likely tokens (0 = off)", cxxopts::value<int64_t>()->default_value("0"))(
      "top-p", "nucleus: keep the smallest set reaching this probability (1 = off)",
      cxxopts::value<double>()->default_value("1.0"))("seed", "seed of the sampling generator",
                                                      cxxopts::value<uint64_t>()->default_value("0"));
  add_plugin_dir_option(options);
  add_allow_unsafe_plugin_dir_option(options);
  options.add_options()("tokenizer",
                        "tokenizer: a SentencePiece .model, a Hugging Face tokenizer.json or a .tiktoken file "
                        "(default: data.tokenizer_path of the checkpoint's config)",
                        cxxopts::value<std::string>())("h,help", "this help");
  return options;
}

int cmd_generate(int argc, char** argv) {
  cxxopts::Options options = generate_options();
  const ParsedOptions parsed = parse_options(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  const bool interactive = args.count("interactive") > 0;
  std::vector<std::string> prompts;
  try {
    if (!args.count("checkpoint")) throw sdk::Error("missing --checkpoint DIR");
    if (interactive && (args.count("prompt") || args.count("prompts-file"))) {
      throw sdk::Error("--interactive reads the prompts from stdin: drop --prompt and --prompts-file");
    }
    if (!interactive) prompts = read_prompts(args);
  } catch (const std::exception& e) {
    return usage_error(options, e.what());
  }
  const auto session =
      generate::open_checkpoint_session(kGenerateCommand, args["checkpoint"].as<std::string>(), plugin_dirs_given(args),
                                        unsafe_plugins_allowed(args), {}, generate::ModelKinds::TextAndVisionLanguage);
  if (!session) return kExitUsage;
  const config::JobConfig& job = session->checkpoint.job;
  at::Tensor image;
  try {
    image = checkpoint_image(*session, args);
  } catch (const std::exception& e) {
    std::cerr << kGenerateCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }

  std::optional<data::Tokenizer> tokenizer;
  try {
    const std::string path = args.count("tokenizer") ? args["tokenizer"].as<std::string>() : job.data.tokenizer_path;
    if (path.empty()) {
      throw sdk::Error("the checkpoint's config has no data.tokenizer_path: pass --tokenizer PATH");
    }
    tokenizer.emplace(config::tokenizer_file(path, "--tokenizer"));
  } catch (const std::exception& e) {
    std::cerr << kGenerateCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }
  generate::GenerateOptions gen{args["max-new-tokens"].as<int64_t>(), args["temperature"].as<double>(),
                                args["top-k"].as<int64_t>(),          args["top-p"].as<double>(),
                                tokenizer->eos_id(),                  args["seed"].as<uint64_t>(),
                                tokenizer->vocab_size()};
  if (interactive) return continue_stdin_prompts(session->checkpoint, *tokenizer, image, gen);
  return continue_prompts(session->checkpoint, *tokenizer, prompts, image, gen, prompts.size() > 1);
}

}  // namespace kforge::cli
