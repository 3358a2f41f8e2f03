// kforge convert: a checkpoint to a Hugging Face Llama/Mixtral directory (--to hf), and back (--from hf); a
// KempnerForge checkpoint to a kforge one (--from dcp).
#include <fmt/format.h>

#include <cxxopts.hpp>
#include <iostream>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/error_message.h"
#include "cli/exit_codes.h"
#include "config/hub_cache.h"
#include "generate/checkpoint_session.h"
#include "interop/dcp_import.h"
#include "interop/hf_import.h"
#include "interop/hf_model_export.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {
namespace {

constexpr const char* kConvertCommand = "kforge convert";

void convert_progress(const std::string& line) { std::cerr << "[convert] " << line << "\n"; }

// The exit code of a conversion that threw: 2 for what the user can fix in the arguments or files
// given (config, format, names), 1 for a failure while writing.
int convert_failed(const std::exception& e) {
  std::cerr << kConvertCommand << ": " << error_message(e) << "\n";
  return dynamic_cast<const sdk::ConfigError*>(&e) != nullptr ? kExitUsage : kExitFailure;
}

int convert_to_hf(const cxxopts::ParseResult& args, const std::string& checkpoint, const std::string& out,
                  const std::vector<std::string>& overrides) {
  interop::ExportOptions options;
  options.progress = convert_progress;
  try {
    if (args.count("dtype")) options.dtype = args["dtype"].as<std::string>();
    if (args.count("max-shard-size"))
      options.max_shard_bytes = interop::parse_shard_size(args["max-shard-size"].as<std::string>());
  } catch (const sdk::ConfigError& e) {
    std::cerr << kConvertCommand << ": " << e.what() << "\n";
    return kExitUsage;
  }
  convert_progress(fmt::format("loading {}", checkpoint));
  const auto session = generate::open_checkpoint_session(kConvertCommand, checkpoint, plugin_dirs_given(args),
                                                         unsafe_plugins_allowed(args), overrides);
  if (!session) return kExitUsage;
  try {
    interop::export_hf(session->host->registry, session->checkpoint.job, session->checkpoint.snapshot.model, out,
                       options);
  } catch (const std::exception& e) {
    return convert_failed(e);
  }
  std::cout << fmt::format("exported {} (step {}) to {}\n", session->checkpoint.step_dir.string(),
                           session->checkpoint.snapshot.step, out);
  return kExitOk;
}

// The plugins an import builds its model from; nullptr (said on stderr) when they cannot be loaded.
std::unique_ptr<plugins::PluginHost> import_plugins(const cxxopts::ParseResult& args) {
  std::unique_ptr<plugins::PluginHost> host;
  try {
    host = plugins::load_plugins(plugin_dirs_given(args), unsafe_plugins_allowed(args));
  } catch (const std::exception& e) {
    std::cerr << kConvertCommand << ": " << e.what() << "\n";
    return nullptr;
  }
  if (!host->set.all_ok()) {
    std::cerr << host->set.errors() << kConvertCommand
              << ": refusing to start: a plugin file failed its checks (see above). Fix or remove it; "
                 "`kforge list-plugins` shows every file's status.\n";
    return nullptr;
  }
  return host;
}

int convert_from_hf(const cxxopts::ParseResult& args, const std::string& dir, const std::string& out,
                    const std::vector<std::string>& overrides) {
  const std::unique_ptr<plugins::PluginHost> host = import_plugins(args);
  if (!host) return kExitUsage;
  interop::ImportOptions options;
  options.overrides = overrides;
  options.progress = convert_progress;
  std::filesystem::path step_dir;
  try {
    step_dir = interop::import_hf(config::local_or_hub_path(dir, "kforge convert --from hf DIR"), out,
                                  host->registry, options);
  } catch (const std::exception& e) {
    return convert_failed(e);
  }
  std::cout << fmt::format(
      "imported {} to {}\n"
      "sample from it: kforge generate --checkpoint {}\n"
      "train from it:  kforge run CONFIG --checkpoint.load_path={}\n"
      "                (it holds weights only: the optimizer starts fresh)\n",
      dir, step_dir.string(), out, step_dir.string());
  return kExitOk;
}

int convert_from_dcp(const cxxopts::ParseResult& args, const std::string& dir, const std::string& out,
                     const std::vector<std::string>& overrides) {
  const std::unique_ptr<plugins::PluginHost> host = import_plugins(args);
  if (!host) return kExitUsage;
  interop::DcpImportOptions options;
  options.config = args["config"].as<std::string>();
  options.overrides = overrides;
  options.progress = convert_progress;
  interop::DcpImportResult result;
  try {
    result = interop::import_dcp(dir, out, host->registry, options);
  } catch (const std::exception& e) {
    return convert_failed(e);
  }
  std::cout << fmt::format("converted {} to {}\ncarried:\n", dir, result.step_dir.string());
  for (const std::string& line : result.carried) std::cout << "  " << line << "\n";
  std::cout << "not carried:\n";
  for (const std::string& line : result.not_carried) std::cout << "  " << line << "\n";
  if (result.not_carried.empty()) std::cout << "  (nothing)\n";
  std::cout << fmt::format("resume from it: kforge run {} --checkpoint.dir={}\n", options.config.string(), out);
  return kExitOk;
}

}  // namespace

cxxopts::Options convert_options() {
  cxxopts::Options options(
      kConvertCommand,
      "Convert between kforge checkpoints and Hugging Face model directories, and from KempnerForge checkpoints.\n"
      "  --to hf CHECKPOINT OUT   CHECKPOINT (a step_N directory, or a checkpoint.dir: its newest\n"
      "                           checkpoint, of any world size) to OUT: config.json\n"
      "                           (LlamaForCausalLM, or MixtralForCausalLM for MoE),\n"
      "                           generation_config.json, model.safetensors (or shards and\n"
      "                           model.safetensors.index.json above --max-shard-size), and\n"
      "                           tokenizer.model + tokenizer_config.json when the checkpoint's\n"
      "                           config has data.tokenizer_path. Weights in --dtype, default\n"
      "                           checkpoint.export_dtype. A model Llama/Mixtral cannot express\n"
      "                           (qk_norm, layernorm, GELU/ReLU, shared experts, sigmoid router,\n"
      "                           moe_frequency > 1, token dropping) is refused.\n"
      "  --from hf DIR OUT        a Hugging Face Llama/Mixtral directory (config.json and\n"
      "                           safetensors), or a hub id in the local Hugging Face cache, to\n"
      "                           the kforge checkpoint OUT/step_0: weights only,\n"
      "                           for `kforge generate --checkpoint OUT` and `kforge run` with\n"
      "                           checkpoint.load_path=OUT/step_0 (the optimizer starts fresh).\n"
      "  --from dcp DIR OUT --config TOML\n"
      "                           a KempnerForge checkpoint (step_N with .metadata, __R_0.distcp and\n"
      "                           train_state.pt, or its checkpoint.dir) to OUT/step_N: weights, AdamW\n"
      "                           moments and step, scheduler and data position, torch RNG states;\n"
      "                           TOML is the run's KempnerForge config. Prints what could not be\n"
      "                           carried. Resume: kforge run TOML --checkpoint.dir=OUT.\n"
      "--section.key=value overrides apply to the checkpoint's config (export) or to the\n"
      "config written (import).\n"
      "Exit codes: 0 done, 1 failed while writing, 2 bad arguments, checkpoint, config or files.");
  options.custom_help("(--to hf CHECKPOINT OUT | --from hf DIR OUT | --from dcp DIR OUT --config TOML) [options]");
  options.positional_help("");
  options.add_options("positional")("paths", "", cxxopts::value<std::vector<std::string>>());
  options.add_options()("to", "export to this format (hf)", cxxopts::value<std::string>())(
      "from", "import from this format (hf, or dcp: a KempnerForge checkpoint)", cxxopts::value<std::string>())(
      "config", "--from dcp: the KempnerForge config (TOML) the checkpoint's run trained with",
      cxxopts::value<std::string>())(
      "dtype", "exported weights' dtype: float32, bfloat16 or float16 (default: checkpoint.export_dtype)",
      cxxopts::value<std::string>())("max-shard-size",
                                     "largest safetensors file of an export, e.g. 5GB (the default), 500MB, 2GiB",
                                     cxxopts::value<std::string>());
  add_plugin_dir_option(options);
  add_allow_unsafe_plugin_dir_option(options);
  options.add_options()("h,help", "this help");
  options.parse_positional({"paths"});
  return options;
}

int cmd_convert(int argc, char** argv) {
  cxxopts::Options options = convert_options();
  const ParsedOptions parsed = parse_options_and_overrides(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  const bool to = args.count("to") > 0, from = args.count("from") > 0;
  if (to == from) return usage_error(options, "give exactly one of --to hf or --from hf");
  const std::string format = args[to ? "to" : "from"].as<std::string>();
  if (format != "hf" && !(from && format == "dcp")) {
    return usage_error(options, fmt::format("--{} {}: the formats are hf (Hugging Face){}", to ? "to" : "from", format,
                                            from ? " and dcp (a KempnerForge checkpoint)" : ""));
  }
  const bool dcp = format == "dcp";
  if (dcp != (args.count("config") > 0)) {
    return usage_error(options, dcp ? "--from dcp needs --config TOML: the KempnerForge config of the run"
                                    : "--config applies to --from dcp only");
  }
  const auto paths = args.count("paths") ? args["paths"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (paths.size() != 2) {
    return usage_error(options,
                       fmt::format("expected two paths ({} OUT), got {}", to ? "CHECKPOINT" : "DIR", paths.size()));
  }
  if (from && (args.count("dtype") || args.count("max-shard-size"))) {
    return usage_error(options, "--dtype and --max-shard-size apply to --to hf only (an import keeps float32 weights)");
  }
  if (dcp) return convert_from_dcp(args, paths[0], paths[1], parsed.overrides);
  return to ? convert_to_hf(args, paths[0], paths[1], parsed.overrides)
            : convert_from_hf(args, paths[0], paths[1], parsed.overrides);
}

}  // namespace kforge::cli
