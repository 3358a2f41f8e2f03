// Registration of components backed by Python callables (see python_component.h).
#include "python_component.h"

#include <fmt/format.h>

#include <cstdio>
#include <list>

#include "kforge/sdk/abi.h"
#include "plugin_host.h"
#include "plugins/plugin_set.h"

namespace kforge::python {

namespace py = pybind11;

namespace {

/// What the component being registered adds, for register_pending (the plugin entry's register_all).
const std::function<void(sdk::Registrar&)>* pending = nullptr;

int register_pending(void* registrar, char* err, size_t err_len) {
  try {
    (*pending)(*static_cast<sdk::Registrar*>(registrar));
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(err, err_len, "%s", e.what());
    return 1;
  }
}

}  // namespace

SharedObject share(py::object object) {
  return SharedObject(new py::object(std::move(object)), [](py::object* p) {
    const py::gil_scoped_acquire gil;
    delete p;
  });
}

void register_component(const std::string& api, const std::string& kind, const std::string& name,
                        const std::string& summary, const std::vector<std::string>& core_keys,
                        const std::function<void(sdk::Registrar&)>& add) {
  if (const plugins::Entry* taken = registry().find(kind, name)) {
    throw sdk::Error(fmt::format("{}: {} '{}' is already registered (by {}); choose another name", api, kind, name,
                                 taken->plugin->path.string()));
  }
  static std::list<plugins::PluginSet> sets;  // the registry keeps pointers to their files
  static kforge_plugin_info info{};           // the registry reads register_all only
  info.register_all = &register_pending;
  plugins::PluginFile file;
  file.path = py::module_::import("kforge._kforge").attr("__file__").cast<std::string>();
  file.ok = true;
  file.name = "python";
  file.version = "0";
  file.description = "components registered from Python";
  plugins::ComponentMeta meta;
  meta.kind = kind;
  meta.name = name;
  meta.version = "0";
  meta.summary = summary;
  meta.core_keys = core_keys;
  file.components.push_back(meta);
  file.info = &info;
  plugins::PluginSet& set = sets.emplace_back();
  set.files().push_back(std::move(file));
  pending = &add;
  register_plugins(set);
  pending = nullptr;
  if (!set.files().front().ok) throw sdk::Error(set.files().front().error);
}

}  // namespace kforge::python
