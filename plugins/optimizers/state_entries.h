// Checked lookups into an optimizer StateDict, shared by the optimizers of this plugin.
#pragma once

#include <string>

#include "kforge/sdk/optimizer.h"

namespace kforge::builtin::optimizers {

/// The entry `key`; throws sdk::Error naming the key when it is missing or its shape is not `like`'s.
const at::Tensor& require_entry(const sdk::StateDict& state, const std::string& key, const at::Tensor& like);

/// The 0-d step counter stored under `key` (any numeric dtype), as an integer.
int64_t require_step(const sdk::StateDict& state, const std::string& key);

}  // namespace kforge::builtin::optimizers
