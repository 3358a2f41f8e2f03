// ExpertParallel: the host's expert-parallel group ([distributed] ep > 1), through which a model shards its MoE
// experts over ranks that all see the same batch, and how the model tells the host which parameters it shards.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::sdk {

/// The ranks of one expert-parallel group. They hold the same non-expert parameters and compute the same
/// activations (the same batch); each holds a share of every MoE layer's experts. Every method is a collective:
/// all ranks of the group call it in the same order. The differentiable ones send gradients back in the backward.
class ExpertParallel {
 public:
  virtual ~ExpertParallel() = default;
  /// This rank's index in the group, and the group's size (ep).
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// send[j]: how many rows this rank sends to rank j -> how many rows each rank j sends to this rank.
  virtual std::vector<int64_t> exchange_counts(const std::vector<int64_t>& send) const = 0;
  /// Rows of x [sum(send), ...] go, send[j] of them in order, to rank j; returns the rows received, recv[j] from
  /// rank j in rank order (recv = exchange_counts(send)). Differentiable: gradients return the same way back.
  virtual torch::Tensor all_to_all(const torch::Tensor& x, const std::vector<int64_t>& send,
                                   const std::vector<int64_t>& recv) const = 0;
  /// x [n, ...], the same on every rank -> this rank's share of its rows: rows [n*r/size, n*(r+1)/size).
  /// Differentiable: x's gradient is every rank's share's gradient, so each rank continues its backward with the
  /// whole of it.
  virtual torch::Tensor share(const torch::Tensor& x) const = 0;
  /// The inverse of share(): every rank's rows, in rank order (n rows in all, this rank's share given).
  /// Differentiable: a share's gradient is its rows of the output's gradient (the same on every rank).
  virtual torch::Tensor unite(const torch::Tensor& share, int64_t n) const = 0;
};

/// A parameter of which a rank holds a part under expert parallelism: rows [offset, offset + rows) along dim 0 of the
/// logical tensor `global_shape` (a packed (E, in, out) tensor's local experts), or the whole of a tensor no other
/// rank holds (offset 0, global_shape its own shape; e.g. experts.<global id>.*). Checkpoints hold the logical tensor.
struct ExpertShard {
  std::string name;
  std::vector<int64_t> global_shape;
  int64_t offset = 0;
};

}  // namespace kforge::sdk
