// PythonMetricBackend (see python_metric_backend.h): each call under the GIL, Python exceptions as the host's.
#include "python_metric_backend.h"

#include <fmt/format.h>

#include <utility>

#include "python_error.h"

namespace kforge::python {

namespace py = pybind11;

PythonMetricBackend::PythonMetricBackend(py::object backend) : backend_(std::move(backend)) {}

// The trainer drops its backends without the GIL.
PythonMetricBackend::~PythonMetricBackend() {
  const py::gil_scoped_acquire gil;
  backend_ = py::object();
}

template <typename... Args>
void PythonMetricBackend::call(const char* method, Args&&... args) {
  const py::gil_scoped_acquire gil;
  if (!py::hasattr(backend_, method)) return;
  try {
    backend_.attr(method)(std::forward<Args>(args)...);
  } catch (py::error_already_set& e) {
    const std::string name = py::str(py::type::of(backend_).attr("__qualname__")).cast<std::string>();
    throw python_error(fmt::format("Python metric backend {}.{}", name, method), e);
  }
}

void PythonMetricBackend::log(int64_t step, const sdk::MetricList& metrics) {
  const py::gil_scoped_acquire gil;
  py::dict values;
  for (const auto& [name, value] : metrics) values[py::str(name)] = value;
  call("log", step, values);
}

void PythonMetricBackend::flush() { call("flush"); }

void PythonMetricBackend::end(sdk::RunEnd how) {
  call("end", how == sdk::RunEnd::finished ? "finished" : how == sdk::RunEnd::killed ? "killed" : "failed");
}

}  // namespace kforge::python
