// CheckpointSession: plugin loading and checkpoint loading with the CLI's error reporting.
#include "generate/checkpoint_session.h"

#include <iostream>

namespace kforge::generate {

std::unique_ptr<CheckpointSession> open_checkpoint_session(const std::string& command, const std::string& dir,
                                                           const std::vector<std::string>& plugin_dirs,
                                                           bool allow_unsafe_plugins,
                                                           const std::vector<std::string>& overrides,
                                                           ModelKinds kinds) {
  auto session = std::make_unique<CheckpointSession>();
  try {
    session->host = plugins::load_plugins(plugin_dirs, allow_unsafe_plugins);
  } catch (const std::exception& e) {
    std::cerr << command << ": " << e.what() << "\n";
    return nullptr;
  }
  if (!session->host->set.all_ok()) {
    std::cerr << session->host->set.errors() << command
              << ": refusing to start: a plugin file failed its checks (see above). Fix or remove it; "
                 "`kforge list-plugins` shows every file's status.\n";
    return nullptr;
  }
  try {
    session->checkpoint = load_checkpoint_model(dir, session->host->registry, overrides, kinds);
  } catch (const std::exception& e) {
    std::cerr << command << ": --checkpoint " << dir << ": " << e.what() << "\n";
    return nullptr;
  }
  return session;
}

}  // namespace kforge::generate
