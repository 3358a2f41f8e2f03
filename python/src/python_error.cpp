// Python exceptions as sdk::Error with their traceback (see python_error.h).
#include "python_error.h"

#include <fmt/format.h>

namespace kforge::python {

sdk::Error python_error(const std::string& where, pybind11::error_already_set& error) {
  namespace py = pybind11;
  const py::object lines =
      py::module_::import("traceback").attr("format_exception")(error.type(), error.value(), error.trace());
  return sdk::Error(fmt::format("{} raised:\n{}", where, py::str("").attr("join")(lines).cast<std::string>()));
}

}  // namespace kforge::python
