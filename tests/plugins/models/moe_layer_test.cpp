// The MoE layer: one expert equals the dense MLP, grouped dispatch equals a per-token loop (values
// and gradients, SwiGLU and GELU, an empty expert), packed equals per-expert storage, capacity
// dropping, gradient scaling and the shared expert.
#include <gtest/gtest.h>

#include <torch/csrc/autograd/autograd.h>

#include "moe_test_util.h"
#include "transformer/expert_capacity.h"
#include "transformer/mlp.h"

namespace kforge::test::models {
namespace {

using kforge::builtin::models::MoE;

at::Tensor param(const torch::nn::Module& m, const std::string& name) { return m.named_parameters()[name]; }

TEST(MoELayer, OneExpertTopOneEqualsTheDenseMlp) {
  const auto c = moe_config(1, 1);
  auto moe = make_moe(c, 1);
  kforge::builtin::models::MLP dense(c.dim, 32, "silu", kforge::builtin::models::LinearBackend::Aten, true);
  {
    at::NoGradGuard no_grad;
    for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) {
      param(dense, std::string(proj) + ".weight").copy_(param(*moe, "experts.0." + std::string(proj) + ".weight"));
    }
  }
  const at::Tensor x = at::randn({2, 5, c.dim});
  EXPECT_TRUE(at::allclose(moe->forward(x), dense.forward(x), 1e-5, 1e-6));
}

struct GroupedCase {
  const char* activation;
  bool packed;
};

class MoEGrouped : public ::testing::TestWithParam<GroupedCase> {};

TEST_P(MoEGrouped, GroupedDispatchEqualsPerTokenLoopInValuesAndGradients) {
  auto c = moe_config(6, 2);
  c.activation = GetParam().activation;
  c.moe_packed_experts = GetParam().packed;
  auto moe = make_moe(c, 2);
  {
    at::NoGradGuard no_grad;  // expert 5 is never picked: its gate row is very negative on positive inputs
    param(*moe, "router.gate.weight")[5].fill_(-10.0);
  }
  const at::Tensor x = at::rand({12, c.dim}).requires_grad_(true);
  const auto routing = moe->router().route(x);
  ASSERT_EQ((routing.indices == 5).sum().item<int64_t>(), 0);
  const at::Tensor probe = at::randn({12, c.dim});

  const at::Tensor grouped = moe->combine(x, routing.weights, routing.indices);
  const auto grouped_grads = torch::autograd::grad({(grouped * probe).sum()}, {x, param(*moe, "router.gate.weight")},
                                                   {}, /*retain_graph=*/true);
  const at::Tensor loop = per_token_reference(*moe, x, routing.weights, routing.indices);
  const auto loop_grads = torch::autograd::grad({(loop * probe).sum()}, {x, param(*moe, "router.gate.weight")});

  EXPECT_TRUE(at::allclose(grouped, loop, 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(grouped_grads[0], loop_grads[0], 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(grouped_grads[1], loop_grads[1], 1e-5, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Activations, MoEGrouped,
                         ::testing::Values(GroupedCase{"silu", false}, GroupedCase{"gelu", false},
                                           GroupedCase{"silu", true}, GroupedCase{"relu", true}));

TEST(MoELayer, PackedEqualsPerExpertWithTheSameWeights) {
  for (const char* activation : {"silu", "gelu"}) {
    SCOPED_TRACE(activation);
    auto c = moe_config(4, 2);
    c.activation = activation;
    c.moe_shared_experts = 1;
    auto unpacked = make_moe(c, 3);
    c.moe_packed_experts = true;
    auto packed = make_moe(c, 4);
    {
      at::NoGradGuard no_grad;
      for (const auto& p : unpacked->named_parameters()) {
        const std::string& name = p.key();
        if (name.rfind("experts.", 0) != 0) {
          param(*packed, name).copy_(p.value());
          continue;
        }
        // experts.{e}.{gate,up,down}_proj.weight (out, in) -> {gate,up,down}_w[e] (in, out)
        const auto dot = name.find('.', 8);
        const int64_t e = std::stoll(name.substr(8, dot - 8));
        const std::string proj = name.substr(dot + 1, name.find('_', dot) - dot - 1);
        param(*packed, proj + "_w")[e].copy_(p.value().t());
      }
    }
    const at::Tensor x = at::randn({3, 4, c.dim});
    const at::Tensor xa = x.clone().requires_grad_(true), xb = x.clone().requires_grad_(true);
    const at::Tensor ya = unpacked->forward(xa), yb = packed->forward(xb);
    EXPECT_TRUE(at::allclose(ya, yb, 1e-5, 1e-6));
    ya.pow(2).sum().backward();
    yb.pow(2).sum().backward();
    EXPECT_TRUE(at::allclose(xa.grad(), xb.grad(), 1e-5, 1e-4));  // gradients up to ~50: float rounding
    const at::Tensor expert_grad = param(*unpacked, "experts.2.down_proj.weight").grad().t();
    EXPECT_TRUE(at::allclose(expert_grad, param(*packed, "down_w").grad()[2], 1e-5, 1e-4));
  }
}

TEST(ExpertCapacity, FormulaByHand) {
  using kforge::builtin::models::expert_capacity;
  EXPECT_EQ(expert_capacity(8, 1, 2, 0.5), 2);     // 8 / 2 * 0.5
  EXPECT_EQ(expert_capacity(10, 2, 4, 1.25), 7);   // ceil(6.25)
  EXPECT_EQ(expert_capacity(1, 1, 8, 0.1), 1);     // never below 1
  EXPECT_EQ(expert_capacity(16, 2, 8, 1.0), 4);
}

TEST(ExpertCapacity, EachSlotKeepsTheFirstTokensPerExpert) {
  const at::Tensor indices = at::tensor({0, 1, 0, 1, 0, 2, 1, 0}, at::kLong).view({4, 2});
  const at::Tensor kept = kforge::builtin::models::drop_over_capacity(at::ones({4, 2}), indices, 3, 1);
  // slot 0: expert 0 chosen by tokens 0, 1, 2 -> only token 0 kept; expert 1 by token 3 -> kept.
  // slot 1: expert 1 by tokens 0, 1 -> token 0 kept; expert 2 (token 2) and expert 0 (token 3) kept.
  EXPECT_TRUE(at::equal(kept, at::tensor({1., 1., 0., 0., 0., 1., 1., 1.}).view({4, 2})));
}

TEST(MoELayer, CapacityDropsTheOverflowTokensOfEachExpert) {
  auto c = moe_config(2, 1);
  c.moe_capacity_factor = 0.5;  // capacity = ceil(16 * 1 / 2 * 0.5) = 4
  auto moe = make_moe(c, 5);
  const at::Tensor x = at::randn({2, 8, c.dim});
  const at::Tensor y = moe->forward(x).view({16, c.dim});
  const at::Tensor indices = moe->last_routing().indices;
  const at::Tensor full = moe->combine(x.view({16, c.dim}), moe->last_routing().weights, indices);
  int64_t seen[2] = {0, 0}, dropped = 0;
  for (int64_t t = 0; t < 16; ++t) {
    const int64_t e = indices[t][0].item<int64_t>();
    if (++seen[e] > 4) {
      ++dropped;
      EXPECT_TRUE(at::equal(y[t], at::zeros({c.dim}))) << "token " << t;
    } else {
      EXPECT_TRUE(at::allclose(y[t], full[t])) << "token " << t;
    }
  }
  EXPECT_EQ(dropped, std::max<int64_t>(0, seen[0] - 4) + std::max<int64_t>(0, seen[1] - 4));
  EXPECT_GE(dropped, 8);  // two experts of capacity 4 keep at most 8 of the 16 tokens
  // Decoding routes without a capacity limit.
  EXPECT_TRUE(at::allclose(moe->forward(x, /*decoding=*/true).view({16, c.dim}), full));
}

TEST(MoELayer, GradientScaleMultipliesEachExpertOutputInTrainingOnly) {
  auto c = moe_config(3, 2);
  c.moe_gradient_scale = true;
  auto moe = make_moe(c, 6);
  const at::Tensor x = at::randn({10, c.dim});
  const auto routing = moe->router().route(x);
  const at::Tensor counts = at::bincount(routing.indices.reshape(-1), {}, 3).to(at::kDouble);
  // Reference: expert e's output times (T K / E) / count_e.
  const at::Tensor scale = (10.0 * 2 / 3) / counts.clamp_min(1);
  const at::Tensor slot_scale = scale.index_select(0, routing.indices.reshape(-1)).view({10, 2}).to(at::kFloat);
  const at::Tensor scaled_weights = routing.weights * slot_scale;
  moe->train();
  EXPECT_TRUE(at::allclose(moe->combine(x, routing.weights, routing.indices),
                           per_token_reference(*moe, x, scaled_weights, routing.indices), 1e-5, 1e-6));
  moe->eval();
  EXPECT_TRUE(at::allclose(moe->combine(x, routing.weights, routing.indices),
                           per_token_reference(*moe, x, routing.weights, routing.indices), 1e-5, 1e-6));
}

TEST(MoELayer, SharedExpertIsAddedUnweightedToEveryToken) {
  auto c = moe_config(4, 2);
  c.moe_shared_experts = 2;  // KempnerForge builds one shared expert whatever the count
  auto moe = make_moe(c, 7);
  int shared_mlps = 0;
  for (const auto& m : moe->named_children()) shared_mlps += m.key() == "shared_expert" ? 1 : 0;
  EXPECT_EQ(shared_mlps, 1);
  const at::Tensor x = at::randn({6, c.dim});
  const at::Tensor y = moe->forward(x.view({1, 6, c.dim})).view({6, c.dim});
  const at::Tensor routed = moe->combine(x, moe->last_routing().weights, moe->last_routing().indices);
  const kforge::builtin::models::FfnWeights shared{param(*moe, "shared_expert.gate_proj.weight").t(),
                                          param(*moe, "shared_expert.up_proj.weight").t(),
                                          param(*moe, "shared_expert.down_proj.weight").t()};
  EXPECT_TRUE(at::allclose(
      y - routed, kforge::builtin::models::ffn_forward(x, shared, kforge::builtin::models::MlpActivation::SwiGLU, true), 1e-5, 1e-6));
}

}  // namespace
}  // namespace kforge::test::models
