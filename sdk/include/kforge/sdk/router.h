// Router: picks experts for each token of a mixture-of-experts layer.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>

namespace kforge::sdk {

struct RouterSpec {
  int64_t dim = 0;
  int64_t num_experts = 0;
  int64_t top_k = 0;
};

struct RouterOutput {
  at::Tensor weights;        ///< [tokens, top_k] gate weights
  at::Tensor indices;        ///< [tokens, top_k] int64 expert ids
  at::Tensor aux_loss;       ///< 0-d load-balance loss
  at::Tensor z_loss;         ///< 0-d router z-loss
  at::Tensor expert_counts;  ///< [num_experts] tokens per expert (detached)
};

class Router : public torch::nn::Module {
 public:
  /// x: [tokens, dim].
  virtual RouterOutput route(const at::Tensor& x) = 0;
  /// Called every micro-step, for step-dependent schedules.
  virtual void set_step(int64_t /*step*/, int64_t /*max_steps*/) {}
};

}  // namespace kforge::sdk
