// Tensor-parallel slicing: keeps a rank's slice of a parameter in place and says where it lies in the whole; how a
// split module's activations enter and leave the group.
#pragma once

#include <ATen/core/Tensor.h>
#include <kforge/sdk/tensor_parallel.h>

#include <string>

namespace kforge::builtin::models {

/// How a split module's input enters and its output leaves the tensor-parallel group: activations every rank holds
/// whole (enter / sum), or with sequence parallelism activations split along the sequence, dimension 1 (gather /
/// scatter). No group: the module is whole and both are the identity.
struct TensorSplit {
  const sdk::TensorParallel* tp = nullptr;
  bool sequence_parallel = false;

  at::Tensor in(const at::Tensor& x) const { return !tp ? x : sequence_parallel ? tp->gather(x, 1) : tp->enter(x); }
  at::Tensor out(const at::Tensor& y) const { return !tp ? y : sequence_parallel ? tp->scatter(y, 1) : tp->sum(y); }
};

/// Keeps, in place, rank `tp.rank()`'s equal share of `weight` along dimension `dim` (which `tp.size()` must divide;
/// `what` names the size in the error otherwise): the tensor keeps its identity, so every handle to it sees the slice.
/// Returns the slice's placement under `name`.
sdk::TensorShard keep_slice(const at::Tensor& weight, const std::string& name, int64_t dim,
                            const sdk::TensorParallel& tp, const std::string& what);

}  // namespace kforge::builtin::models
