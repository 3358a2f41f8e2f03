// The routers plugin through the host: both names resolve, KempnerForge's parameter names, and the
// sigmoid router reading its settings from [model].
#include <gtest/gtest.h>

#include "router_test_util.h"
#include "support/component_host.h"

namespace kforge::test::routers {
namespace {

TEST(RouterPlugin, SoftmaxTopKHasOnlyTheGate) {
  ComponentHost h("[model]\ndim = 8\nn_layers = 1\nn_heads = 2\nvocab_size = 16\n");
  auto router = h.components.make_router("softmax_topk", {8, 4, 2});
  ASSERT_TRUE(router);
  const auto params = router->named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params.begin()->key(), "gate.weight");
  EXPECT_EQ(params.begin()->value().sizes(), (at::IntArrayRef{4, 8}));
}

TEST(RouterPlugin, SigmoidTopKHasGateBiasAndEmaAndReadsItsSchedule) {
  ComponentHost h("[model]\ndim = 8\nn_layers = 1\nn_heads = 2\nvocab_size = 16\nnum_experts = 4\n"
                  "moe_router = \"sigmoid_topk\"\nmoe_bias_schedule = \"cosine_decay\"\n"
                  "moe_sequence_aux_loss_weight = 0.5\n");
  auto router = h.components.make_router("sigmoid_topk", {8, 4, 2});
  std::vector<std::string> names;
  for (const auto& p : router->named_parameters()) names.push_back(p.key());
  // Own parameters before the children's, as PyTorch lists KempnerForge's.
  EXPECT_EQ(names, (std::vector<std::string>{"expert_bias", "gate.weight"}));
  EXPECT_TRUE(named(*router, "expert_ema").defined());
  set_gate(*router, at::randn({4, 8}));
  router->set_step(10, 10);  // cosine_decay at the end: no bias movement
  EXPECT_GT(router->route(at::randn({6, 8})).aux_loss.item<double>(), 0.0);  // the sequence aux weight arrived
  EXPECT_TRUE(at::equal(named(*router, "expert_bias"), at::zeros({4})));
}

TEST(RouterPlugin, UnknownRouterNameIsAConfigError) {
  ComponentHost h("[model]\ndim = 8\nn_layers = 1\nn_heads = 2\nvocab_size = 16\n");
  EXPECT_THROW(h.components.make_router("expert_choice", {8, 4, 2}), sdk::ConfigError);
}

}  // namespace
}  // namespace kforge::test::routers
