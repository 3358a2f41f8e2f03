// CpuAutocastGuard: bf16 compute with fp32 parameters and gradients inside, nothing outside.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "kforge/sdk/error.h"
#include "train/precision.h"

namespace kforge::test {
namespace {

TEST(CpuAutocastGuard, LinearRunsInBf16WithFp32ParameterGradients) {
  const at::Tensor x = at::randn({4, 8});
  const at::Tensor w = at::randn({3, 8}).requires_grad_(), b = at::randn({3}).requires_grad_();
  at::Tensor y;
  {
    train::CpuAutocastGuard autocast(train::cpu_autocast_dtype("bf16"));
    y = at::linear(x, w, b);
  }
  EXPECT_EQ(y.scalar_type(), at::kBFloat16);
  y.to(at::kFloat).sum().backward();
  EXPECT_EQ(w.grad().scalar_type(), at::kFloat);
  EXPECT_EQ(b.grad().scalar_type(), at::kFloat);
  // d sum(x w^T + b) / dw = column sums of x in every row, up to bf16 rounding of x.
  const at::Tensor expected = x.to(at::kBFloat16).to(at::kFloat).sum(0).expand({3, 8});
  EXPECT_LE((w.grad() - expected).abs().max().item<float>(), 0.05f);
  EXPECT_FALSE(at::autocast::is_cpu_enabled()) << "the guard restores the previous state";
  EXPECT_EQ(at::linear(x, w.detach(), b.detach()).scalar_type(), at::kFloat);
}

TEST(CpuAutocastGuard, Fp32IsNoAutocastAndNestedGuardsRestoreTheOuterOne) {
  EXPECT_FALSE(train::cpu_autocast_dtype("fp32").has_value());
  train::CpuAutocastGuard outer(at::kBFloat16);
  {
    train::CpuAutocastGuard none(train::cpu_autocast_dtype("fp32"));
    EXPECT_TRUE(at::autocast::is_cpu_enabled());
  }
  { train::CpuAutocastGuard inner(at::kBFloat16); }
  EXPECT_TRUE(at::autocast::is_cpu_enabled());
  EXPECT_EQ(at::autocast::get_autocast_cpu_dtype(), at::kBFloat16);
}

TEST(CpuAutocastGuard, Fp16AndFp8AreConfigErrorsNamingTheKey) {
  for (const char* value : {"fp16", "fp8"}) {
    try {
      train::cpu_autocast_dtype(value);
      FAIL() << value;
    } catch (const sdk::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("[train] mixed_precision"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kforge::test
