// Tensor-parallel slicing: keeps a rank's slice of a parameter in place and says where it lies in the whole.
#pragma once

#include <ATen/core/Tensor.h>
#include <kforge/sdk/tensor_parallel.h>

#include <string>

namespace kforge::builtin::models {

/// Keeps, in place, rank `tp.rank()`'s equal share of `weight` along dimension `dim` (which `tp.size()` must divide;
/// `what` names the size in the error otherwise): the tensor keeps its identity, so every handle to it sees the slice.
/// Returns the slice's placement under `name`.
sdk::TensorShard keep_slice(const at::Tensor& weight, const std::string& name, int64_t dim,
                            const sdk::TensorParallel& tp, const std::string& what);

}  // namespace kforge::builtin::models
