// [model] fused_kernels: the model with the fused RMSNorm, SwiGLU and causal softmax equals the one
// built from the composite ATen ops, in value and in every parameter's gradient.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "model_builder.h"

namespace kforge::test::models {
namespace {

/// Logits of the same initialisation with fused_kernels on and off, and max |gradient difference|
/// relative to each gradient's largest entry, for a logsumexp objective.
struct Comparison {
  double logits, gradient;
};

Comparison compare(const std::string& section, bool bf16_autocast) {
  const std::string base =
      "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 97\n"
      "init_std = 0.1\nqk_norm = true\n" +
      section + "fused_kernels = ";
  torch::manual_seed(17);
  auto fused = build_model(base + "true\n");
  torch::manual_seed(17);
  auto plain = build_model(base + "false\n");
  const at::Tensor tokens = at::randint(0, 97, {2, 150}, at::kLong);  // two query blocks
  at::autocast::set_cpu_enabled(bf16_autocast);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  const at::Tensor a = fused->forward(tokens).to(at::kFloat), b = plain->forward(tokens).to(at::kFloat);
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  a.logsumexp(-1).sum().backward();
  b.logsumexp(-1).sum().backward();
  Comparison out{(a - b).abs().max().item<double>() / b.abs().max().item<double>(), 0.0};
  auto plain_params = plain->named_parameters();
  for (const auto& p : fused->named_parameters()) {
    const at::Tensor want = plain_params[p.key()].grad();
    out.gradient =
        std::max(out.gradient, (p.value().grad() - want).abs().max().item<double>() / want.abs().max().item<double>());
  }
  std::printf("[ fused vs composite: logits %.3g, gradients %.3g (relative) ]\n", out.logits, out.gradient);
  return out;
}

TEST(FusedKernels, Float32ModelMatchesTheCompositeOps) {
  // "math" runs the explicit attention, and so the causal softmax, in float32 too.
  const Comparison c = compare("sdpa_backend = \"math\"\n", false);
  EXPECT_GT(c.gradient, 0.0) << "the switch changed nothing: the fused kernels did not run";
  EXPECT_LE(c.logits, 1e-5);
  EXPECT_LE(c.gradient, 1e-5);
}

TEST(FusedKernels, BFloat16AutocastModelMatchesTheCompositeOpsToBFloat16Precision) {
  const Comparison c = compare("", true);
  EXPECT_GT(c.gradient, 0.0) << "the switch changed nothing: the fused kernels did not run";
  EXPECT_LE(c.logits, 2e-2);
  EXPECT_LE(c.gradient, 3e-2);
}

}  // namespace
}  // namespace kforge::test::models
