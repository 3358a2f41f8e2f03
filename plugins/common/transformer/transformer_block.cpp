// TransformerBlock: attention_norm, attention, mlp_norm, mlp (KempnerForge's order and names).
#include "transformer_block.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <string>

namespace kforge::builtin::models {
namespace {

/// Hands the MoE layer's last routing of a batch of `batch` sequences to `capture`: each token's experts (int64) and
/// gate weights [batch, seq, top_k], in the router's order, and each sequence's (token, slot) assignments per expert
/// (int64 [batch, num_experts]; over-capacity ones included, as in KempnerForge's expert_counts).
void tap_routing(const BlockCapture& capture, const MoE& moe, int64_t batch) {
  const sdk::RouterOutput& routing = moe.last_routing();
  const int64_t top_k = routing.indices.size(-1);
  capture.take(BlockPoint::router_choices, routing.indices.reshape({batch, -1, top_k}));
  capture.take(BlockPoint::router_weights, routing.weights.reshape({batch, -1, top_k}));
  if (capture.wants(BlockPoint::router_expert_counts)) {
    capture.take(BlockPoint::router_expert_counts,
                 at::one_hot(routing.indices.reshape({batch, -1}), moe.num_experts()).sum(1));
  }
}

}  // namespace

TransformerBlock::TransformerBlock(const ModelConfig& c, int64_t layer, const sdk::ComponentSource* components) {
  attention_norm_ = register_module("attention_norm", make_norm(c.norm_type, c.dim, c.norm_eps, c.fused_kernels));
  attention_ = register_module("attention", std::make_shared<Attention>(c));
  mlp_norm_ = register_module("mlp_norm", make_norm(c.norm_type, c.dim, c.norm_eps, c.fused_kernels));
  if (!c.is_moe_layer(layer)) {
    mlp_ = register_module("mlp", std::make_shared<MLP>(c.dim, c.computed_ffn_hidden_dim(), c.activation,
                                                        dense_linear_backend(c.linear_backend, c.float8),
                                                        c.fused_kernels));
    return;
  }
  if (components == nullptr) {
    throw sdk::Error("transformer: layer " + std::to_string(layer) + " is an MoE layer ([model] num_experts = " +
                     std::to_string(c.num_experts) + ") but no component source was given to build its router");
  }
  auto router = components->make_router(c.moe_router, sdk::RouterSpec{c.dim, c.num_experts, c.moe_top_k});
  moe_ = register_module("mlp", std::make_shared<MoE>(c, std::move(router)));
}

std::vector<sdk::TensorShard> TransformerBlock::split(const TensorSplit& split) {
  if (split.sequence_parallel) {
    attention_norm_->sum_gradients_over(*split.tp);
    mlp_norm_->sum_gradients_over(*split.tp);
  }
  std::vector<sdk::TensorShard> out;
  for (auto [module, shards] : {std::pair{"attention.", attention_->split(split)},
                                std::pair{"mlp.", mlp_ ? mlp_->split(split) : std::vector<sdk::TensorShard>{}}}) {
    for (sdk::TensorShard& shard : shards) {
      shard.name = module + shard.name;
      out.push_back(std::move(shard));
    }
  }
  return out;
}

at::Tensor TransformerBlock::forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, KVCache* cache,
                                     size_t layer, std::shared_ptr<const BlockCapture> capture,
                                     const at::Tensor& doc_starts, const AttentionSeam& attention_seam) {
  const sdk::Model::BlockFn attend = [attention = attention_, cos, sin, cache, layer, capture,
                                      doc_starts](const at::Tensor& in) {
    return attention->forward(in, cos, sin, cache, layer, capture.get(), doc_starts);
  };
  const BlockCapture* c = capture.get();
  const at::Tensor normed_x = tap(c, BlockPoint::attention_norm, attention_norm_->forward(x));
  const at::Tensor h =
      x + tap(c, BlockPoint::attn_out, attention_seam ? attention_seam(normed_x, attend) : attend(normed_x));
  const at::Tensor normed = tap(c, BlockPoint::mlp_norm, mlp_norm_->forward(h));
  const at::Tensor mlp_out =
      tap(c, BlockPoint::mlp_out, moe_ ? moe_->forward(normed, /*decoding=*/cache != nullptr) : mlp_->forward(normed));
  if (moe_ && c && c->wants_routing()) tap_routing(*c, *moe_, normed.size(0));
  return tap(c, BlockPoint::residual, h + mlp_out);
}

}  // namespace kforge::builtin::models
