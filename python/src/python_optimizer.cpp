// An optimizer written in Python (see python_optimizer.h): each call takes the GIL and runs with gradient recording
// off, so the object updates the parameters and their .grad in place with plain torch ops.
#include "python_optimizer.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/python_variable.h>

#include <utility>

#include "python_error.h"

namespace kforge::python {

namespace py = pybind11;

namespace {

class PythonOptimizer final : public sdk::Optimizer {
 public:
  PythonOptimizer(SharedObject optimizer, std::string name, double base_lr)
      : optimizer_(std::move(optimizer)), name_(std::move(name)), base_lr_(base_lr), lr_(base_lr) {}

  void step() override {
    call("step", [&](py::object& method) { method(lr_); });
  }

  void set_lr_factor(double factor) override { lr_ = base_lr_ * factor; }

  double lr() const override { return lr_; }

  sdk::StateDict state_dict() const override {
    sdk::StateDict state;
    call("state_dict", [&](py::object& method) {
      const py::object returned = method();
      if (!py::isinstance<py::dict>(returned)) {
        throw sdk::Error(fmt::format("Python optimizer '{}': state_dict() returned {}, not a dict[str, torch.Tensor]",
                                     name_, py::repr(returned).cast<std::string>()));
      }
      for (const auto& [key, value] : returned.cast<py::dict>()) {
        if (!py::isinstance<py::str>(key) || !THPVariable_Check(value.ptr())) {
          throw sdk::Error(fmt::format(
              "Python optimizer '{}': state_dict() holds {}: {}; its entries must be str: torch.Tensor", name_,
              py::repr(key).cast<std::string>(), py::repr(value).cast<std::string>()));
        }
        state.emplace(key.cast<std::string>(), value.cast<at::Tensor>());
      }
    });
    return state;
  }

  void load_state_dict(const sdk::StateDict& state) override {
    call("load_state_dict", [&](py::object& method) {
      py::dict entries;
      for (const auto& [key, tensor] : state) entries[py::str(key)] = py::cast(tensor);
      method(entries);
    });
  }

 private:
  /// Calls `use` with the object's method `method` under the GIL, gradient recording off; a Python exception or a
  /// missing method becomes an sdk::Error naming the optimizer.
  template <typename Use>
  void call(const char* method, Use&& use) const {
    const py::gil_scoped_acquire gil;
    const at::NoGradGuard no_grad;
    try {
      if (!py::hasattr(*optimizer_, method)) {
        throw sdk::Error(fmt::format("Python optimizer '{}': its object {} has no {}() method, which the run needs",
                                     name_, py::repr(py::type::of(*optimizer_)).cast<std::string>(), method));
      }
      py::object bound = optimizer_->attr(method);
      use(bound);
    } catch (py::error_already_set& e) {
      throw python_error(fmt::format("Python optimizer '{}': {}()", name_, method), e);
    }
  }

  SharedObject optimizer_;
  std::string name_;
  double base_lr_;
  double lr_;
};

}  // namespace

std::unique_ptr<sdk::Optimizer> make_python_optimizer(const SharedObject& factory, const std::string& name,
                                                      const sdk::BuildContext& ctx,
                                                      std::vector<sdk::NamedParameter> params) {
  const double lr = ctx.section.get_float("lr");
  const py::gil_scoped_acquire gil;
  try {
    py::dict tensors;
    for (const sdk::NamedParameter& p : params) tensors[py::str(p.name)] = py::cast(p.tensor);
    py::dict hyper;
    hyper["lr"] = lr;
    hyper["weight_decay"] = ctx.section.get_float("weight_decay");
    hyper["betas"] = py::cast(ctx.section.get_float_list("betas"));
    hyper["eps"] = ctx.section.get_float("eps");
    return std::make_unique<PythonOptimizer>(share((*factory)(tensors, hyper)), name, lr);
  } catch (py::error_already_set& e) {
    throw python_error(fmt::format("Python optimizer '{}': its factory", name), e);
  }
}

}  // namespace kforge::python
