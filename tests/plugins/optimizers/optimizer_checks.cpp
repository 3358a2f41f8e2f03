// Shared optimizer checks (see optimizer_checks.h).
#include "plugins/optimizers/optimizer_checks.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <iomanip>
#include <sstream>

#include "plugins/optimizers/adamw_fixture.h"
#include "support/component_host.h"

namespace kforge::test {

std::string optimizer_toml(const std::string& name, double lr, double weight_decay, double beta1, double beta2,
                           const std::string& extra) {
  std::ostringstream out;
  out << std::setprecision(17) << "[optimizer]\nname = \"" << name << "\"\nlr = " << lr
      << "\nweight_decay = " << weight_decay << "\nbetas = [" << beta1 << ", " << beta2 << "]\neps = 1e-8\n"
      << extra;
  return out.str();
}

at::Tensor leaf(const std::vector<double>& v, at::IntArrayRef shape) {
  return at::tensor(v, at::kDouble).reshape(shape).clone().set_requires_grad(true);
}

std::vector<double> values(const at::Tensor& t) {
  const at::Tensor flat = t.detach().to(at::kDouble).contiguous().view({-1});
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

void expect_near(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

sdk::StateDict cloned(const sdk::StateDict& state) {
  sdk::StateDict out;
  for (const auto& [k, v] : state) out.emplace(k, v.clone());
  return out;
}

void expect_resume_bit_exact(const std::string& toml, at::ScalarType dtype) {
  using F = AdamWFixture;
  ComponentHost h(toml);
  auto straight = F::params(dtype);
  auto opt_straight = h.components.optimizer(straight);
  F::run(*opt_straight, straight, 0, F::kSteps);

  auto first = F::params(dtype);
  auto opt_first = h.components.optimizer(first);
  F::run(*opt_first, first, 0, 3);
  opt_first->use_eval_weights();
  sdk::StateDict saved = cloned(opt_first->state_dict());
  auto resumed = F::copy(first);  // the checkpoint's (evaluation) weights
  opt_first->use_train_weights();

  auto opt_resumed = h.components.optimizer(resumed);
  opt_resumed->load_state_dict(saved);
  for (auto& [k, v] : saved) v.zero_();  // load must copy, not alias
  opt_resumed->use_train_weights();
  F::run(*opt_resumed, resumed, 3, F::kSteps);

  for (size_t i = 0; i < straight.size(); ++i) {
    EXPECT_TRUE(at::equal(resumed[i].tensor, straight[i].tensor)) << straight[i].name;
  }
  const sdk::StateDict a = opt_resumed->state_dict();
  const sdk::StateDict b = opt_straight->state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [k, v] : a) {
    ASSERT_EQ(b.count(k), 1u) << k;
    EXPECT_TRUE(at::equal(v, b.at(k))) << k;
  }
}

}  // namespace kforge::test
