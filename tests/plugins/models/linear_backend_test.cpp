// [model] linear_backend: the oneDNN projection equals at::linear (and a float64 reference) in value
// and in both gradients, takes only what it supports, and the whole model honours the switch.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <kforge/sdk/error.h>
#include <torch/csrc/autograd/function.h>
#include <torch/utils.h>

#include <string>

#include "blas_gemm.h"
#include "linear.h"
#include "model_builder.h"
#include "support/binary_op_grads.h"

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
