// PythonMetricBackend: a Python object's log, flush and end methods as a metric backend of kforge.train.
#pragma once

#include "bindings.h"
#include "kforge/sdk/metric_backend.h"

namespace kforge::python {

class PythonMetricBackend final : public sdk::MetricBackend {
 public:
  /// `backend` has log(step, metrics) and optionally flush() and end(how) ("finished", "failed" or "killed").
  explicit PythonMetricBackend(pybind11::object backend);
  ~PythonMetricBackend() override;

  void log(int64_t step, const sdk::MetricList& metrics) override;
  void flush() override;
  void end(sdk::RunEnd how) override;

 private:
  /// Calls backend.<method>(args...) under the GIL when it exists; a Python exception becomes sdk::Error carrying
  /// its traceback.
  template <typename... Args>
  void call(const char* method, Args&&... args);

  pybind11::object backend_;
};

}  // namespace kforge::python
