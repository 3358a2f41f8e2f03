#include "plugins/host.h"

#include "listing/plugin_search.h"

namespace kforge::plugins {

std::vector<std::filesystem::path> plugin_dirs(const std::vector<std::string>& from_command_line) {
  return listing::plugin_search_dirs(from_command_line, listing::current_executable());
}

std::unique_ptr<PluginHost> load_plugins(const std::vector<std::string>& from_command_line, bool allow_unsafe) {
  return load_plugins_from(plugin_dirs(from_command_line), listing::shipped_plugin_dir(listing::current_executable()),
                           allow_unsafe);
}

std::unique_ptr<PluginHost> load_plugins_from(const std::vector<std::filesystem::path>& dirs,
                                              const std::filesystem::path& builtin_dir, bool allow_unsafe) {
  auto host = std::make_unique<PluginHost>();
  host->set = plugins::PluginSet::discover(dirs, {builtin_dir, allow_unsafe});
  host->registry.register_all(host->set);
  return host;
}

}  // namespace kforge::plugins
