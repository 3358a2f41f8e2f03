// Experts: the routed expert MLPs of one MoE layer, per expert (experts.{j}.{gate,up,down}_proj) or
// packed as (E, in, out) tensors up_w, down_w, gate_w (KempnerForge moe_packed_experts).
#pragma once

#include <kforge/sdk/expert_parallel.h>
#include <torch/nn/module.h>

#include <memory>
#include <vector>

#include "mlp.h"

namespace kforge::builtin::models {

/// Not a module itself: it registers its parameters on `owner` (packed tensors sit directly on the
/// MoE layer, as in KempnerForge), so `owner` must outlive it.
class Experts {
 public:
  Experts(torch::nn::Module& owner, int64_t num_experts, int64_t dim, int64_t hidden_dim, const std::string& activation,
          bool packed, LinearBackend backend, bool fused);

  /// Keeps experts [first, first + count) only (expert parallelism): per-expert modules keep their global ids in
  /// their names, packed tensors their rows. Expert indices are then local: 0 is expert `first`.
  void keep(int64_t first, int64_t count);
  /// The parameters keep() left, under `prefix` (the owner's path and a dot), placed in the whole layer's experts.
  std::vector<sdk::ExpertShard> shards(const std::string& prefix) const;

  /// Expert e's weights in (in, out) layout (views into the parameters).
  FfnWeights weights(int64_t e) const;
  /// Expert e applied to x [n, dim].
  at::Tensor forward(int64_t e, const at::Tensor& x) const {
    return ffn_forward(x, weights(e), act_, fused_, backend_);
  }
  /// Rows of x_sorted [sum(counts), dim] grouped by expert (counts[e] rows for expert e, in expert
  /// order) -> each group through its expert, one matmul chain per non-empty expert, same order.
  at::Tensor forward_grouped(const at::Tensor& x_sorted, const std::vector<int64_t>& counts) const;

 private:
  int64_t num_experts_;                  ///< held here (all of them, or the count keep() left)
  int64_t total_experts_;                ///< in the whole layer
  int64_t first_ = 0;                    ///< the global id of expert 0 here
  torch::nn::Module* holder_ = nullptr;  ///< "experts", the per-expert modules' parent
  MlpActivation act_;
  bool fused_;                              ///< [model] fused_kernels
  LinearBackend backend_;                   ///< [model] linear_backend
  std::vector<std::shared_ptr<MLP>> mlps_;  // per-expert storage
  at::Tensor up_w_, down_w_, gate_w_;       // packed storage (gate_w only for SwiGLU)
};

}  // namespace kforge::builtin::models
