// AdamW built through the registry: weight-decay groups, skipped parameters, named state and resume.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>

#include "kforge/sdk/error.h"
#include "plugins/optimizers/adamw_fixture.h"
#include "support/component_host.h"

namespace kforge::test {
namespace {

using F = AdamWFixture;

sdk::StateDict cloned(const sdk::StateDict& state) {
  sdk::StateDict out;
  for (const auto& [k, v] : state) out.emplace(k, v.clone());
  return out;
}

void expect_state_equal(const sdk::StateDict& a, const sdk::StateDict& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [k, v] : a) {
    ASSERT_EQ(b.count(k), 1u) << k;
    EXPECT_TRUE(at::equal(v, b.at(k))) << k;
  }
}

// With zero gradients the moments stay 0, so the only change is p *= 1 - lr * wd on decayed tensors.
std::set<std::string> decayed_by_one_zero_grad_step(bool decay_embeddings) {
  ComponentHost h(F::toml(0.1, 0.5, decay_embeddings));
  auto params = F::params(at::kDouble);
  const auto before = F::copy(params);
  auto opt = h.components.optimizer(params);
  for (auto& p : params) {
    if (p.tensor.requires_grad()) p.tensor.mutable_grad() = at::zeros_like(p.tensor);
  }
  opt->step();
  std::set<std::string> decayed;
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& now = params[i].tensor;
    const at::Tensor& was = before[i].tensor;
    if (at::equal(now, was)) continue;
    EXPECT_TRUE(at::equal(now, was * (1.0 - 0.1 * 0.5))) << params[i].name << " changed other than by decay";
    decayed.insert(params[i].name);
  }
  return decayed;
}

TEST(AdamWGroups, DecaysOnlyMatricesNotNormsBiasesOrEmbeddings) {
  const std::set<std::string> expected = {"layers.0.attention.wq.weight", "layers.0.feed_forward.w1.weight",
                                          "layers.0.unused.weight", "output.weight"};
  EXPECT_EQ(decayed_by_one_zero_grad_step(false), expected);
}

TEST(AdamWGroups, DecayEmbeddingsTrueAlsoDecaysTheEmbedding) {
  const std::set<std::string> expected = {"tok_embeddings.weight", "layers.0.attention.wq.weight",
                                          "layers.0.feed_forward.w1.weight", "layers.0.unused.weight",
                                          "output.weight"};
  EXPECT_EQ(decayed_by_one_zero_grad_step(true), expected);
}

TEST(AdamWSkips, ParametersWithoutGradStayBitIdenticalAndKeepStepZero) {
  ComponentHost h(F::toml(1e-2, 0.1, false));
  auto params = F::params(at::kFloat);
  const auto before = F::copy(params);
  auto opt = h.components.optimizer(params);
  F::run(*opt, params, 0, F::kSteps);
  // The unused tensor is 2-D (decay group), so any drift would come from weight decay.
  EXPECT_TRUE(at::equal(params[F::kUnused].tensor, before[F::kUnused].tensor));
  EXPECT_TRUE(at::equal(params[F::kFrozen].tensor, before[F::kFrozen].tensor));
  const sdk::StateDict state = opt->state_dict();
  EXPECT_EQ(state.at("layers.0.unused.weight.step").item<int64_t>(), 0);
  EXPECT_EQ(state.at("layers.0.unused.weight.exp_avg").abs().sum().item<double>(), 0.0);
  // Per-parameter step counts: one missed step each for the norm weight and w1.weight.
  EXPECT_EQ(state.at("layers.0.attention_norm.weight.step").item<int64_t>(), F::kSteps - 1);
  EXPECT_EQ(state.at("layers.0.feed_forward.w1.weight.step").item<int64_t>(), F::kSteps - 1);
  EXPECT_EQ(state.at("output.weight.step").item<int64_t>(), F::kSteps);
}

TEST(AdamWLr, FactorScalesTheBaseLrAndFactorZeroStillCountsTheStep) {
  ComponentHost h(F::toml(1e-2, 0.1, false));
  auto params = F::params(at::kDouble);
  const auto before = F::copy(params);
  auto opt = h.components.optimizer(params);
  EXPECT_DOUBLE_EQ(opt->lr(), 1e-2);
  opt->set_lr_factor(0.25);
  EXPECT_DOUBLE_EQ(opt->lr(), 1e-2 * 0.25);
  // LambdaLR's first step runs at lambda(0) = 0 under warmup: nothing moves, moments and step advance.
  F::run(*opt, params, 0, 1);
  EXPECT_DOUBLE_EQ(opt->lr(), 0.0);
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(at::equal(params[i].tensor, before[i].tensor)) << params[i].name;
  const sdk::StateDict state = opt->state_dict();
  EXPECT_EQ(state.at("output.weight.step").item<int64_t>(), 1);
  EXPECT_GT(state.at("output.weight.exp_avg").abs().sum().item<double>(), 0.0);
}

TEST(AdamWState, KeyedByParameterNameOnly) {
  ComponentHost h(F::toml(1e-2, 0.1, false));
  auto params = F::params(at::kFloat);
  auto opt = h.components.optimizer(params);
  F::run(*opt, params, 0, 2);
  std::set<std::string> expected;
  for (size_t i = 0; i < params.size(); ++i) {
    if (static_cast<int>(i) == F::kFrozen) continue;
    for (const char* slot : {".exp_avg", ".exp_avg_sq", ".step"}) expected.insert(params[i].name + slot);
  }
  const sdk::StateDict state = opt->state_dict();
  std::set<std::string> keys;
  for (const auto& [k, v] : state) keys.insert(k);
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(state.at("output.weight.step").dim(), 0);
  EXPECT_EQ(state.at("output.weight.exp_avg").sizes(), params[7].tensor.sizes());
}

TEST(AdamWState, SaveLoadIntoFreshOptimizerThenContinueEqualsUninterruptedBitExactly) {
  ComponentHost h(F::toml(1e-2, 0.1, false));
  auto straight = F::params(at::kFloat);
  auto opt_straight = h.components.optimizer(straight);
  F::run(*opt_straight, straight, 0, F::kSteps);

  auto first = F::params(at::kFloat);
  auto opt_first = h.components.optimizer(first);
  F::run(*opt_first, first, 0, 3);  // the lr factor changes on both sides of the split
  sdk::StateDict saved = cloned(opt_first->state_dict());

  auto resumed = F::copy(first);  // as if the model weights came back from a checkpoint
  auto opt_resumed = h.components.optimizer(resumed);
  opt_resumed->load_state_dict(saved);
  for (auto& [k, v] : saved) v.zero_();  // load must copy, not alias
  F::run(*opt_resumed, resumed, 3, F::kSteps);

  for (size_t i = 0; i < straight.size(); ++i) {
    EXPECT_TRUE(at::equal(resumed[i].tensor, straight[i].tensor)) << straight[i].name;
  }
  expect_state_equal(opt_resumed->state_dict(), opt_straight->state_dict());
}

std::string load_error(sdk::Optimizer& opt, const sdk::StateDict& state) {
  try {
    opt.load_state_dict(state);
  } catch (const sdk::Error& e) {
    return e.what();
  }
  return "";
}

TEST(AdamWState, LoadNamesAMissingEntryAndChangesNothing) {
  ComponentHost h(F::toml(1e-2, 0.1, false));
  auto params = F::params(at::kFloat);
  auto opt = h.components.optimizer(params);
  F::run(*opt, params, 0, 2);
  const sdk::StateDict before = cloned(opt->state_dict());
  sdk::StateDict broken = cloned(before);
  for (auto& [k, v] : broken) v.add_(1);  // every entry differs, so a partial load would show
  broken.erase("output.weight.exp_avg_sq");
  const std::string message = load_error(*opt, broken);
  EXPECT_NE(message.find("missing entry 'output.weight.exp_avg_sq'"), std::string::npos) << message;
  expect_state_equal(opt->state_dict(), before);
}

TEST(AdamWState, LoadNamesAShapeMismatch) {
  ComponentHost h(F::toml(1e-2, 0.1, false));
  auto params = F::params(at::kFloat);
  auto opt = h.components.optimizer(params);
  sdk::StateDict state = cloned(opt->state_dict());
  state["layers.0.attention.wq.weight.exp_avg"] = at::zeros({3, 3});
  const std::string message = load_error(*opt, state);
  EXPECT_NE(message.find("'layers.0.attention.wq.weight.exp_avg' has shape [3, 3]"), std::string::npos) << message;
  EXPECT_NE(message.find("needs [4, 4]"), std::string::npos) << message;
}

}  // namespace
}  // namespace kforge::test
