// [train] mixed_precision = "fp8": the float8 rounding against the python3-torch oracle written from the OCP FP8
// specification (every code, every midpoint and its fp32 neighbourhood, saturation, underflow, +-0, NaN, random fp32
// patterns), Float8Linear's output and both gradients against the oracle within the fp32 summation bound, its
// independence from autocast, and the layers the model converts (KempnerForge's apply_float8 filter).
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <gtest/gtest.h>
#include <kforge/sdk/error.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "model_builder.h"
#include "parallel/precision.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "transformer/float8_cast.h"
#include "transformer/float8_linear.h"
#include "transformer/hardware_scaled_mm.h"

namespace kforge::test::models {
namespace {

using builtin::models::Float8Format;

class Float8Cast : public ::testing::TestWithParam<Float8Format> {};

TEST_P(Float8Cast, EqualsTheSpecificationOracleBitForBit) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the float8 oracle";
  const std::string format = GetParam() == Float8Format::E4M3 ? "e4m3" : "e5m2";
  const auto dir = temp_dir("float8_cast_" + format);
  std::string out;
  ASSERT_EQ(run_oracle("float8_reference.py", {"cast", dir.string(), format}, &out), 0) << out;
  const at::Tensor inputs = read_npy(dir / "inputs.npy");
  const at::Tensor expected = read_npy(dir / "expected.npy");
  const at::Tensor got = builtin::models::round_to_float8(inputs, GetParam());
  const at::Tensor nan = expected.isnan();
  EXPECT_TRUE(got.isnan().equal(nan)) << "NaN stays NaN, and nothing else becomes NaN";
  // Bit patterns, so that -0 and +0 differ.
  const at::Tensor differs = got.view(at::kInt).ne(expected.view(at::kInt)) & nan.logical_not();
  const int64_t wrong = differs.sum().item<int64_t>();
  if (wrong > 0) {
    const int64_t i = differs.nonzero()[0][0].item<int64_t>();
    ADD_FAILURE() << wrong << " of " << inputs.numel() << " inputs round differently; first: "
                  << inputs[i].item<float>() << " -> " << got[i].item<float>() << ", the oracle "
                  << expected[i].item<float>();
  }
  // The saturation the oracle's table implies, stated once more: the largest finite value.
  EXPECT_EQ(builtin::models::float8_max(GetParam()), expected.nan_to_num().abs().max().item<float>());
}

INSTANTIATE_TEST_SUITE_P(Formats, Float8Cast, ::testing::Values(Float8Format::E4M3, Float8Format::E5M2),
                         [](const ::testing::TestParamInfo<Float8Format>& info) {
                           return std::string(info.param == Float8Format::E4M3 ? "E4M3" : "E5M2");
                         });

// kforge's and the oracle's fp32 sums of the same exact float8 products may differ in order: each is within
// (k - 1) u sum|a b| of the exact sum (u = 2^-24), the unscaling multiply adds u of the result on each side, and the
// bf16 rounding after it moves each by at most half a bf16 ulp, so the two may land one bf16 ulp (<= 2^-7 |value|)
// apart besides.
void expect_within_sum_bound(const at::Tensor& got, const std::filesystem::path& dir, const std::string& name,
                             int64_t k) {
  const at::Tensor expected = read_npy(dir / ("out_" + name + ".npy")).to(at::kDouble);
  const at::Tensor magnitude = read_npy(dir / ("out_" + name + "_abs.npy"));
  ASSERT_EQ(got.sizes(), expected.sizes()) << name;
  const double u = std::ldexp(1.0, -24);
  const at::Tensor value = got.to(at::kDouble);
  const at::Tensor bound = (2.0 * static_cast<double>(k + 1) * u) * magnitude +
                           std::ldexp(1.0, -7) * at::maximum(value.abs(), expected.abs());
  const at::Tensor excess = (value - expected).abs() - bound;
  EXPECT_LE(excess.max().item<double>(), 0.0) << name << ": beyond the fp32 summation bound";
  std::printf("float8 linear %s: %lld of %lld elements equal the oracle's bit for bit\n", name.c_str(),
              static_cast<long long>(value.eq(expected).sum().item<int64_t>()),
              static_cast<long long>(value.numel()));
}

// On every device here: the CPU, and a GPU where there is one, whose float8 GEMMs (torch._scaled_mm, LibTorch 2.1 on,
// sizes multiples of 16) sum in fp32 too, except the output's, which asks for fast accumulation as torchao does: its
// precision is the GPU's, so a GPU's output is checked for its shape and dtype only.
TEST(Float8Linear, OutputAndBothGradientsMatchTheOracleOnEveryDeviceHere) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the float8 oracle";
  const int64_t m = 32, k = 48, n = 64;
  at::manual_seed(5);
  // Spread over many binades, so that subnormals, saturation-free scaling and ties all occur.
  const at::Tensor x = at::randn({m, k}) * at::exp2(at::randint(-12, 4, {m, k}).to(at::kFloat));
  const at::Tensor w = at::randn({n, k}) * 0.05f;
  const at::Tensor dy = at::randn({m, n}) * at::exp2(at::randint(-20, 2, {m, n}).to(at::kFloat));
  const auto dir = temp_dir("float8_linear");
  write_npy(dir / "x.npy", x);
  write_npy(dir / "w.npy", w);
  write_npy(dir / "dy.npy", dy);
  std::string out;
  ASSERT_EQ(run_oracle("float8_reference.py", {"linear", dir.string()}, &out), 0) << out;

  std::vector<c10::DeviceType> devices = {c10::kCPU};
  if (at::hasCUDA()) devices.push_back(c10::kCUDA);
  for (const c10::DeviceType device : devices) {
    SCOPED_TRACE(c10::DeviceTypeName(device));
    const at::Tensor xg = x.view({2, m / 2, k}).to(device).requires_grad_();
    const at::Tensor wg = w.to(device).requires_grad_();
    const at::Tensor y = builtin::models::float8_linear(xg, wg);
    EXPECT_EQ(y.scalar_type(), at::kBFloat16) << "torchao's out_dtype: the bf16 operands' dtype";
    y.backward(dy.view({2, m / 2, n}).to(at::kBFloat16).to(device));
    EXPECT_EQ(xg.grad().scalar_type(), at::kFloat);
    EXPECT_EQ(wg.grad().scalar_type(), at::kFloat) << "the master weight's gradient";
    if (device == c10::kCPU) {
      expect_within_sum_bound(y.reshape({m, n}), dir, "y", k);
    } else {
      EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{2, m / 2, n}));
    }
    expect_within_sum_bound(xg.grad().reshape({m, k}).cpu(), dir, "dx", n);
    expect_within_sum_bound(wg.grad().cpu(), dir, "dw", m);
  }
}

TEST(Float8Linear, TheGpuGemmTakesOnlyCudaTensorsInALibTorchWithFloat8) {
  const at::Tensor a = at::zeros({16, 32}), b = at::zeros({32, 16});
  EXPECT_FALSE(builtin::models::hardware_scaled_mm_applies(a, b)) << "CPU tensors take the fp32 product";
  EXPECT_FALSE(builtin::models::hardware_scaled_mm(a, b, Float8Format::E4M3, Float8Format::E4M3, at::ones({}),
                                                   at::ones({}), true)
                   .has_value());
}

TEST(Float8Linear, IgnoresAutocastAndIsDeterministic) {
  at::manual_seed(6);
  const at::Tensor x = at::randn({8, 32});
  const at::Tensor w = at::randn({16, 32});
  const at::Tensor plain = builtin::models::float8_linear(x, w);
  at::Tensor autocast;
  {
    const parallel::AutocastGuard guard(at::kBFloat16);
    autocast = builtin::models::float8_linear(x, w);
  }
  EXPECT_TRUE(plain.equal(autocast)) << "its fp32 products must not be autocast to bf16";
  EXPECT_TRUE(plain.equal(builtin::models::float8_linear(x, w))) << "the scales are recomputed, no state";
}

TEST(Float8Linear, RefusesIntegerOperands) {
  EXPECT_FALSE(builtin::models::float8_linear_applies(at::ones({2, 4}, at::kLong), at::ones({3, 4})));
  EXPECT_THROW(builtin::models::float8_linear(at::ones({2, 4}), at::ones({3, 5})), sdk::Error);
}

// KempnerForge's apply_float8 converts every nn.Linear except those under "experts", "shared_expert" and "router":
// here attention's 4 projections in both layers, layer 0's dense SwiGLU MLP (3) and the output head (1).
TEST(Float8Linear, TheModelConvertsAttentionDenseMlpsAndTheHeadNotExpertsOrRouter) {
  const std::string toml =
      "[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nvocab_size = 64\nmax_seq_len = 16\nnum_experts = 4\n"
      "moe_top_k = 2\nmoe_frequency = 2\nmoe_shared_experts = 1\n[train]\nmixed_precision = \"fp8\"\n";
  const auto model = build_model(toml);
  static std::atomic<int> calls{0};
  calls = 0;
  const at::CallbackHandle handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback([](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        if (std::string(fn.name()) == "kforge::float8_linear") ++calls;
        return nullptr;
      }));
  model->forward(at::randint(0, 64, {2, 8}));
  at::removeCallback(handle);
  EXPECT_EQ(calls.load(), 2 * 4 + 3 + 1);
}

}  // namespace
}  // namespace kforge::test::models
