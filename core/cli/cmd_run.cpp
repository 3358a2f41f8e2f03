// kforge run: load plugins, resolve and validate the config, then train (or print it: --dry-run).
#include <fmt/format.h>

#include <cxxopts.hpp>
#include <iostream>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/run_training.h"
#include "config/hub_cache.h"
#include "config/job_config.h"
#include "dist/rank_info.h"
#include "kforge/sdk/error.h"
#include "plugins/catalog.h"
#include "plugins/host.h"
#include "resilience/shutdown.h"
#include "train/preflight.h"

namespace kforge::cli {
namespace {

// A shutdown signal that arrived before training started: nothing was trained, so nothing is saved.
int stopped_before_training() {
  std::cerr << fmt::format(
      "kforge run: shutdown requested (signal {}) before training started: nothing to save; exiting with code {} "
      "(rerun the same command to start or resume)\n",
      resilience::shutdown_signal(), kExitPreempted);
  return kExitPreempted;
}

}  // namespace

cxxopts::Options run_options() {
  cxxopts::Options options("kforge run",
                           "Train with a TOML config. Resumes from the newest complete checkpoint in\n"
                           "checkpoint.dir (or checkpoint.load_path). Any config key can be overridden as\n"
                           "--section.key=value or --section.key value (after CONFIG.toml), e.g.\n"
                           "--train.max_steps=100 --optimizer.lr 1e-3; a bare --section.key means true.\n"
                           "Exit codes: 0 done, 1 failed, 2 bad config/data/plugins (nothing ran),\n"
                           "75 stopped by SIGTERM/SIGUSR1/SIGINT after saving a checkpoint, or before training\n"
                           "started with nothing to save (rerun to resume).");
  options.positional_help("CONFIG.toml");
  options.add_options()("config", "TOML config file", cxxopts::value<std::string>());
  add_plugin_dir_option(options);
  add_allow_unsafe_plugin_dir_option(options);
  options.add_options()("dry-run",
                        "make every check the run makes before it builds the model (the data is opened), print the "
                        "resolved config, and exit")(
      "world-size",
      "with --dry-run: check the config as a job of this many ranks would (a cluster preset's mesh), instead of this "
      "process's world (1 outside `kforge launch`)",
      cxxopts::value<int>())("h,help", "this help");
  options.parse_positional({"config"});
  return options;
}

int cmd_run(int argc, char** argv) {
  // From the first moment to the process's end: a SIGTERM while plugins, the config or the checkpoint
  // load is a request to stop, not death by the default action (the training loop's own handlers keep
  // it pending), and one during the teardown after a failure (the launcher stops the other ranks when
  // one fails) leaves the exit code 1 instead of making it 143. Never destroyed, so never reset.
  [[maybe_unused]] static const auto* const shutdown_handlers = new resilience::ShutdownHandlers(0);
  cxxopts::Options options = run_options();
  // --section.key=value overrides are not options of this command: they are set aside first.
  const ParsedOptions parsed = parse_options_and_overrides(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  if (!args.count("config")) return usage_error(options, "missing CONFIG.toml");
  if (args.count("world-size") && !args.count("dry-run")) {
    return usage_error(options, "--world-size only applies to --dry-run (a run's world is the one it is launched in)");
  }
  if (args.count("world-size") && args["world-size"].as<int>() < 1) {
    return usage_error(options, fmt::format("--world-size {}: must be >= 1", args["world-size"].as<int>()));
  }
  std::unique_ptr<plugins::PluginHost> host;
  try {
    host = plugins::load_plugins(plugin_dirs_given(args), unsafe_plugins_allowed(args));
  } catch (const std::exception& e) {
    std::cerr << "kforge run: " << e.what() << "\n";
    return kExitUsage;
  }
  if (!host->set.all_ok()) {
    std::cerr << host->set.errors()
              << "kforge run: refusing to start: a plugin file failed its checks (see above). Fix or remove it; "
                 "`kforge list-plugins` shows every file's status.\n";
    return kExitUsage;
  }
  config::JobConfig job;
  try {
    job = config::load_job_config(args["config"].as<std::string>(), parsed.overrides,
                                  plugins::make_catalog(host->registry));
    config::resolve_hub_ids(job);
    if (args.count("dry-run")) {
      // The run's own checks before it builds the model: the dry run refuses what the run refuses.
      const int world_size =
          args.count("world-size") ? args["world-size"].as<int>() : dist::rank_info_from_env().world_size;
      const train::Preflight checked = train::preflight(job, plugins::Components(host->registry, job), world_size);
      for (const std::string& warning : checked.warnings) std::cerr << "kforge run: warning: " << warning << "\n";
    }
  } catch (const sdk::Error& e) {
    std::cerr << "kforge run: " << e.what() << "\n";
    return kExitUsage;
  }
  if (resilience::shutdown_requested()) return stopped_before_training();
  if (args.count("dry-run")) {
    std::cout << fmt::format("# kforge run --dry-run: {} resolved ({} plugin files)\n", job.file.string(),
                             host->set.files().size())
              << job.to_toml();
    return kExitOk;
  }
  return run_from_cli(job, host->registry);
}

}  // namespace kforge::cli
