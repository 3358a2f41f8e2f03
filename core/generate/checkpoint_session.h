// CheckpointSession: what `kforge generate` and `kforge eval` start from: the plugins and a loaded checkpoint.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plugins/host.h"
#include "generate/checkpoint_model.h"

namespace kforge::generate {

struct CheckpointSession {
  std::unique_ptr<plugins::PluginHost> host;  ///< declared first: the model (from a plugin) is destroyed before it
  CheckpointModel checkpoint;
};

/// Loads the plugins (--plugin-dir directories, then the default one; unsafe ones only if allowed, as
/// --allow-unsafe-plugin-dir) and the checkpoint in `dir` (of the model kinds the command takes).
/// On failure prints "<command>: <reason>" to stderr and returns null (the caller exits 2).
std::unique_ptr<CheckpointSession> open_checkpoint_session(const std::string& command, const std::string& dir,
                                                           const std::vector<std::string>& plugin_dirs,
                                                           bool allow_unsafe_plugins,
                                                           const std::vector<std::string>& overrides,
                                                           ModelKinds kinds = ModelKinds::Text);

}  // namespace kforge::generate
