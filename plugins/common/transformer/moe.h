// MoE: the mixture-of-experts feed-forward layer (KempnerForge MoEMLP) that replaces the MLP of
// every moe_frequency-th block: router, optional shared expert, routed experts.
#pragma once

#include <kforge/sdk/expert_parallel.h>
#include <kforge/sdk/router.h>
#include <torch/nn/module.h>

#include <memory>

#include "experts.h"
#include "mlp.h"
#include "model_config.h"

namespace kforge::builtin::models {

/// Parameters (KempnerForge names, in its order): router.* (e.g. router.gate.weight,
/// router.expert_bias), [shared_expert.{gate,up,down}_proj.weight], then
/// experts.{j}.{gate,up,down}_proj.weight or, packed, up_w / down_w / gate_w (E, in, out).
class MoE : public torch::nn::Module {
 public:
  /// Experts of width config.computed_expert_ffn_hidden_dim(); `router` is registered as "router".
  MoE(const ModelConfig& config, std::shared_ptr<sdk::Router> router);

  /// x [B, S, dim] -> [B, S, dim]. Routes every token, drops over-capacity assignments
  /// (moe_capacity_factor > 0, not when `decoding`), sums the weighted experts, adds the shared expert.
  at::Tensor forward(const at::Tensor& x, bool decoding = false);
  /// Sum over k of weights[t, k] * expert_{indices[t, k]}(x_flat[t]) for x_flat [T, dim]: the (t, k)
  /// pairs are sorted by expert, each expert runs once on its gathered rows, results are index_add-ed
  /// back. With moe_gradient_scale in training, expert e's outputs are scaled by (T K / E) / count_e.
  at::Tensor combine(const at::Tensor& x_flat, const at::Tensor& weights, const at::Tensor& indices);

  /// Expert parallelism: keeps experts [r*E/ep, (r+1)*E/ep) of rank r of `group` (call it after init, so they are
  /// the one-rank model's) and from then on routes this rank's share of the tokens to their experts' ranks.
  /// `group` must outlive the layer.
  void shard_experts(const sdk::ExpertParallel& group);
  /// The experts this rank holds (after shard_experts), named under `prefix` (the layer's path and a dot).
  std::vector<sdk::ExpertShard> expert_shards(const std::string& prefix) const { return experts_->shards(prefix); }

  sdk::Router& router() { return *router_; }
  int64_t num_experts() const { return num_experts_; }
  const Experts& experts() const { return *experts_; }
  /// The router's output of the last forward (aux_loss, z_loss, expert_counts).
  const sdk::RouterOutput& last_routing() const { return last_; }
  /// Of the last forward's (token, slot) assignments, how many capacity dropped (0-d int64; undefined when
  /// moe_capacity_factor is 0 or it decoded).
  const at::Tensor& last_dropped() const { return dropped_; }

 private:
  /// combine() under expert parallelism: the same sum, over this rank's share of x_flat's tokens, its pairs sent to
  /// their experts' ranks and back; every rank gets the whole result.
  at::Tensor combine_parallel(const at::Tensor& x_flat, const at::Tensor& weights, const at::Tensor& indices);
  /// combine()'s moe_gradient_scale row factors for `experts` (global ids, one per row) from all pairs' experts.
  at::Tensor gradient_scale(const at::Tensor& all_experts, const at::Tensor& experts, int64_t tokens,
                            int64_t top_k) const;

  int64_t num_experts_, top_k_;
  const sdk::ExpertParallel* group_ = nullptr;  ///< set by shard_experts
  double capacity_factor_;
  bool gradient_scale_;
  std::shared_ptr<sdk::Router> router_;
  std::shared_ptr<MLP> shared_expert_;
  std::unique_ptr<Experts> experts_;
  sdk::RouterOutput last_;
  at::Tensor dropped_;
};

}  // namespace kforge::builtin::models
