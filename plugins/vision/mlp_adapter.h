// MlpAdapter: `mlp_2layer`, LLaVA's connector: proj2(act(proj1(x))), both biased, token count kept.
#pragma once

#include <kforge/sdk/adapter.h>
#include <torch/nn/modules/linear.h>

#include "activation.h"

namespace kforge::vision {

/// Parameters proj1 (hidden, in_dim) + bias, proj2 (out_dim, hidden) + bias (KempnerForge's names);
/// hidden_dim 0 means out_dim. activation: adapter_activation's names (default gelu, exact).
class MlpAdapter : public sdk::Adapter {
 public:
  MlpAdapter(int64_t in_dim, int64_t out_dim, int64_t hidden_dim = 0, const std::string& activation = "gelu");
  at::Tensor forward(const at::Tensor& x) override;

 private:
  Activation act_;
  torch::nn::Linear proj1_{nullptr}, proj2_{nullptr};
};

}  // namespace kforge::vision
