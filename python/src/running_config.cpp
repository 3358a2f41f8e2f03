// The running kforge.train call's config (see running_config.h).
#include "running_config.h"

#include <utility>

namespace kforge::python {

namespace {

// Leaked: a Python object must not be released at process exit, after the interpreter.
pybind11::object& slot() {
  static auto* config = new pybind11::object(pybind11::none());
  return *config;
}

}  // namespace

void set_running_config(pybind11::object config) { slot() = std::move(config); }

pybind11::object running_config() { return slot(); }

}  // namespace kforge::python
