// kforge.register_scheduler: a Python callable as a scheduler component, which the host builds by name as it builds a
// plugin's (the module registers it as the one component of a plugin file of its own).
#include <fmt/format.h>

#include <cstdio>
#include <list>
#include <memory>

#include "bindings.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/kinds.h"
#include "kforge/sdk/registrar.h"
#include "kforge/sdk/scheduler.h"
#include "plugin_host.h"
#include "plugins/plugin_set.h"
#include "python_error.h"

namespace kforge::python {

namespace py = pybind11;

namespace {

/// A Python object the host may copy without the GIL (the trainer builds components with it released); the last
/// reference goes under the GIL.
using SharedObject = std::shared_ptr<py::object>;

SharedObject share(py::object object) {
  return SharedObject(new py::object(std::move(object)), [](py::object* p) {
    const py::gil_scoped_acquire gil;
    delete p;
  });
}

class PythonScheduler final : public sdk::Scheduler {
 public:
  PythonScheduler(SharedObject schedule, std::string name) : schedule_(std::move(schedule)), name_(std::move(name)) {}

  double factor(int64_t step) const override {
    const py::gil_scoped_acquire gil;
    try {
      return (*schedule_)(step).cast<double>();
    } catch (py::error_already_set& e) {
      throw python_error(fmt::format("Python scheduler '{}' at step {}", name_, step), e);
    } catch (const py::cast_error&) {
      throw sdk::Error(fmt::format("Python scheduler '{}' at step {}: returned {}, not a number", name_, step,
                                   py::repr((*schedule_)(step)).cast<std::string>()));
    }
  }

 private:
  SharedObject schedule_;
  std::string name_;
};

/// The scheduler being registered, for register_pending (the plugin entry's register_all).
struct Pending {
  std::string name;
  SharedObject factory;
};
const Pending* pending = nullptr;

int register_pending(void* registrar, char* err, size_t err_len) {
  try {
    const Pending p = *pending;
    static_cast<sdk::Registrar*>(registrar)->add_scheduler(
        p.name, [p](const sdk::BuildContext&, int64_t max_steps) -> std::unique_ptr<sdk::Scheduler> {
          const py::gil_scoped_acquire gil;
          try {
            return std::make_unique<PythonScheduler>(share((*p.factory)(max_steps)), p.name);
          } catch (py::error_already_set& e) {
            throw python_error(fmt::format("Python scheduler '{}': its factory", p.name), e);
          }
        });
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(err, err_len, "%s", e.what());
    return 1;
  }
}

void register_scheduler(const std::string& name, py::object factory) {
  if (const plugins::Entry* taken = registry().find(sdk::kind::scheduler, name)) {
    throw sdk::Error(
        fmt::format("kforge.register_scheduler: scheduler '{}' is already registered (by {}); choose "
                    "another name",
                    name, taken->plugin->path.string()));
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
  meta.kind = sdk::kind::scheduler;
  meta.name = name;
  meta.version = "0";
  meta.summary = "a Python callable (kforge.register_scheduler)";
  file.components.push_back(meta);
  file.info = &info;
  plugins::PluginSet& set = sets.emplace_back();
  set.files().push_back(std::move(file));
  const Pending registering{name, share(std::move(factory))};
  pending = &registering;
  register_plugins(set);
  pending = nullptr;
  if (!set.files().front().ok) throw sdk::Error(set.files().front().error);
}

}  // namespace

void bind_components(py::module_& m) {
  m.def("_register_scheduler", &register_scheduler, py::arg("name"), py::arg("factory"));
}

}  // namespace kforge::python
