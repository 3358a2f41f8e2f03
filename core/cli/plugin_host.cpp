#include "cli/plugin_host.h"

#include "catalogue/catalogue_cache.h"

namespace kforge::cli {

std::vector<std::filesystem::path> plugin_dirs(const std::vector<std::string>& from_command_line) {
  return catalogue::plugin_search_dirs(from_command_line, catalogue::current_executable());
}

std::unique_ptr<PluginHost> load_plugins(const std::vector<std::string>& from_command_line) {
  auto host = std::make_unique<PluginHost>();
  host->set = plugins::PluginSet::discover(plugin_dirs(from_command_line));
  host->registry.register_all(host->set);
  return host;
}

}  // namespace kforge::cli
