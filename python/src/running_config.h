// The resolved config of the kforge.train call running in this process, for the Python hooks the host builds by
// name (a registered component exists only in the process that registered it, so only kforge.train runs one).
#pragma once

#include "bindings.h"

namespace kforge::python {

/// Sets the running job's config (nested dicts) for the duration of one kforge.train call; None when it ends.
/// Call with the GIL held.
void set_running_config(pybind11::object config);

/// The running job's config, or None outside kforge.train. Call with the GIL held.
pybind11::object running_config();

}  // namespace kforge::python
