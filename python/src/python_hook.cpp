// PythonHook (see python_hook.h): each event under the GIL, Python exceptions turned into the trainer's.
#include "python_hook.h"

#include <fmt/format.h>

#include <utility>

#include "python_error.h"

namespace kforge::python {

namespace py = pybind11;

PythonHook::PythonHook(py::object hook, py::object config)
    : hook_(std::move(hook)), config_(std::move(config)), error_(py::none()) {}

// The trainer may drop its last reference without the GIL.
PythonHook::~PythonHook() {
  const py::gil_scoped_acquire gil;
  hook_ = py::object();
  config_ = py::object();
  error_ = py::object();
}

template <typename... Args>
void PythonHook::call(const char* method, Args&&... args) {
  const py::gil_scoped_acquire gil;
  if (!py::hasattr(hook_, method)) return;
  try {
    hook_.attr(method)(std::forward<Args>(args)...);
  } catch (py::error_already_set& e) {
    if (e.matches(py::module_::import("kforge").attr("StopTraining"))) {
      throw sdk::StopTraining(py::str(e.value()).cast<std::string>());
    }
    const std::string name = py::str(py::type::of(hook_).attr("__qualname__")).cast<std::string>();
    error_ = e.value();
    throw python_error(fmt::format("Python hook {}.{}", name, method), e);
  }
}

void PythonHook::on_train_begin(int64_t /*start_step*/) { call("on_train_begin", config_); }

void PythonHook::on_step_end(const sdk::StepEvent& event) {
  const py::gil_scoped_acquire gil;
  const py::object context = py::module_::import("kforge").attr("StepContext")(event.step, event.loss, event.grad_norm,
                                                                               event.lr, event.tokens_seen);
  call("on_step_end", context);
}

void PythonHook::on_eval_end(int64_t step, const sdk::MetricList& metrics) {
  const py::gil_scoped_acquire gil;
  py::dict values;
  for (const auto& [name, value] : metrics) values[py::str(name)] = value;
  call("on_eval_end", values, step);
}

void PythonHook::on_checkpoint_save(int64_t step, const std::string& path) { call("on_checkpoint_save", step, path); }

void PythonHook::on_train_end(int64_t step, int64_t tokens_seen) { call("on_train_end", step, tokens_seen); }

py::object PythonHook::error() const { return error_; }

}  // namespace kforge::python
