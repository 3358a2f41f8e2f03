// The Python process's plugin host (see plugin_host.h), and kforge.use_plugins, which chooses its directories.
#include "plugin_host.h"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "kforge/sdk/error.h"
#include "plugins/host.h"

namespace kforge::python {
namespace {

struct PluginChoice {
  std::vector<std::filesystem::path> dirs;  ///< searched first, in order
  std::filesystem::path builtin;            ///< kforge's own plugins (kforge/_build_info.py)
  bool allow_unsafe = false;
};

PluginChoice& choice() {
  static PluginChoice chosen;
  return chosen;
}

// Never destroyed: plugin code may run in objects Python frees at interpreter exit.
std::unique_ptr<plugins::PluginHost>* loaded = nullptr;

void use_plugins(const std::vector<std::string>& dirs, const std::string& builtin, bool allow_unsafe) {
  if (loaded != nullptr) {
    throw sdk::Error(
        "kforge.use_plugins: the plugins are already loaded (by an earlier kforge call); call it first, "
        "before any config, training or checkpoint");
  }
  choice() = {{dirs.begin(), dirs.end()}, builtin, allow_unsafe};
}

}  // namespace

const plugins::Registry& registry() {
  if (loaded == nullptr) {
    PluginChoice& chosen = choice();
    std::vector<std::filesystem::path> dirs = chosen.dirs;
    std::error_code ec;
    if (std::filesystem::is_directory(chosen.builtin, ec)) dirs.push_back(chosen.builtin);
    auto host = plugins::load_plugins_from(dirs, chosen.builtin, chosen.allow_unsafe);
    if (!host->set.all_ok()) {
      throw sdk::Error(
          fmt::format("{}kforge: a plugin file failed its checks (see above); fix or remove it", host->set.errors()));
    }
    loaded = new std::unique_ptr<plugins::PluginHost>(std::move(host));
  }
  return (*loaded)->registry;
}

void register_plugins(plugins::PluginSet& set) {
  registry();
  (*loaded)->registry.register_all(set);
}

void bind_plugins(pybind11::module_& m) {
  m.def("_use_plugins", &use_plugins, pybind11::arg("dirs"), pybind11::arg("builtin"),
        pybind11::arg("allow_unsafe") = false);
}

}  // namespace kforge::python
