// Components backed by Python callables: the host builds them by name as it builds a plugin's (each is the one
// component of a plugin file of the module's own).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "kforge/sdk/registrar.h"

namespace kforge::python {

/// A Python object the host may copy without the GIL (the trainer builds components with it released); the last
/// reference goes under the GIL.
using SharedObject = std::shared_ptr<pybind11::object>;

SharedObject share(pybind11::object object);

/// Registers the component `kind` `name` that `add` adds to the registrar it receives, described by `summary`,
/// reading `core_keys` of its kind's section. Throws sdk::Error when `name` is taken (naming the file that took it)
/// or the registration fails; `api` names the Python function in the message, e.g. "kforge.register_scheduler".
void register_component(const std::string& api, const std::string& kind, const std::string& name,
                        const std::string& summary, const std::vector<std::string>& core_keys,
                        const std::function<void(sdk::Registrar&)>& add);

}  // namespace kforge::python
