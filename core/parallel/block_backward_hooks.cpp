#include "parallel/block_backward_hooks.h"

#include <torch/csrc/autograd/custom_function.h>

namespace kforge::parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The hooks object outlives every graph built while it is installed (the trainer owns both).
template <bool kAfter>
struct BlockBoundary : torch::autograd::Function<BlockBoundary<kAfter>> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, BlockBackwardHooks* hooks, int64_t block) {
    ctx->saved_data["hooks"] = reinterpret_cast<int64_t>(hooks);
    ctx->saved_data["block"] = block;
    return x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* hooks = reinterpret_cast<BlockBackwardHooks*>(ctx->saved_data["hooks"].toInt());
    const auto block = static_cast<size_t>(ctx->saved_data["block"].toInt());
    if (kAfter) {
      hooks->after_block_backward(block);
    } else {
      hooks->before_block_backward(block);
    }
    return {grads[0], at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor mark_block_input(const at::Tensor& input, BlockBackwardHooks& hooks, size_t block) {
  return BlockBoundary<true>::apply(input, &hooks, static_cast<int64_t>(block));
}

at::Tensor mark_block_output(const at::Tensor& output, BlockBackwardHooks& hooks, size_t block) {
  return BlockBoundary<false>::apply(output, &hooks, static_cast<int64_t>(block));
}

}  // namespace kforge::parallel
