// kforge.register_scheduler, register_optimizer, register_loss and register_hook: Python callables as components,
// which the host builds by name as it builds a plugin's.
#include <fmt/format.h>
#include <torch/csrc/autograd/python_variable.h>

#include <memory>

#include "bindings.h"
#include "kforge/sdk/kinds.h"
#include "kforge/sdk/loss.h"
#include "kforge/sdk/scheduler.h"
#include "python_component.h"
#include "python_error.h"
#include "python_hook.h"
#include "python_optimizer.h"
#include "running_config.h"

namespace kforge::python {

namespace py = pybind11;

namespace {

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

class PythonLoss final : public sdk::Loss {
 public:
  PythonLoss(SharedObject loss, std::string name) : loss_(std::move(loss)), name_(std::move(name)) {}

  at::Tensor compute(const at::Tensor& logits, const at::Tensor& labels) override {
    const py::gil_scoped_acquire gil;
    py::object returned;
    try {
      returned = (*loss_)(logits, labels);
    } catch (py::error_already_set& e) {
      throw python_error(fmt::format("Python loss '{}'", name_), e);
    }
    if (!THPVariable_Check(returned.ptr()) || returned.cast<at::Tensor>().dim() != 0) {
      throw sdk::Error(fmt::format("Python loss '{}': returned {}, not a 0-d torch.Tensor", name_,
                                   py::repr(returned).cast<std::string>()));
    }
    return returned.cast<at::Tensor>();
  }

 private:
  SharedObject loss_;
  std::string name_;
};

void register_scheduler(const std::string& name, py::object factory) {
  register_component(
      "kforge.register_scheduler", sdk::kind::scheduler, name, "a Python callable (kforge.register_scheduler)", {},
      [name, factory = share(std::move(factory))](sdk::Registrar& r) {
        r.add_scheduler(name, [name, factory](const sdk::BuildContext&, int64_t max_steps) {
          const py::gil_scoped_acquire gil;
          try {
            return std::unique_ptr<sdk::Scheduler>(
                std::make_unique<PythonScheduler>(share((*factory)(max_steps)), name));
          } catch (py::error_already_set& e) {
            throw python_error(fmt::format("Python scheduler '{}': its factory", name), e);
          }
        });
      });
}

void register_optimizer(const std::string& name, py::object factory) {
  register_component("kforge.register_optimizer", sdk::kind::optimizer, name,
                     "a Python object (kforge.register_optimizer)", {"lr", "weight_decay", "betas", "eps"},
                     [name, factory = share(std::move(factory))](sdk::Registrar& r) {
                       r.add_optimizer(name, [name, factory](const sdk::BuildContext& ctx,
                                                             std::vector<sdk::NamedParameter> params) {
                         return make_python_optimizer(factory, name, ctx, std::move(params));
                       });
                     });
}

void register_loss(const std::string& name, py::object factory) {
  register_component("kforge.register_loss", sdk::kind::loss, name, "a Python callable (kforge.register_loss)", {},
                     [name, factory = share(std::move(factory))](sdk::Registrar& r) {
                       r.add_loss(name, [name, factory](const sdk::BuildContext&) {
                         const py::gil_scoped_acquire gil;
                         try {
                           return std::unique_ptr<sdk::Loss>(std::make_unique<PythonLoss>(share((*factory)()), name));
                         } catch (py::error_already_set& e) {
                           throw python_error(fmt::format("Python loss '{}': its factory", name), e);
                         }
                       });
                     });
}

void register_hook(const std::string& name, py::object factory) {
  register_component("kforge.register_hook", sdk::kind::hook, name, "a Python object (kforge.register_hook)", {},
                     [name, factory = share(std::move(factory))](sdk::Registrar& r) {
                       r.add_hook(name, [name, factory](const sdk::BuildContext&) {
                         const py::gil_scoped_acquire gil;
                         try {
                           return std::unique_ptr<sdk::Hook>(
                               std::make_unique<PythonHook>((*factory)(), running_config()));
                         } catch (py::error_already_set& e) {
                           throw python_error(fmt::format("Python hook '{}': its factory", name), e);
                         }
                       });
                     });
}

}  // namespace

void bind_components(py::module_& m) {
  m.def("_register_scheduler", &register_scheduler, py::arg("name"), py::arg("factory"));
  m.def("_register_optimizer", &register_optimizer, py::arg("name"), py::arg("factory"));
  m.def("_register_loss", &register_loss, py::arg("name"), py::arg("factory"));
  m.def("_register_hook", &register_hook, py::arg("name"), py::arg("factory"));
}

}  // namespace kforge::python
