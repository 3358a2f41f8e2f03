// TensorParallel: the host's tensor-parallel group ([distributed] tp > 1), through which a model splits its layers'
// weights (and, with sequence parallelism, its activations between them) over ranks that all see the same batch, and
// how the model tells the host which parameters it splits.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::sdk {

/// The ranks of one tensor-parallel group. They see the same batch and hold the same copy of every parameter the
/// model does not split; each holds a slice of the ones it does (attention heads, MLP hidden units, vocabulary rows).
/// Every method is a collective: all ranks of the group call it in the same order.
class TensorParallel {
 public:
  virtual ~TensorParallel() = default;
  /// This rank's index in the group, and the group's size (tp).
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// x itself; in the backward, x's gradient is the sum of every rank's. Where a tensor every rank holds enters a
  /// computation each rank does on its own slice (the input of column-split projections, a shared weight applied to
  /// this rank's heads), so the gradient every rank continues with is the whole one.
  virtual torch::Tensor enter(const torch::Tensor& x) const = 0;
  /// The sum of every rank's x (the same on every rank; bfloat16 is summed in float32 and rounded once); in the
  /// backward, the output's gradient goes to x unchanged. Where partial results leave the slices (the output of
  /// row-split projections, a vocabulary-split embedding).
  virtual torch::Tensor sum(const torch::Tensor& x) const = 0;
  /// The elementwise maximum of every rank's x, without gradient (e.g. a vocabulary-split softmax's shift).
  virtual torch::Tensor max(const torch::Tensor& x) const = 0;
  /// Every rank's x concatenated along `dim`, in rank order; in the backward, x's gradient is its part of the sum of
  /// every rank's output gradient. Where a sequence-split activation enters per-rank computation (sequence parallelism:
  /// before column-split projections).
  virtual torch::Tensor gather(const torch::Tensor& x, int64_t dim) const = 0;
  /// This rank's equal part along `dim` (which the group's size must divide) of the sum of every rank's x; in the
  /// backward, every rank's part's gradient, concatenated. Where partial results leave onto a sequence-split
  /// activation (sequence parallelism: after row-split projections).
  virtual torch::Tensor scatter(const torch::Tensor& x, int64_t dim) const = 0;
};

/// A parameter of which each rank of the tensor-parallel group holds a slice: the one that starts at `offsets` (one per
/// dimension) in the logical tensor `global_shape`. Checkpoints hold the logical tensor.
struct TensorShard {
  std::string name;
  std::vector<int64_t> global_shape;
  std::vector<int64_t> offsets;
};

}  // namespace kforge::sdk
