// The fp16 projection of a [train] mixed_precision = "fp16" step on the CPU: it applies exactly under CUDA's float16
// autocast with CPU autocast off (the trainer's AutocastGuard), rounds operands and outputs to fp16 with fp32 sums
// (against a float64 product of the rounded operands), overflows past fp16's range in the forward and in both
// gradients, and `project` and the MLP take it.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <kforge/sdk/error.h>
#include <torch/torch.h>

#include <cmath>
#include <string>

#include "transformer/fp16_linear.h"
#include "transformer/linear.h"
#include "transformer/mlp.h"

namespace kforge::test {
namespace {

namespace models = kforge::builtin::models;

// The autocast state of an fp16 step: CUDA autocast to float16, CPU autocast off.
struct Fp16Step {
  Fp16Step() {
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kHalf);
  }
  ~Fp16Step() { at::autocast::set_enabled(false); }
};

// float64 of `t` rounded to fp16.
at::Tensor rounded(const at::Tensor& t) { return t.to(at::kHalf).to(at::kDouble); }

// Expects |got - exact| <= 2^-11 |exact| + 2 k 2^-24 magnitude elementwise: one rounding to fp16 (11 significant
// bits: unit roundoff 2^-11) of the exact product, after fp32 sums of k products (each partial sum rounded, unit
// roundoff 2^-24) whose absolute values add up to `magnitude`; and `got` holds fp16 values.
void expect_fp16_of(const at::Tensor& got, const at::Tensor& exact, const at::Tensor& magnitude, int64_t k,
                    const char* what) {
  ASSERT_EQ(got.sizes(), exact.sizes()) << what;
  EXPECT_EQ(got.scalar_type(), at::kFloat) << what;
  EXPECT_TRUE(at::equal(got, got.to(at::kHalf).to(at::kFloat))) << what << ": not all fp16 values";
  const at::Tensor bound = std::ldexp(1.0, -11) * exact.abs() + 2.0 * k * std::ldexp(1.0, -24) * magnitude;
  const at::Tensor excess = (got.to(at::kDouble) - exact).abs() - bound;
  EXPECT_LE(excess.max().item<double>(), 0.0) << what << ": beyond the bound by " << excess.max().item<double>();
}

TEST(Fp16Linear, AppliesOnlyInAnFp16Step) {
  const at::Tensor x = at::randn({2, 4}), w = at::randn({3, 4});
  EXPECT_FALSE(models::cpu_fp16_projections());
  EXPECT_FALSE(models::fp16_linear_applies(x, w));
  EXPECT_THROW(models::fp16_linear(x, w), sdk::Error);
  const Fp16Step step;
  EXPECT_TRUE(models::cpu_fp16_projections());
  EXPECT_TRUE(models::fp16_linear_applies(x, w));
  EXPECT_FALSE(models::fp16_linear_applies(x.to(at::kDouble), w));
  EXPECT_FALSE(models::fp16_linear_applies(at::randn({2, 3}), w));
  at::autocast::set_cpu_enabled(true);  // a bf16 step autocasts the CPU too: not fp16
  EXPECT_FALSE(models::cpu_fp16_projections());
  at::autocast::set_cpu_enabled(false);
}

TEST(Fp16Linear, EqualsTheRoundedOperandsProductWithFp16Gradients) {
  torch::manual_seed(7);
  const at::Tensor x0 = at::randn({3, 5, 40}), w0 = at::randn({24, 40}), dy = at::randn({3, 5, 24}) * 3;
  const at::Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
  at::Tensor y;
  {
    const Fp16Step step;
    y = models::project(x, w, models::LinearBackend::OneDnn);
  }
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_NE(y.grad_fn()->name().find("Fp16Linear"), std::string::npos) << y.grad_fn()->name();
  y.backward(dy);
  const at::Tensor xr = rounded(x0).reshape({-1, 40}), wr = rounded(w0), dyr = rounded(dy).reshape({-1, 24});
  expect_fp16_of(y.reshape({-1, 24}), xr.mm(wr.t()), xr.abs().mm(wr.abs().t()), 40, "output");
  expect_fp16_of(x.grad().reshape({-1, 40}), dyr.mm(wr), dyr.abs().mm(wr.abs()), 24, "input gradient");
  expect_fp16_of(w.grad(), dyr.t().mm(xr), dyr.abs().t().mm(xr.abs()), 15, "weight gradient");
}

TEST(Fp16Linear, OverflowsPastFp16sRangeAsAGpuGemmDoes) {
  const at::Tensor w = at::full({2, 4}, 2.0f).requires_grad_();
  const at::Tensor x = at::full({1, 4}, 10000.0f).requires_grad_();  // exact in fp16; 4 * 2 * 10^4 is not
  at::Tensor y;
  {
    const Fp16Step step;
    y = models::fp16_linear(x, w);
  }
  EXPECT_TRUE(at::isinf(y).all().item<bool>()) << y;
  const at::Tensor small_x = at::full({1, 4}, 1.0f).requires_grad_();
  {
    const Fp16Step step;
    y = models::fp16_linear(small_x, w);
  }
  y.backward(at::full({1, 2}, 20000.0f));  // dx = 2 * 2 * 2*10^4 and the gradient's own rounding pass fp16's max
  EXPECT_TRUE(at::isinf(small_x.grad()).all().item<bool>()) << small_x.grad();
  EXPECT_TRUE(at::isfinite(w.grad()).all().item<bool>()) << "dW = 2*10^4 x 1 fits";
}

TEST(Fp16Linear, TheMlpsProductsRoundToFp16) {
  torch::manual_seed(3);
  const models::FfnWeights weights{at::randn({8, 16}), at::randn({8, 16}), at::randn({16, 8})};
  const at::Tensor x = at::randn({2, 8});
  at::Tensor y;
  {
    const Fp16Step step;
    y = models::ffn_forward(x, weights, models::MlpActivation::SwiGLU, /*fused=*/false);
  }
  EXPECT_TRUE(at::equal(y, y.to(at::kHalf).to(at::kFloat))) << "the down projection's output is an fp16 value";
  EXPECT_FALSE(at::equal(y, models::ffn_forward(x, weights, models::MlpActivation::SwiGLU, false)));
}

}  // namespace
}  // namespace kforge::test
