// Frozen parameters (requires_grad off, no .grad) in Lion, SGD, Schedule-Free AdamW and Muon: no update and
// no weight-decay drift over steps and evaluation-weight swaps, untouched state, a clean state round trip,
// and a first update after unfreezing equal to a fresh optimizer's first update.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "plugins/optimizers/optimizer_checks.h"
#include "support/component_host.h"

namespace kforge::test {
namespace {

struct FrozenCase {
  const char* label;
  std::string toml;
};

// Weight decay is large so that any decay applied to a frozen parameter would show.
const FrozenCase kCases[] = {
    {"lion", optimizer_toml("lion", 0.1, 0.5, 0.9, 0.99)},
    {"sgd", optimizer_toml("sgd", 0.1, 0.5, 0.9, 0.99, "sgd_momentum = 0.9\n")},
    {"schedule_free_adamw",
     optimizer_toml("schedule_free_adamw", 0.1, 0.5, 0.9, 0.999, "schedule_free_warmup_steps = 2\n")},
    {"muon", optimizer_toml("muon", 0.1, 0.5, 0.9, 0.95)},  // f.norm / w.norm go to Muon's AdamW part
};

constexpr int kFrozenSteps = 4;

// Trainable "w.*" and to-be-frozen "f.*": a matrix (decayed; Muon-eligible) and a 1-D tensor each.
std::vector<sdk::NamedParameter> make_params() {
  return {{"w.weight", leaf({0.5, -1.0, 0.25, 2.0, -0.5, 1.5, 0.75, -2.0, 1.0}, {3, 3})},
          {"w.norm", leaf({1.0, 0.5, -0.25}, {3})},
          {"f.weight", leaf({-1.5, 0.5, 2.5, -0.75, 1.25, -2.0, 0.5, 1.0, -1.0}, {3, 3})},
          {"f.norm", leaf({0.75, -1.25, 2.0}, {3})}};
}

std::vector<sdk::NamedParameter> copy_of(const std::vector<sdk::NamedParameter>& params) {
  std::vector<sdk::NamedParameter> out;
  for (const auto& p : params) out.push_back({p.name, p.tensor.detach().clone().set_requires_grad(true)});
  return out;
}

bool frozen(const sdk::NamedParameter& p) { return p.name.rfind("f.", 0) == 0; }

// As the trainer freezes: after the optimizer is built, requires_grad off and no gradient.
void set_frozen(std::vector<sdk::NamedParameter>& params, bool on) {
  for (auto& p : params) {
    if (frozen(p)) p.tensor.set_requires_grad(!on);
  }
}

at::Tensor grad_for(const sdk::NamedParameter& p, int step) {
  return at::sin(at::arange(p.tensor.numel(), at::kDouble).mul_(0.7).add_(step + 1)).view(p.tensor.sizes());
}

// One host step: gradients for the parameters that require them, step(), then the evaluation swap.
void host_step(sdk::Optimizer& opt, std::vector<sdk::NamedParameter>& params, int step) {
  for (auto& p : params) {
    if (p.tensor.requires_grad()) p.tensor.mutable_grad() = grad_for(p, step);
  }
  opt.step();
  for (auto& p : params) p.tensor.mutable_grad().reset();
  opt.use_eval_weights();
  opt.use_train_weights();
}

std::vector<std::string> frozen_state_keys(const sdk::StateDict& state) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : state) {
    if (k.rfind("f.", 0) == 0) keys.push_back(k);
  }
  return keys;
}

class FrozenParams : public ::testing::TestWithParam<FrozenCase> {};

TEST_P(FrozenParams, StayBitIdenticalWithUntouchedStateWhileOthersMove) {
  ComponentHost h(GetParam().toml);
  auto params = make_params();
  auto opt = h.components.optimizer(params);
  set_frozen(params, true);
  const auto initial = copy_of(params);
  const sdk::StateDict state_before = cloned(opt->state_dict());
  ASSERT_FALSE(frozen_state_keys(state_before).empty()) << "the optimizer holds the frozen parameters";

  for (int k = 0; k < kFrozenSteps; ++k) host_step(*opt, params, k);

  for (size_t i = 0; i < params.size(); ++i) {
    const bool same = at::equal(params[i].tensor, initial[i].tensor);
    EXPECT_EQ(same, frozen(params[i])) << params[i].name << (same ? " did not move" : " moved");
  }
  const sdk::StateDict state_after = opt->state_dict();
  for (const std::string& key : frozen_state_keys(state_before)) {
    EXPECT_TRUE(at::equal(state_after.at(key), state_before.at(key))) << key << " changed while frozen";
  }
  EXPECT_EQ(state_after.size(), state_before.size());
}

TEST_P(FrozenParams, FirstUpdateAfterUnfreezingEqualsAFreshOptimizersFirstUpdate) {
  ComponentHost h(GetParam().toml);
  auto params = make_params();
  auto opt = h.components.optimizer(params);
  set_frozen(params, true);
  for (int k = 0; k < kFrozenSteps; ++k) host_step(*opt, params, k);
  set_frozen(params, false);
  host_step(*opt, params, kFrozenSteps);

  // Reference: a fresh optimizer over the initial weights whose only gradients are the frozen ones'.
  auto fresh = make_params();
  auto fresh_opt = h.components.optimizer(fresh);
  for (auto& p : fresh) {
    if (frozen(p)) p.tensor.mutable_grad() = grad_for(p, kFrozenSteps);
  }
  fresh_opt->step();
  for (size_t i = 0; i < params.size(); ++i) {
    if (!frozen(params[i])) continue;
    EXPECT_TRUE(at::equal(params[i].tensor, fresh[i].tensor))
        << params[i].name << ": " << params[i].tensor << " vs fresh " << fresh[i].tensor;
    EXPECT_FALSE(at::equal(params[i].tensor, make_params()[i].tensor)) << params[i].name << " did not move";
  }
}

TEST_P(FrozenParams, StateOfNeverUpdatedParamsRoundTripsBitExactly) {
  ComponentHost h(GetParam().toml);
  auto params = make_params();
  auto opt = h.components.optimizer(params);
  set_frozen(params, true);
  for (int k = 0; k < kFrozenSteps; ++k) host_step(*opt, params, k);

  // Checkpoint as the host does: evaluation weights and a copy of the state.
  opt->use_eval_weights();
  const sdk::StateDict saved = cloned(opt->state_dict());
  auto resumed = copy_of(params);
  opt->use_train_weights();
  auto resumed_opt = h.components.optimizer(resumed);
  set_frozen(resumed, true);
  resumed_opt->load_state_dict(saved);
  resumed_opt->use_train_weights();

  // Continue both: one more frozen step, then two with everything trainable.
  host_step(*opt, params, kFrozenSteps);
  host_step(*resumed_opt, resumed, kFrozenSteps);
  set_frozen(params, false);
  set_frozen(resumed, false);
  for (int k = kFrozenSteps + 1; k < kFrozenSteps + 3; ++k) {
    host_step(*opt, params, k);
    host_step(*resumed_opt, resumed, k);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(at::equal(params[i].tensor, resumed[i].tensor)) << params[i].name;
  }
  const sdk::StateDict a = opt->state_dict(), b = resumed_opt->state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [key, value] : a) EXPECT_TRUE(at::equal(value, b.at(key))) << key;
}

INSTANTIATE_TEST_SUITE_P(Optimizers, FrozenParams, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<FrozenCase>& info) {
                           return std::string(info.param.label);
                         });

}  // namespace
}  // namespace kforge::test
