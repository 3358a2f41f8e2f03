// ContextParallel: the host's context-parallel group ([distributed] cp > 1), whose ranks each hold two chunks of every
// sequence of the same batch (the load-balanced causal layout) and pass key/value blocks around a ring to attend.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::sdk {

/// The ranks of one context-parallel group. They see the same batch, hold the same copy of every parameter and each
/// computes the positions context_positions() names of every sequence. Every method is a collective: all ranks of
/// the group call it in the same order.
class ContextParallel {
 public:
  virtual ~ContextParallel() = default;
  /// This rank's index in the group, and the group's size (cp).
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// One step around the ring: sends `tensors` to rank (rank() + 1) % size() and returns those rank (rank() - 1) %
  /// size() sent, which have the same shapes and dtypes (every rank passes alike-shaped tensors). No gradient.
  virtual std::vector<torch::Tensor> pass_on(const std::vector<torch::Tensor>& tensors) const = 0;
};

/// The load-balanced causal layout: a sequence of `seq` positions (a multiple of 2 * size) is cut into 2 * size equal
/// chunks, and rank r holds chunks r and 2 * size - 1 - r, in that order, so every rank attends to as many keys.
/// Returns rank `rank`'s positions in the sequence, int64 [seq / size].
inline torch::Tensor context_positions(int rank, int size, int64_t seq) {
  const int64_t chunk = seq / (2 * size);
  return torch::cat({torch::arange(rank * chunk, (rank + 1) * chunk, torch::kLong),
                     torch::arange((2 * size - 1 - rank) * chunk, (2 * size - rank) * chunk, torch::kLong)});
}

}  // namespace kforge::sdk
