// The MoE layer's gradients (router gate, expert_bias, experts, shared expert, inputs) against central
// finite differences in double precision, with the aux and z losses in the objective.
#include <gtest/gtest.h>

#include <torch/csrc/autograd/autograd.h>

#include <functional>

#include "moe_test_util.h"

namespace kforge::test::models {
namespace {

/// Checks d objective / d tensor at a few entries against (f(t + h) - f(t - h)) / 2h.
void expect_gradient_matches_differences(const std::function<at::Tensor()>& objective, at::Tensor tensor,
                                         const std::string& label) {
  SCOPED_TRACE(label);
  const at::Tensor analytic = torch::autograd::grad({objective()}, {tensor})[0].flatten();
  at::Tensor flat = tensor.detach().view(-1);
  const double h = 1e-6;
  for (int64_t i = 0; i < flat.numel(); i += std::max<int64_t>(1, flat.numel() / 7)) {
    at::NoGradGuard no_grad;
    const double old = flat[i].item<double>();
    flat[i].fill_(old + h);
    const double up = objective().item<double>();
    flat[i].fill_(old - h);
    const double down = objective().item<double>();
    flat[i].fill_(old);
    EXPECT_NEAR(analytic[i].item<double>(), (up - down) / (2 * h), 1e-6 + 1e-5 * std::abs(analytic[i].item<double>()))
        << "entry " << i;
  }
}

void check_layer(kforge::builtin::models::ModelConfig c, const std::string& router, const std::vector<std::string>& params) {
  c.moe_shared_experts = 1;
  auto moe = make_moe(c, 11, router, 0.5);
  moe->to(at::kDouble);
  moe->eval();  // no bias update between the evaluations of the objective
  at::manual_seed(12);
  const at::Tensor x = at::randn({2, 5, c.dim}, at::kDouble).requires_grad_(true);
  const at::Tensor probe = at::randn({2, 5, c.dim}, at::kDouble);
  const auto objective = [&] {
    const at::Tensor y = moe->forward(x);
    return (y * probe).sum() + 0.1 * moe->last_routing().aux_loss + 0.01 * moe->last_routing().z_loss;
  };
  expect_gradient_matches_differences(objective, x, "x");
  const auto named = moe->named_parameters();
  for (const auto& name : params) expect_gradient_matches_differences(objective, named[name], name);
}

TEST(MoEGradient, SoftmaxRouterLayerMatchesFiniteDifferences) {
  auto c = moe_config(4, 2);
  c.moe_capacity_factor = 1.0;  // capacity 5 of 10 (token, slot) pairs per expert: some drops
  check_layer(c, "softmax_topk",
              {"router.gate.weight", "shared_expert.up_proj.weight", "experts.1.gate_proj.weight",
               "experts.3.down_proj.weight"});
}

TEST(MoEGradient, SigmoidRouterPackedLayerMatchesFiniteDifferences) {
  auto c = moe_config(3, 2);
  c.moe_packed_experts = true;
  c.activation = "gelu";
  check_layer(c, "sigmoid_topk", {"router.gate.weight", "router.expert_bias", "up_w", "down_w"});
}

}  // namespace
}  // namespace kforge::test::models
