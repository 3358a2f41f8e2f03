// Router: picks experts for each token of a mixture-of-experts layer.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>

namespace kforge::sdk {

/// What the model tells the router it builds. Router-specific settings (bias schedule, sequence aux
/// weight, ...) come from the router factory's config section ([model]).
struct RouterSpec {
  int64_t dim = 0;
  int64_t num_experts = 0;
  int64_t top_k = 0;
};

struct RouterOutput {
  at::Tensor weights;        ///< [tokens, top_k] gate weights (each row sums to 1)
  at::Tensor indices;        ///< [tokens, top_k] int64 expert ids
  at::Tensor aux_loss;       ///< 0-d load-balance loss, unweighted by [model] moe_aux_loss_weight
  at::Tensor z_loss;         ///< 0-d router z-loss, unweighted by [model] moe_router_z_loss_weight
  at::Tensor expert_counts;  ///< [num_experts] float (token, slot) assignments per expert (detached)
};

class Router : public torch::nn::Module {
 public:
  /// x: [tokens, dim]. A router with running state (e.g. a balancing bias) updates it only when
  /// is_training().
  virtual RouterOutput route(const at::Tensor& x) = 0;
  /// Called before each optimizer step's forwards: `step` steps of `max_steps` are done.
  virtual void set_step(int64_t /*step*/, int64_t /*max_steps*/) {}
};

}  // namespace kforge::sdk
