// kforge's C++ errors as Python exceptions: ConfigError (a ValueError) and KforgeError (a RuntimeError).
#include "bindings.h"
#include "kforge/sdk/error.h"

namespace kforge::python {

void bind_errors(pybind11::module_& m) {
  namespace py = pybind11;
  static py::exception<sdk::Error> error(m, "KforgeError", PyExc_RuntimeError);
  static py::exception<sdk::ConfigError> config_error(m, "ConfigError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const sdk::ConfigError& e) {
      config_error(e.what());
    } catch (const sdk::Error& e) {
      error(e.what());
    }
  });
}

}  // namespace kforge::python
