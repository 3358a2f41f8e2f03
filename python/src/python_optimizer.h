// An optimizer written in Python (kforge.register_optimizer): the host's sdk::Optimizer over a Python object.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "python_component.h"

namespace kforge::python {

/// The optimizer `name`: the object `factory(params, hyper)` returns, `params` the parameters themselves as
/// torch.Tensors (a dict by name, in the host's order), `hyper` the [optimizer] lr, weight_decay, betas and eps.
std::unique_ptr<sdk::Optimizer> make_python_optimizer(const SharedObject& factory, const std::string& name,
                                                      const sdk::BuildContext& ctx,
                                                      std::vector<sdk::NamedParameter> params);

}  // namespace kforge::python
