// [model] linear_backend: the oneDNN projection equals at::linear (and a float64 reference) in value
// and in both gradients (its weight gradient through oneDNN and through OpenBLAS alike), takes only what it supports,
// and the whole model honours the switch. Under bf16 autocast, the bf16 projection (fp32 GEMMs over bf16-rounded
// operands) equals a float64 product of the rounded operands within bf16's rounding, and oneDNN's native bf16 GEMM
// within twice that; `project` takes it on a CPU without bf16 instructions.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/function.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "model_builder.h"
#include "support/binary_op_grads.h"
#include "transformer/blas_gemm.h"
#include "transformer/linear.h"
#include "transformer/mlp.h"
#include "transformer/swiglu.h"
#include "transformer/weight_gradient_gemm.h"

namespace kforge::test::models {
namespace {

using kforge::builtin::models::LinearBackend;

void expect_close(const at::Tensor& a, const at::Tensor& b, const char* what) {
  ASSERT_EQ(a.sizes(), b.sizes()) << what;
  EXPECT_TRUE(at::allclose(a.to(at::kDouble), b.to(at::kDouble), 1e-5, 1e-5))
      << what << ": max difference " << (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

TEST(LinearBackend, OneDnnIsPresentInThisLibTorch) {
  // Debian's libtorch1.13 links libdnnl.so.2; without it every test below would only test at::linear.
  ASSERT_TRUE(kforge::builtin::models::onednn_gemm_available());
  EXPECT_EQ(kforge::builtin::models::resolve_linear_backend("auto"), LinearBackend::OneDnn);
  EXPECT_EQ(kforge::builtin::models::resolve_linear_backend("aten"), LinearBackend::Aten);
}

TEST(LinearBackend, OneDnnEqualsAtLinearAndAFloat64ReferenceWithGradients) {
  torch::manual_seed(3);
  struct Case {
    std::vector<int64_t> x_shape;
    int64_t out;
    bool transposed_input;
  };
  for (const Case& c :
       {Case{{3, 7, 40}, 24, false}, Case{{65, 33}, 130, false}, Case{{1, 1, 16}, 5, false}, Case{{9, 12}, 10, true}}) {
    SCOPED_TRACE(std::to_string(c.x_shape.front()) + " rows, out " + std::to_string(c.out));
    at::Tensor x = at::randn(c.x_shape);
    if (c.transposed_input) x = at::randn({c.x_shape[1], c.x_shape[0]}).t();  // a non-contiguous input
    const at::Tensor w = at::randn({c.out, x.size(-1)});
    std::vector<int64_t> y_shape = x.sizes().vec();
    y_shape.back() = c.out;
    const at::Tensor probe = at::randn(y_shape);
    const BinaryOpGrads fast =
        binary_op_grads([](auto& a, auto& b) { return kforge::builtin::models::onednn_linear(a, b); }, x, w, probe);
    const BinaryOpGrads aten = binary_op_grads([](auto& a, auto& b) { return at::linear(a, b); }, x, w, probe);
    const BinaryOpGrads exact = binary_op_grads([](auto& a, auto& b) { return at::linear(a, b); }, x.to(at::kDouble),
                                                w.to(at::kDouble), probe.to(at::kDouble));
    for (const auto& [name, ref] : {std::pair{"at::linear", &aten}, std::pair{"float64", &exact}}) {
      SCOPED_TRACE(name);
      expect_close(fast.out, ref->out, "output");
      expect_close(fast.da, ref->da, "input gradient");
      expect_close(fast.db, ref->db, "weight gradient");
    }
  }
}

// The weight gradient through either library (weight_gradient_gemm.h's table picks one per weight size on this CPU)
// is the float64 one within float32 summation's bound: each entry sums `rows` products, each partial sum rounded at
// most 2^-24 of the sum of magnitudes.
TEST(LinearBackend, TheWeightGradientIsTheSameThroughOneDnnAndOpenBlas) {
  using kforge::builtin::models::GemmLibrary;
  const auto entry = kforge::builtin::models::weight_gradient_entry();
  std::printf("[ table    ] %s with OpenBLAS kernels \"%s\": %s\n", kforge::builtin::models::cpu_vendor().c_str(),
              kforge::builtin::models::openblas_kernels().c_str(),
              entry ? ("OpenBLAS from " + std::to_string(entry->min_weight_elements) + " weight elements").c_str()
                    : "oneDNN for every weight gradient (no entry)");
  torch::manual_seed(4);
  const int64_t rows = 300, out = 130, in = 70;
  const at::Tensor x = at::randn({rows, in}), w = at::randn({out, in}), probe = at::randn({rows, out});
  const at::Tensor exact = probe.to(at::kDouble).t().mm(x.to(at::kDouble));
  const at::Tensor bound =
      std::ldexp(static_cast<double>(rows), -24) * probe.to(at::kDouble).abs().t().mm(x.to(at::kDouble).abs());
  for (const GemmLibrary library : {GemmLibrary::OneDnn, GemmLibrary::OpenBlas}) {
    SCOPED_TRACE(library == GemmLibrary::OneDnn ? "oneDNN" : "OpenBLAS");
    kforge::builtin::models::force_weight_gradient_library(library);
    EXPECT_EQ(kforge::builtin::models::weight_gradient_library(out, in), library);
    const BinaryOpGrads got =
        binary_op_grads([](auto& a, auto& b) { return kforge::builtin::models::onednn_linear(a, b); }, x, w, probe);
    EXPECT_LE(((got.db.to(at::kDouble) - exact).abs() / bound).max().item<double>(), 1.0);
  }
  kforge::builtin::models::force_weight_gradient_library(std::nullopt);
}

TEST(LinearBackend, OnlyTheNeededGradientIsComputed) {
  const at::Tensor w = at::randn({6, 4});
  const at::Tensor x = at::randn({5, 4}).requires_grad_(true);
  kforge::builtin::models::onednn_linear(x, w).sum().backward();  // frozen weight
  ASSERT_TRUE(x.grad().defined());
  expect_close(x.grad(), at::ones({5, 6}).mm(w), "input gradient");

  const at::Tensor w2 = at::randn({6, 4}).requires_grad_(true);
  const at::Tensor x2 = at::randn({5, 4});  // e.g. a frozen embedding's output
  kforge::builtin::models::onednn_linear(x2, w2).sum().backward();
  expect_close(w2.grad(), at::ones({6, 5}).mm(x2), "weight gradient");
}

TEST(LinearBackend, OnlyFloat32OutsideAutocastTakesTheOneDnnPath) {
  const at::Tensor w = at::randn({6, 4});
  EXPECT_TRUE(kforge::builtin::models::onednn_linear_applies(at::randn({2, 4}), w));
  EXPECT_FALSE(kforge::builtin::models::onednn_linear_applies(at::randn({2, 4}, at::kDouble), w.to(at::kDouble)));
  EXPECT_FALSE(kforge::builtin::models::onednn_linear_applies(at::randn({2, 4}).to(at::kBFloat16), w));
  EXPECT_FALSE(kforge::builtin::models::onednn_linear_applies(at::randn({2, 3}), w));
  EXPECT_THROW(kforge::builtin::models::onednn_linear(at::randn({2, 3}), w), sdk::Error);

  // Under bf16 autocast the projection must go through at::linear, which autocast turns into bf16.
  at::autocast::set_cpu_enabled(true);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  const bool applies = kforge::builtin::models::onednn_linear_applies(at::randn({2, 4}), w);
  const at::ScalarType out = kforge::builtin::models::project(at::randn({2, 4}), w, LinearBackend::OneDnn).scalar_type();
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  EXPECT_FALSE(applies);
  EXPECT_EQ(out, at::kBFloat16);
}

// CPU autocast to bf16 for the scope.
struct Bf16Autocast {
  Bf16Autocast() {
    at::autocast::set_cpu_enabled(true);
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  }
  ~Bf16Autocast() {
    at::autocast::set_cpu_enabled(false);
    at::autocast::clear_cache();
  }
};

// float64 of `t` rounded to bf16.
at::Tensor rounded(const at::Tensor& t) { return t.to(at::kBFloat16).to(at::kDouble); }

// Expects |got - reference| <= bf16_units * 2^-8 |exact| + 2 k 2^-24 magnitude elementwise: `bf16_units` roundings
// to bf16 (8 significant bits: unit roundoff 2^-8) of the exact result, after fp32 sums of k products in all (each
// partial sum rounded, unit roundoff 2^-24) whose absolute values add up to `magnitude`.
void expect_within_rounding(const at::Tensor& got, const at::Tensor& reference, const at::Tensor& exact,
                            const at::Tensor& magnitude, int64_t k, double bf16_units, const char* what) {
  ASSERT_EQ(got.sizes(), reference.sizes()) << what;
  const at::Tensor bound = bf16_units * std::ldexp(1.0, -8) * exact.abs() + 2.0 * k * std::ldexp(1.0, -24) * magnitude;
  const at::Tensor excess = (got.to(at::kDouble) - reference.to(at::kDouble)).abs() - bound;
  EXPECT_LE(excess.max().item<double>(), 0.0) << what << ": beyond the bound by " << excess.max().item<double>();
}

TEST(LinearBackend, Bf16ProjectionEqualsTheRoundedOperandsProductAndOneDnnsBf16Gemm) {
  torch::manual_seed(5);
  for (const auto& [x_shape, out] : {std::pair{std::vector<int64_t>{3, 7, 40}, int64_t{24}},
                                     std::pair{std::vector<int64_t>{65, 96}, int64_t{130}}}) {
    SCOPED_TRACE(std::to_string(x_shape.front()) + " rows, out " + std::to_string(out));
    const at::Tensor x0 = at::randn(x_shape), w0 = at::randn({out, x_shape.back()});
    std::vector<int64_t> y_shape = x0.sizes().vec();
    y_shape.back() = out;
    const at::Tensor dy = at::randn(y_shape).to(at::kBFloat16);  // the gradient reaching a bf16 output
    const at::Tensor x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
    at::Tensor y, native;
    {
      const Bf16Autocast autocast;
      y = kforge::builtin::models::bf16_linear(x, w);
      native = at::linear(x0, w0);
    }
    EXPECT_EQ(y.scalar_type(), at::kBFloat16);
    y.backward(dy);
    const int64_t k = x0.size(-1);
    const at::Tensor xr = rounded(x0).reshape({-1, k}), wr = rounded(w0), dyr = dy.to(at::kDouble).reshape({-1, out});
    const at::Tensor exact = xr.mm(wr.t()), magnitude = xr.abs().mm(wr.abs().t());
    expect_within_rounding(y.reshape({-1, out}), exact, exact, magnitude, k, 1, "output");
    // oneDNN's own bf16 GEMM rounds the same exact product once, in another summation order: both errors add up.
    expect_within_rounding(y.reshape({-1, out}), native.reshape({-1, out}), exact, magnitude, 2 * k, 2,
                           "output against oneDNN's bf16 GEMM");
    const at::Tensor dx = dyr.mm(wr), dw = dyr.t().mm(xr);
    expect_within_rounding(x.grad().reshape({-1, k}), dx, dx, dyr.abs().mm(wr.abs()), out, 1, "input gradient");
    // The weight gradient stays in fp32: no bf16 rounding at all.
    expect_within_rounding(w.grad(), dw, dw, dyr.abs().t().mm(xr.abs()), xr.size(0), 0, "weight gradient");
    EXPECT_EQ(x.grad().scalar_type(), at::kFloat);
    EXPECT_EQ(w.grad().scalar_type(), at::kFloat);
  }
}

// /proc/cpuinfo's flags of the first CPU.
std::string cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return "";
}

TEST(LinearBackend, UnderBf16AutocastTheBf16ProjectionRunsWhereTheCpuHasNoBf16Instructions) {
  const std::string flags = cpu_flags();
  ASSERT_FALSE(flags.empty()) << "no flags line in /proc/cpuinfo";
  const bool bf16_hardware = flags.find(" avx512_bf16 ") != std::string::npos;
  EXPECT_EQ(kforge::builtin::models::cpu_has_bf16_instructions(), bf16_hardware) << flags;
  const at::Tensor w = at::randn({6, 4}).requires_grad_(true);
  const Bf16Autocast autocast;
  EXPECT_TRUE(kforge::builtin::models::bf16_linear_applies(at::randn({2, 4}), w));
  EXPECT_TRUE(kforge::builtin::models::bf16_linear_applies(at::randn({2, 4}).to(at::kBFloat16), w));
  EXPECT_FALSE(kforge::builtin::models::bf16_linear_applies(at::randn({2, 4}), w.to(at::kBFloat16)));
  EXPECT_FALSE(kforge::builtin::models::bf16_linear_applies(at::randn({2, 3}), w));
  EXPECT_THROW(kforge::builtin::models::bf16_linear(at::randn({2, 3}), w), sdk::Error);
  const std::string node =
      kforge::builtin::models::project(at::randn({2, 4}), w, LinearBackend::OneDnn).grad_fn()->name();
  EXPECT_EQ(node.find("Bf16Linear") != std::string::npos, !bf16_hardware) << node;
  const std::string aten =
      kforge::builtin::models::project(at::randn({2, 4}), w, LinearBackend::Aten).grad_fn()->name();
  EXPECT_EQ(aten.find("Bf16Linear"), std::string::npos) << aten;
}

// An MoE expert's products ([in, out] weights) take the same path as the projections: exactly the composition of
// bf16_linear calls where the CPU has no bf16 instructions.
TEST(LinearBackend, ExpertProductsUnderBf16AutocastTakeTheBf16ProjectionToo) {
  namespace m = kforge::builtin::models;
  torch::manual_seed(7);
  const m::FfnWeights w{at::randn({8, 12}), at::randn({8, 12}), at::randn({12, 8})};
  const at::Tensor x = at::randn({5, 8});
  const Bf16Autocast autocast;
  const at::Tensor y = m::ffn_forward(x, w, m::MlpActivation::SwiGLU, /*fused=*/true, LinearBackend::OneDnn);
  if (m::cpu_has_bf16_instructions()) {
    EXPECT_TRUE(y.equal(m::ffn_forward(x, w, m::MlpActivation::SwiGLU, /*fused=*/true, LinearBackend::Aten)));
    return;
  }
  const at::Tensor h = m::swiglu(m::bf16_linear(x, w.gate.t()), m::bf16_linear(x, w.up.t()), /*fused=*/true);
  EXPECT_TRUE(y.equal(m::bf16_linear(h, w.down.t())));
}

TEST(LinearBackend, ModelOutputsAndGradientsAgreeBetweenBackends) {
  const std::string base =
      "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 97\n"
      "init_std = 0.1\nlinear_backend = ";
  torch::manual_seed(11);
  auto onednn = build_model(base + "\"onednn\"\n");
  torch::manual_seed(11);
  auto aten = build_model(base + "\"aten\"\n");
  const at::Tensor tokens = at::randint(0, 97, {2, 13}, at::kLong);
  const at::Tensor fast = onednn->forward(tokens);
  const at::Tensor plain = aten->forward(tokens);
  // The switch takes effect: the head's output comes from the oneDNN node, not from at::linear's.
  EXPECT_NE(fast.grad_fn()->name().find("OneDnnLinear"), std::string::npos) << fast.grad_fn()->name();
  EXPECT_EQ(plain.grad_fn()->name().find("OneDnnLinear"), std::string::npos) << plain.grad_fn()->name();
  expect_close(fast, plain, "logits");
  fast.logsumexp(-1).sum().backward();
  plain.logsumexp(-1).sum().backward();
  auto plain_params = aten->named_parameters();
  for (const auto& p : onednn->named_parameters()) {
    SCOPED_TRACE(p.key());
    expect_close(p.value().grad(), plain_params[p.key()].grad(), "gradient");
  }
}

TEST(LinearBackend, AnUnknownBackendIsAConfigErrorNamingTheKey) {
  try {
    build_model("[model]\ndim = 32\nn_layers = 1\nn_heads = 2\nvocab_size = 20\nlinear_backend = \"blas\"\n");
    FAIL() << "expected a ConfigError";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("linear_backend"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge::test::models
