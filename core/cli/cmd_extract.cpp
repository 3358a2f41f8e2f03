// kforge extract: one forward of a checkpoint with the model's hook points captured into a NumPy .npz.
#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/extract_output.h"
#include "data/tokenizer.h"
#include "generate/capture.h"
#include "plugins/components.h"
#include "generate/checkpoint_session.h"
#include "generate/module_paths.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"

namespace kforge::cli {
namespace {

constexpr const char* kExtractCommand = "kforge extract";
constexpr const char* kLayerSlot = "{layer}";

/// The comma-separated items of `text` (empty items refused, naming `option`).
std::vector<std::string> extract_split_list(const std::string& option, const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) throw sdk::Error(fmt::format("{} '{}': an empty item (write e.g. 0,3)", option, text));
    items.push_back(item);
  }
  if (items.empty()) throw sdk::Error(fmt::format("{} is empty", option));
  return items;
}

/// A non-negative integer item of `option`, or an error naming both.
int64_t extract_parse_index(const std::string& option, const std::string& text, const std::string& item) {
  size_t used = 0;
  int64_t value = -1;
  try {
    value = std::stoll(item, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != item.size() || value < 0) {
    throw sdk::Error(fmt::format("{} '{}': '{}' is not a non-negative integer", option, text, item));
  }
  return value;
}

/// The model's hook points, as a sentence: the model-wide ones and the per-layer suffixes.
std::string extract_describe_points(const std::vector<std::string>& patterns) {
  std::vector<std::string> global, per_layer;
  for (const std::string& p : patterns) {
    const size_t slot = p.find(kLayerSlot);
    if (slot == std::string::npos) {
      global.push_back(p);
    } else {
      const size_t rest = slot + std::string(kLayerSlot).size();
      per_layer.push_back(p.substr(rest < p.size() && p[rest] == '.' ? rest + 1 : rest));
    }
  }
  const auto listed = [](const std::vector<std::string>& names) {
    return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
  };
  return fmt::format("model-wide: {}; per layer (with --layers): {}", listed(global), listed(per_layer));
}

/// The points --what and --layers name, from the model's hook-point patterns: a --what item W is a
/// per-layer point when a pattern ends in "{layer}.W" (expanded for each layer), else a model-wide
/// point when a pattern is W. A point named twice is taken once. Throws sdk::Error naming the item and
/// the valid ones.
std::vector<std::string> extract_select_points(const std::vector<std::string>& patterns, const std::string& model,
                                               const std::vector<std::string>& what,
                                               const std::vector<int64_t>& layers) {
  if (patterns.empty()) {
    throw sdk::Error(
        fmt::format("model '{}' declares no hook points: it cannot be captured (its plugin lists them "
                    "with kforge::sdk::hook_points; `kforge list-plugins -v` shows them)",
                    model));
  }
  std::vector<std::string> points;
  const auto add = [&points](const std::string& point) {  // once each, in the order first named
    if (std::find(points.begin(), points.end(), point) == points.end()) points.push_back(point);
  };
  for (const std::string& w : what) {
    const std::string suffix = std::string(kLayerSlot) + "." + w;
    bool found = false;
    for (const std::string& p : patterns) {
      if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) {
        const std::string head = p.substr(0, p.size() - suffix.size());
        for (const int64_t layer : layers) add(fmt::format("{}{}.{}", head, layer, w));
        found = true;
        break;
      }
      if (p == w) {
        add(w);
        found = true;
        break;
      }
    }
    if (!found) {
      throw sdk::Error(fmt::format("--what {}: model '{}' has no hook point '{}'. Its points are {}", w, model, w,
                                   extract_describe_points(patterns)));
    }
  }
  return points;
}

/// The hook point of each module path --modules names (KempnerForge's, each taken once, generate/module_paths.h),
/// in order: the arrays' names. The sources of `names` are those points, and "" for the forward's output.
ExtractSelection extract_select_modules(const std::vector<std::string>& patterns, int64_t n_layers,
                                        const std::vector<std::string>& paths) {
  const std::vector<std::string> all = generate::hook_point_names(patterns, n_layers);
  ExtractSelection selection;
  for (const std::string& path : paths) {
    if (std::find(selection.names.begin(), selection.names.end(), path) != selection.names.end()) continue;
    const std::string point = generate::point_of_module_path(path, all, patterns);
    const bool output = point == generate::kOutputModule;
    if (!output) selection.points.push_back(point);
    selection.names.push_back(path);
    selection.sources.push_back(output ? "" : point);
  }
  return selection;
}

/// A positive integer option, or an error naming it.
int64_t extract_positive(const cxxopts::ParseResult& args, const std::string& option) {
  const int64_t value = args[option].as<int64_t>();
  if (value < 1) throw sdk::Error(fmt::format("--{} {}: give a positive number", option, value));
  return value;
}

/// The --layers indices ("all": every block) of a model of `n_layers` blocks.
std::vector<int64_t> extract_select_layers(const std::string& text, int64_t n_layers) {
  std::vector<int64_t> layers;
  if (text == "all") {
    for (int64_t i = 0; i < n_layers; ++i) layers.push_back(i);
    return layers;
  }
  for (const std::string& item : extract_split_list("--layers", text)) {
    const int64_t layer = extract_parse_index("--layers", text, item);
    if (layer >= n_layers) {
      throw sdk::Error(fmt::format("--layers {}: layer {} is out of range: the model has {} layers, 0..{} (or 'all')",
                                   text, layer, n_layers, n_layers - 1));
    }
    layers.push_back(layer);
  }
  return layers;
}

/// The token ids of --tokens, --input or --input-file (the latter two through the tokenizer).
std::vector<int64_t> extract_read_tokens(const cxxopts::ParseResult& args, const config::JobConfig& job) {
  if (args.count("tokens")) {
    const std::string text = args["tokens"].as<std::string>();
    std::vector<int64_t> ids;
    for (const std::string& item : extract_split_list("--tokens", text)) {
      ids.push_back(extract_parse_index("--tokens", text, item));
    }
    return ids;
  }
  std::string text;
  if (args.count("input")) {
    text = args["input"].as<std::string>();
  } else {
    const std::string file = args["input-file"].as<std::string>();
    std::ifstream in(file, std::ios::binary);
    if (!in) throw sdk::Error(fmt::format("--input-file {}: cannot open it", file));
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string path = args.count("tokenizer") ? args["tokenizer"].as<std::string>() : job.data.tokenizer_path;
  if (path.empty()) {
    throw sdk::Error("the checkpoint's config has no data.tokenizer_path: pass --tokenizer PATH, or --tokens IDS");
  }
  const data::Tokenizer tokenizer(path);
  const std::vector<int> encoded = tokenizer.encode(text);
  return {encoded.begin(), encoded.end()};
}

/// Refuses an empty input, ids outside the vocabulary and inputs longer than the model takes.
void extract_check_tokens(const std::vector<int64_t>& ids, int64_t vocab_size, int64_t max_seq_len) {
  if (ids.empty()) throw sdk::Error("the input has no tokens (it tokenises to nothing): give a longer --input");
  for (const int64_t id : ids) {
    if (id >= vocab_size) {
      throw sdk::Error(
          fmt::format("token id {} is out of the model's vocabulary ([model] vocab_size = {})", id, vocab_size));
    }
  }
  if (max_seq_len > 0 && static_cast<int64_t>(ids.size()) > max_seq_len) {
    throw sdk::Error(fmt::format("the input has {} tokens, more than the model's [model] max_seq_len = {}: shorten it",
                                 ids.size(), max_seq_len));
  }
}

}  // namespace

cxxopts::Options extract_options() {
  cxxopts::Options options(
      kExtractCommand,
      "Capture activations of a checkpoint: rebuilds the model from the checkpoint's config.toml, loads its\n"
      "weights, runs one forward (eval mode, no gradients) of the input as a batch of one and writes the\n"
      "values at the requested hook points to OUT.npz, a NumPy archive (numpy.load(OUT.npz)): tokens.npy\n"
      "(int64 [1, seq]) and one array per point (float32; the router's choices and counts int64), named after\n"
      "it, e.g. layers.3.attn_out.npy.\n"
      "A model declares its hook points (`kforge list-plugins -v`); the built-in transformer's are, per\n"
      "layer, residual (the block's output, the residual stream after it) [1, seq, dim], attention_norm and\n"
      "mlp_norm (the normalised inputs of attention and of the MLP) [1, seq, dim], attn_out (the\n"
      "attention sublayer's output before the residual add) [1, seq, dim], mlp_out (the MLP's or MoE's\n"
      "output before the add) [1, seq, dim] and attention (the probabilities softmax(QK^T/sqrt(hd)),\n"
      "causal, computed only when asked) [1, heads, seq, seq]; on MoE layers mlp.router.choices (each\n"
      "token's experts, int64) and mlp.router.weights (their gate weights) [1, seq, top_k] and\n"
      "mlp.router.expert_counts (each sequence's (token, slot) assignments per expert, int64) [1, experts];\n"
      "and model-wide embed (token embeddings) and final_norm (the output head's input) [1, seq, dim].\n"
      "--modules takes KempnerForge's module paths instead of --what/--layers, each array named after its path:\n"
      "tok_embeddings (= embed), layers.N (the block's output, = layers.N.residual), layers.N.attention (=\n"
      "layers.N.attn_out), layers.N.mlp (= layers.N.mlp_out), layers.N.attention_norm, layers.N.mlp_norm,\n"
      "layers.N.mlp.router.{choices,weights,expert_counts} (the points of those names), norm (= final_norm)\n"
      "and output (the logits) [1, seq, vocab].\n"
      "--data DIR runs the windows of the token shards in DIR (read by the checkpoint's [data] dataset plugin\n"
      "with eval.file_pattern, as kforge eval reads them; train.seq_len tokens each) in batches of --batch-size,\n"
      "at most --max-batches, and writes OUT (a directory) as shard_00000.npz, ... of --shard-size samples each:\n"
      "tokens [n, seq] and every array with n rows.\n"
      "Example: kforge extract --checkpoint ckpt --input 'Hello world' --layers 0,3 --what residual,attention "
      "acts.npz\n"
      "Exit codes: 0 done, 1 failed, 2 bad arguments, checkpoint, tokenizer, input or hook point.");
  options.positional_help("OUT.npz (with --data: OUT_DIR)");
  options.add_options()("checkpoint", "a step_N directory, or a checkpoint.dir (its newest checkpoint)",
                        cxxopts::value<std::string>())(
      "input", "text to run, tokenised with the checkpoint's tokenizer", cxxopts::value<std::string>())(
      "tokens", "token ids to run, comma-separated (e.g. 1,2,3)", cxxopts::value<std::string>())(
      "input-file", "file whose whole text is tokenised and run", cxxopts::value<std::string>())(
      "data", "a directory of token shards whose windows are run; OUT is then a directory of .npz shards",
      cxxopts::value<std::string>())("batch-size", "windows per forward (with --data)",
                                      cxxopts::value<int64_t>()->default_value("8"))(
      "max-batches", "at most this many batches (with --data; 0: every window)",
      cxxopts::value<int64_t>()->default_value("0"))("shard-size", "samples per .npz shard (with --data)",
                                                    cxxopts::value<int64_t>()->default_value("1024"))(
      "layers", "block indices, comma-separated, or 'all'", cxxopts::value<std::string>()->default_value("all"))(
      "what",
      "hook points, comma-separated: per-layer ones (e.g. residual,attention_norm,attn_out,mlp_out,attention,"
      "mlp.router.choices) "
      "and model-wide ones (e.g. embed,final_norm)",
      cxxopts::value<std::string>()->default_value("residual"))(
      "modules",
      "KempnerForge module paths, comma-separated (e.g. tok_embeddings,layers.3.attention_norm,layers.3.attention,"
      "layers.3.mlp,layers.3.mlp.router.expert_counts,norm,output), "
      "instead of --what and --layers",
      cxxopts::value<std::string>())(
      "tokenizer",
      "tokenizer: a SentencePiece .model, a Hugging Face tokenizer.json or a .tiktoken file (default: "
      "data.tokenizer_path of the checkpoint's config)",
      cxxopts::value<std::string>())("output", "the .npz file to write", cxxopts::value<std::string>());
  add_plugin_dir_option(options);
  add_allow_unsafe_plugin_dir_option(options);
  options.add_options()("h,help", "this help");
  options.parse_positional({"output"});
  return options;
}

int cmd_extract(int argc, char** argv) {
  cxxopts::Options options = extract_options();
  const ParsedOptions parsed = parse_options(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  if (!args.count("checkpoint")) return usage_error(options, "missing --checkpoint DIR");
  if (args.count("input") + args.count("tokens") + args.count("input-file") + args.count("data") != 1) {
    return usage_error(options, "give exactly one of --input TEXT, --tokens IDS, --input-file FILE and --data DIR");
  }
  if (!args.count("output")) return usage_error(options, "missing OUT.npz (the file to write)");
  if (!args.count("data") && args.count("batch-size") + args.count("max-batches") + args.count("shard-size") > 0) {
    return usage_error(options, "--batch-size, --max-batches and --shard-size shape a --data run: give --data DIR");
  }
  if (args.count("modules") && (args.count("what") || args.count("layers"))) {
    return usage_error(options, "--modules names the arrays itself: give it without --what and --layers");
  }
  const std::filesystem::path out = args["output"].as<std::string>();

  const auto session = generate::open_checkpoint_session(kExtractCommand, args["checkpoint"].as<std::string>(),
                                                         plugin_dirs_given(args), unsafe_plugins_allowed(args), {});
  if (!session) return kExitUsage;
  const config::JobConfig& job = session->checkpoint.job;
  sdk::Model& model = *session->checkpoint.model;
  ExtractSelection selection;
  at::Tensor tokens;
  std::unique_ptr<sdk::Dataset> data;
  int64_t batch_size = 0, max_batches = 0, shard_size = 0;
  try {
    const std::string model_type = job.view("model").get_string("model_type");
    const auto& patterns =
        session->host->registry.get(sdk::kind::model, model_type, "[model] model_type").meta.hook_points;
    const auto n_layers = static_cast<int64_t>(model.blocks().size());
    if (args.count("modules")) {
      selection = extract_select_modules(patterns, n_layers,
                                         extract_split_list("--modules", args["modules"].as<std::string>()));
    } else {
      selection.points = extract_select_points(patterns, model_type,
                                               extract_split_list("--what", args["what"].as<std::string>()),
                                               extract_select_layers(args["layers"].as<std::string>(), n_layers));
      selection.names = selection.sources = selection.points;
    }
    if (args.count("data")) {
      batch_size = extract_positive(args, "batch-size");
      shard_size = extract_positive(args, "shard-size");
      max_batches = args["max-batches"].as<int64_t>();
      if (max_batches < 0) throw sdk::Error(fmt::format("--max-batches {}: give 0 (all) or more", max_batches));
      data = plugins::Components(session->host->registry, job)
                 .dataset(args["data"].as<std::string>(), job.eval.file_pattern, job.view("model").get_int("vocab_size"));
    }
  } catch (const std::exception& e) {
    std::cerr << kExtractCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }
  if (data) {
    try {
      const auto [samples, shards] = write_extract_shards(model, *data, job.view("model").get_int("vocab_size"),
                                                          selection, batch_size, max_batches, shard_size, out);
      std::cout << fmt::format("{}: {} samples in {} shards, {} points: {}\n", out.string(), samples, shards,
                               selection.names.size(), fmt::join(selection.names, ", "));
    } catch (const std::exception& e) {
      std::cerr << kExtractCommand << ": " << e.what() << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }
  try {
    const std::vector<int64_t> ids = extract_read_tokens(args, job);
    extract_check_tokens(ids, job.view("model").get_int("vocab_size"), model.max_seq_len());
    tokens = at::tensor(ids, at::kLong).unsqueeze(0);
  } catch (const std::exception& e) {
    std::cerr << kExtractCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }
  std::vector<std::pair<std::string, at::Tensor>> arrays;
  try {
    arrays = extract_batch(model, tokens, selection);
  } catch (const std::exception& e) {
    std::cerr << kExtractCommand << ": the forward failed: " << e.what() << "\n";
    return kExitFailure;
  }
  try {
    write_extract_npz(out, tokens, arrays);
  } catch (const std::exception& e) {
    std::cerr << kExtractCommand << ": " << e.what() << "\n";
    return kExitFailure;
  }
  std::cout << fmt::format("{}: {} tokens, {} points: {}\n", out.string(), tokens.size(1), selection.names.size(),
                           fmt::join(selection.names, ", "));
  return kExitOk;
}

}  // namespace kforge::cli
