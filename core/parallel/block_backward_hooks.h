// Autograd identities placed around a model block (through the SDK's block runner) whose backward
// calls the host back: just before the block's own backward, and once it is done.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>

namespace kforge::parallel {

class BlockBackwardHooks {
 public:
  virtual ~BlockBackwardHooks() = default;
  /// Before any backward node of `block` runs (its parameters must be usable again).
  virtual void before_block_backward(size_t block) { (void)block; }
  /// After the block's backward, its parameters' gradients accumulated (the engine runs a
  /// gradient accumulation as soon as it is ready, ahead of every other node).
  virtual void after_block_backward(size_t block) { (void)block; }
};

/// Identity on a block's input; its backward calls hooks.after_block_backward(block). Runs only
/// when `input` requires a gradient (a block fed by a frozen embedding gets no call).
at::Tensor mark_block_input(const at::Tensor& input, BlockBackwardHooks& hooks, size_t block);
/// Identity on a block's output; its backward calls hooks.before_block_backward(block).
at::Tensor mark_block_output(const at::Tensor& output, BlockBackwardHooks& hooks, size_t block);

}  // namespace kforge::parallel
