// softmax_topk: renormalised top-k, Switch aux loss (minimal 1 at uniform routing), z-loss, all
// checked against loops over plain doubles.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "router_test_util.h"
#include "softmax_topk.h"

namespace kforge::test::routers {
namespace {

using kforge::builtin::routers::SoftmaxTopK;

TEST(SoftmaxTopK, WeightsAreTheRenormalisedTopKProbabilities) {
  at::manual_seed(0);
  SoftmaxTopK router({8, 5, 2});
  set_gate(router, at::randn({5, 8}));
  const at::Tensor x = at::randn({16, 8});
  const auto out = router.route(x);
  ASSERT_EQ(out.weights.sizes(), (at::IntArrayRef{16, 2}));
  const at::Tensor probs = at::softmax(at::linear(x, named(router, "gate.weight")), -1);
  for (int64_t t = 0; t < 16; ++t) {
    EXPECT_NEAR(out.weights[t].sum().item<double>(), 1.0, 1e-6);
    // The chosen experts are the two most probable, in order, weighted by p / (p1 + p2).
    const at::Tensor sorted = std::get<1>(probs[t].sort(/*dim=*/-1, /*descending=*/true));
    const int64_t e0 = sorted[0].item<int64_t>(), e1 = sorted[1].item<int64_t>();
    EXPECT_EQ(out.indices[t][0].item<int64_t>(), e0);
    EXPECT_EQ(out.indices[t][1].item<int64_t>(), e1);
    const double p0 = probs[t][e0].item<double>(), p1 = probs[t][e1].item<double>();
    EXPECT_NEAR(out.weights[t][0].item<double>(), p0 / (p0 + p1), 1e-6);
  }
}

TEST(SoftmaxTopK, AuxLossMatchesTheSwitchFormulaByHand) {
  at::manual_seed(1);
  const int64_t T = 12, E = 4, K = 2;
  SoftmaxTopK router({6, E, K});
  set_gate(router, at::randn({E, 6}));
  const at::Tensor x = at::randn({T, 6});
  const auto out = router.route(x);
  const at::Tensor probs = at::softmax(at::linear(x, named(router, "gate.weight")), -1).to(at::kDouble);
  std::vector<int64_t> n(E, 0);
  std::vector<double> p(E, 0.0);
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) ++n[out.indices[t][k].item<int64_t>()];
    for (int64_t e = 0; e < E; ++e) p[e] += probs[t][e].item<double>() / T;
  }
  double expected = 0;
  for (int64_t e = 0; e < E; ++e) {
    expected += E * (static_cast<double>(n[e]) / (T * K)) * p[e];
    EXPECT_EQ(out.expert_counts[e].item<double>(), static_cast<double>(n[e]));
  }
  EXPECT_NEAR(out.aux_loss.item<double>(), expected, 1e-6);
}

TEST(SoftmaxTopK, AuxLossIsOneAtUniformRoutingAndLargerWhenImbalanced) {
  SoftmaxTopK router({4, 4, 1});
  const at::Tensor x = at::randn({32, 4});
  // A zero gate: every probability is 1/E, so E * sum_i f_i / E = 1 whatever the top-1 picks.
  EXPECT_NEAR(router.route(x).aux_loss.item<double>(), 1.0, 1e-6);
  // Tokens (one-hot per expert, 8 each) sent to their own expert: balanced, P_i = 1/E -> 1.
  const at::Tensor balanced = at::eye(4).repeat({8, 1});
  set_gate(router, 10 * at::eye(4));
  EXPECT_NEAR(router.route(balanced).aux_loss.item<double>(), 1.0, 1e-6);
  // Every token sent to expert 0 with probability ~1: aux -> E.
  const at::Tensor skewed = at::zeros({32, 4}).index_fill(1, at::tensor({int64_t{0}}), 1.0);
  const double aux = router.route(skewed).aux_loss.item<double>();
  EXPECT_GT(aux, 3.9);
  EXPECT_LE(aux, 4.0 + 1e-6);
}

TEST(SoftmaxTopK, ZLossIsMeanSquaredLogSumExpOfTheGateLogits) {
  at::manual_seed(2);
  SoftmaxTopK router({3, 4, 2});
  set_gate(router, at::randn({4, 3}));
  const at::Tensor x = at::randn({5, 3});
  const at::Tensor logits = at::linear(x, named(router, "gate.weight")).to(at::kDouble);
  double expected = 0;
  for (int64_t t = 0; t < 5; ++t) {
    double s = 0;
    for (int64_t e = 0; e < 4; ++e) s += std::exp(logits[t][e].item<double>());
    expected += std::log(s) * std::log(s) / 5;
  }
  EXPECT_NEAR(router.route(x).z_loss.item<double>(), expected, 1e-5);
}

TEST(SoftmaxTopK, GradientsReachTheGateThroughWeightsAndAux) {
  at::manual_seed(3);
  SoftmaxTopK router({4, 3, 2});
  set_gate(router, at::randn({3, 4}));
  const auto out = router.route(at::randn({6, 4}));
  (out.weights.pow(2).sum() + out.aux_loss + out.z_loss).backward();
  const at::Tensor grad = named(router, "gate.weight").grad();
  ASSERT_TRUE(grad.defined());
  EXPECT_GT(grad.abs().sum().item<double>(), 0.0);
  EXPECT_FALSE(out.expert_counts.requires_grad());
}

}  // namespace
}  // namespace kforge::test::routers
