// Model loading: copies a checkpoint's model tensors into a live model, refusing any mismatch.
#pragma once

#include <torch/nn/module.h>

#include "checkpoint/snapshot.h"

namespace kforge::checkpoint {

/// Copies snapshot.model into every parameter and buffer of `model` by fully-qualified name, without
/// gradients. Throws sdk::ConfigError (the run exits 2) naming the tensor when one is missing, has another shape, or is
/// in the checkpoint but not in the model (the [model] config changed since it was written).
void load_model_weights(torch::nn::Module& model, const Snapshot& snapshot);

}  // namespace kforge::checkpoint
