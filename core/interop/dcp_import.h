// Import: a KempnerForge checkpoint (torch.distributed.checkpoint shards and train_state.pt) as a kforge checkpoint.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "plugins/registry.h"

namespace kforge::interop {

struct DcpImportOptions {
  std::filesystem::path config;        ///< the TOML the KempnerForge run trained with
  std::vector<std::string> overrides;  ///< extra --section.key=value for it
  std::function<void(const std::string&)> progress = [](const std::string&) {};
};

struct DcpImportResult {
  std::filesystem::path step_dir;        ///< out/step_N
  std::vector<std::string> carried;      ///< what the checkpoint holds, one line each
  std::vector<std::string> not_carried;  ///< what it could not take, and why
};

/// Reads the KempnerForge step directory `dir` (or the one `dir/latest` points at): `.metadata` and its
/// `__R_0.distcp` files (or those of its pp* stage directories) and train_state.pt, all through the restricted pickle
/// reader. Builds the model `options.config` describes and takes every parameter from "model.<fqn>" (whole again from
/// its chunks, cast to the parameter's dtype); AdamW's exp_avg, exp_avg_sq and step from "optimizer.state.<fqn>.*"
/// when the config's optimizer is adamw; step, tokens_seen, the data position (dataloader epoch and batches, as one
/// global position over the sampler's replicas), the scheduler position and the torch generator states from
/// train_state.pt. Writes out/step_N through the checkpoint layer. `out` must be empty or absent. Throws
/// sdk::ConfigError for a config that does not fit the weights (naming the tensor), sdk::Error for unreadable files.
DcpImportResult import_dcp(const std::filesystem::path& dir, const std::filesystem::path& out,
                           const plugins::Registry& registry, const DcpImportOptions& options);

}  // namespace kforge::interop
