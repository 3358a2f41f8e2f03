#include "cli/plugin_host.h"

namespace kforge::cli {

std::vector<std::filesystem::path> plugin_dirs(const std::vector<std::string>& from_command_line) {
  std::vector<std::filesystem::path> dirs(from_command_line.begin(), from_command_line.end());
  for (const auto& d : plugins::default_plugin_dirs()) dirs.push_back(d);
  return dirs;
}

std::unique_ptr<PluginHost> load_plugins(const std::vector<std::string>& from_command_line) {
  auto host = std::make_unique<PluginHost>();
  host->set = plugins::PluginSet::discover(plugin_dirs(from_command_line));
  host->registry.register_all(host->set);
  return host;
}

}  // namespace kforge::cli
