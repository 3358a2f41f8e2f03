// kforge.train's native part: `kforge run`'s trainer in this process, with Python hooks and metric backends.
#include <memory>
#include <vector>

#include "bindings.h"
#include "cli/run_training.h"
#include "job_source.h"
#include "plugin_host.h"
#include "python_hook.h"
#include "python_metric_backend.h"
#include "running_config.h"
#include "value_convert.h"

namespace kforge::python {

namespace py = pybind11;

namespace {

/// Runs the job as `kforge run` does; returns (its exit code, the first exception a hook raised or None).
py::tuple run(py::handle config, const std::vector<std::string>& overrides, const py::list& hooks,
              const py::list& metric_backends) {
  const config::JobConfig job = load_job(config, overrides);
  const plugins::Registry& plugins = registry();
  const py::object config_dict = value_to_python(job.tree);
  std::vector<std::shared_ptr<PythonHook>> python_hooks;
  train::TrainingOptions options;
  for (const py::handle hook : hooks) {
    python_hooks.push_back(std::make_shared<PythonHook>(py::reinterpret_borrow<py::object>(hook), config_dict));
    options.hooks.push_back(python_hooks.back());
  }
  for (const py::handle backend : metric_backends) {
    options.metric_backends.push_back(
        std::make_unique<PythonMetricBackend>(py::reinterpret_borrow<py::object>(backend)));
  }
  int code = 0;
  set_running_config(config_dict);  // for the hooks registered by name ([train] hooks)
  {
    const py::gil_scoped_release released;
    code = cli::run_from_cli(job, plugins, std::move(options));
  }
  set_running_config(py::none());
  py::object error = py::none();
  for (const auto& hook : python_hooks) {
    if (!hook->error().is_none()) {
      error = hook->error();
      break;
    }
  }
  return py::make_tuple(code, error);
}

}  // namespace

void bind_train(py::module_& m) {
  m.def("_train", &run, py::arg("config"), py::arg("overrides"), py::arg("hooks"), py::arg("metric_backends"));
}

}  // namespace kforge::python
