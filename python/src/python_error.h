// A Python exception raised in code kforge called, as the sdk::Error the host reports (with its traceback).
#pragma once

#include <string>

#include "bindings.h"
#include "kforge/sdk/error.h"

namespace kforge::python {

/// sdk::Error "<where> raised:\n<the Python traceback>" for `error` (call with the GIL held).
sdk::Error python_error(const std::string& where, pybind11::error_already_set& error);

}  // namespace kforge::python
