// PythonHook: a Python object's on_train_begin, on_step_end, ... methods as a training hook (KempnerForge's
// TrainingHook events).
#pragma once

#include <optional>
#include <string>

#include "bindings.h"
#include "kforge/sdk/hook.h"

namespace kforge::python {

class PythonHook final : public sdk::Hook {
 public:
  /// `hook` has any of the event methods (those it lacks are skipped); `config` is what on_train_begin receives.
  PythonHook(pybind11::object hook, pybind11::object config);
  ~PythonHook() override;

  void on_train_begin(int64_t start_step) override;
  void on_step_end(const sdk::StepEvent& event) override;
  void on_eval_end(int64_t step, const sdk::MetricList& metrics) override;
  void on_checkpoint_save(int64_t step, const std::string& path) override;
  void on_train_end(int64_t step, int64_t tokens_seen) override;

  /// The exception an event method raised (other than kforge.StopTraining), or None.
  pybind11::object error() const;

 private:
  /// Calls hook.<method>(args...) under the GIL when it exists. Its kforge.StopTraining becomes sdk::StopTraining;
  /// any other exception is kept (error()) and becomes sdk::Error carrying its Python traceback.
  template <typename... Args>
  void call(const char* method, Args&&... args);

  pybind11::object hook_, config_, error_;
};

}  // namespace kforge::python
