// sigmoid_topk: biased sigmoid scores, the EMA bias update moving routing toward balance (training
// only), its schedule factor, and the optional sequence aux loss against a hand computation.
#include <gtest/gtest.h>

#include <vector>

#include "router_test_util.h"
#include "sigmoid_topk.h"

namespace kforge::test::routers {
namespace {

using kforge::builtin::routers::BiasSchedule;
using kforge::builtin::routers::SigmoidTopK;

/// min / max of the router's expert counts for x.
double balance(SigmoidTopK& router, const at::Tensor& x) {
  const at::Tensor c = router.route(x).expert_counts;
  return c.min().item<double>() / c.max().item<double>();
}

TEST(SigmoidTopK, WeightsAreTheRenormalisedTopKOfBiasedSigmoidScores) {
  at::manual_seed(0);
  SigmoidTopK router({6, 4, 2}, {});
  set_gate(router, at::randn({4, 6}));
  {
    at::NoGradGuard no_grad;
    named(router, "expert_bias").copy_(at::tensor({0.5, -0.5, 0.25, 0.0}));
  }
  router.eval();
  const at::Tensor x = at::randn({10, 6});
  const auto out = router.route(x);
  const at::Tensor scores = at::sigmoid(at::linear(x, named(router, "gate.weight")) + named(router, "expert_bias"));
  const auto [top, idx] = at::topk(scores, 2);
  EXPECT_TRUE(at::equal(out.indices, idx));
  EXPECT_TRUE(at::allclose(out.weights, top / top.sum(-1, true)));
  EXPECT_TRUE(at::allclose(out.weights.sum(-1), at::ones({10})));
  EXPECT_EQ(out.aux_loss.item<double>(), 0.0);  // no sequence aux loss by default
}

TEST(SigmoidTopK, BiasUpdateIsTheEmaRuleByHand) {
  at::manual_seed(1);
  SigmoidTopK router({4, 4, 1}, {});
  set_gate(router, at::randn({4, 4}));
  const at::Tensor x = at::randn({20, 4});
  const at::Tensor counts = router.route(x).expert_counts.to(at::kDouble);  // training: one update
  for (int64_t e = 0; e < 4; ++e) {
    const double ema = 0.25 + 0.01 * (counts[e].item<double>() / 20.0 - 0.25);
    EXPECT_NEAR(named(router, "expert_ema")[e].item<double>(), ema, 1e-7);
    EXPECT_NEAR(named(router, "expert_bias")[e].item<double>(), 0.001 * (0.25 - ema), 1e-9);
  }
}

TEST(SigmoidTopK, BiasMovesRoutingTowardBalanceOverRepeatedTrainingForwards) {
  at::manual_seed(2);
  SigmoidTopK router({8, 4, 1}, {});
  set_gate(router, 0.01 * at::randn({4, 8}) + at::tensor({0.03, 0.0, 0.0, 0.0}).unsqueeze(1));
  const at::Tensor x = at::rand({256, 8});  // positive inputs: expert 0 is everyone's favourite
  router.eval();
  const double before = balance(router, x);
  router.train();
  for (int i = 0; i < 400; ++i) router.route(x);
  router.eval();
  const double after = balance(router, x);
  EXPECT_LT(before, 0.2);
  EXPECT_GT(after, before + 0.3);
  const at::Tensor bias = named(router, "expert_bias");
  EXPECT_LT(bias[0].item<double>(), 0.0);  // the over-used expert is pushed down
  for (int64_t e = 1; e < 4; ++e) EXPECT_GT(bias[e].item<double>(), bias[0].item<double>());
}

TEST(SigmoidTopK, EvalForwardLeavesBiasAndEmaAlone) {
  SigmoidTopK router({4, 4, 2}, {});
  set_gate(router, at::randn({4, 4}));
  router.eval();
  for (int i = 0; i < 5; ++i) router.route(at::randn({8, 4}));
  EXPECT_TRUE(at::equal(named(router, "expert_bias"), at::zeros({4})));
  EXPECT_TRUE(at::equal(named(router, "expert_ema"), at::full({4}, 0.25)));
}

TEST(SigmoidTopK, ScheduleFactorScalesTheUpdate) {
  at::manual_seed(3);
  const at::Tensor gate = at::randn({4, 4}), x = at::randn({16, 4});
  SigmoidTopK constant({4, 4, 1}, {0.0, BiasSchedule::Constant});
  SigmoidTopK cosine({4, 4, 1}, {0.0, BiasSchedule::CosineDecay});
  set_gate(constant, gate);
  set_gate(cosine, gate);
  cosine.set_step(50, 100);  // factor 0.5
  constant.route(x);
  cosine.route(x);
  EXPECT_TRUE(at::allclose(named(cosine, "expert_bias"), 0.5 * named(constant, "expert_bias"), 0, 1e-9));
  cosine.set_step(100, 100);  // factor 0: the EMA still moves, the bias does not
  const at::Tensor bias = named(cosine, "expert_bias").clone();
  cosine.route(x);
  EXPECT_TRUE(at::equal(named(cosine, "expert_bias"), bias));
}

TEST(SigmoidTopK, SequenceAuxLossIsWeightedSwitchLossOverNormalisedScores) {
  at::manual_seed(4);
  const int64_t T = 9, E = 3, K = 2;
  SigmoidTopK router({5, E, K}, {0.3, BiasSchedule::Constant});
  set_gate(router, at::randn({E, 5}));
  router.eval();
  const at::Tensor x = at::randn({T, 5});
  const auto out = router.route(x);
  const at::Tensor s = at::sigmoid(at::linear(x, named(router, "gate.weight"))).to(at::kDouble);
  std::vector<double> f(E, 0.0), p(E, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) f[out.indices[t][k].item<int64_t>()] += 1.0 / (T * K);
    const double row = s[t].sum().item<double>();
    for (int64_t e = 0; e < E; ++e) p[e] += s[t][e].item<double>() / row / T;
  }
  double expected = 0;
  for (int64_t e = 0; e < E; ++e) expected += 0.3 * E * f[e] * p[e];
  EXPECT_NEAR(out.aux_loss.item<double>(), expected, 1e-6);
}

}  // namespace
}  // namespace kforge::test::routers
