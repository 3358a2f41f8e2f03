// AutocastGuard: bf16 compute with fp32 parameters and gradients inside, nothing outside.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "kforge/sdk/error.h"
#include "parallel/precision.h"

namespace kforge::test {
namespace {

TEST(AutocastGuard, LinearRunsInBf16WithFp32ParameterGradients) {
  const at::Tensor x = at::randn({4, 8});
  const at::Tensor w = at::randn({3, 8}).requires_grad_(), b = at::randn({3}).requires_grad_();
  at::Tensor y;
  {
    parallel::AutocastGuard autocast(parallel::autocast_dtype("bf16"));
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

TEST(AutocastGuard, Fp32IsNoAutocastAndNestedGuardsRestoreTheOuterOne) {
  EXPECT_FALSE(parallel::autocast_dtype("fp32").has_value());
  parallel::AutocastGuard outer(at::kBFloat16);
  {
    parallel::AutocastGuard none(parallel::autocast_dtype("fp32"));
    EXPECT_TRUE(at::autocast::is_cpu_enabled());
  }
  { parallel::AutocastGuard inner(at::kBFloat16); }
  EXPECT_TRUE(at::autocast::is_cpu_enabled());
  EXPECT_EQ(at::autocast::get_autocast_cpu_dtype(), at::kBFloat16);
}

// The same guard sets CUDA's autocast state (what a CUDA run's ops consult), and active_autocast() reads either.
TEST(AutocastGuard, SetsAndRestoresCudaAutocastTooAndActiveAutocastReadsIt) {
  const bool cuda_before = at::autocast::is_enabled();
  const at::ScalarType cuda_dtype_before = at::autocast::get_autocast_gpu_dtype();
  EXPECT_FALSE(parallel::active_autocast().has_value());
  {
    parallel::AutocastGuard guard(at::kBFloat16);
    EXPECT_TRUE(at::autocast::is_enabled());
    EXPECT_EQ(at::autocast::get_autocast_gpu_dtype(), at::kBFloat16);
    EXPECT_EQ(parallel::active_autocast(), std::optional<at::ScalarType>(at::kBFloat16));
    at::autocast::set_cpu_enabled(false);  // a CUDA-only autocast region, as a CUDA checkpoint replay records it
    EXPECT_EQ(parallel::active_autocast(), std::optional<at::ScalarType>(at::kBFloat16));
    at::autocast::set_cpu_enabled(true);
  }
  EXPECT_EQ(at::autocast::is_enabled(), cuda_before);
  EXPECT_EQ(at::autocast::get_autocast_gpu_dtype(), cuda_dtype_before);
  EXPECT_FALSE(parallel::active_autocast().has_value());
}

// fp16: CPU autocast stays off (LibTorch 1.13's refuses float16) and CUDA autocasts to float16, the mark the built-in
// projections read on the CPU; active_autocast() says float16, so a checkpointed block recomputes under the same
// state; all restored on exit.
TEST(AutocastGuard, Fp16LeavesCpuAutocastOffAndAutocastsCudaToFloat16) {
  const bool cuda_before = at::autocast::is_enabled();
  ASSERT_EQ(parallel::autocast_dtype("fp16"), std::optional<at::ScalarType>(at::kHalf));
  {
    parallel::AutocastGuard guard(parallel::autocast_dtype("fp16"));
    EXPECT_FALSE(at::autocast::is_cpu_enabled());
    EXPECT_TRUE(at::autocast::is_enabled());
    EXPECT_EQ(at::autocast::get_autocast_gpu_dtype(), at::kHalf);
    EXPECT_EQ(parallel::active_autocast(), std::optional<at::ScalarType>(at::kHalf));
    const at::Tensor x = at::randn({2, 3}), w = at::randn({4, 3});
    EXPECT_EQ(at::linear(x, w).scalar_type(), at::kFloat) << "CPU ops run as outside autocast";
  }
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
  EXPECT_EQ(at::autocast::is_enabled(), cuda_before);
}

TEST(AutocastGuard, AnUnknownPrecisionIsAConfigErrorNamingTheKey) {
  for (const char* value : {"fp4"}) {
    try {
      parallel::autocast_dtype(value);
      FAIL() << value;
    } catch (const sdk::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("[train] mixed_precision"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kforge::test
