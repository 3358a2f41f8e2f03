// [model] fused_kernels: the model with the fused RMSNorm, SwiGLU, RoPE and causal softmax equals the one
// built from the composite ATen ops in float32, and under bf16 autocast is as close to float64 as
// they are, in value and in every parameter's gradient.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "model_builder.h"

namespace kforge::test::models {
namespace {

const std::string kModel =
    "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 97\ninit_std = 0.1\nqk_norm = true\n";

// The same initialisation with fused_kernels on or off (`section` adds [model] keys).
std::shared_ptr<sdk::Model> model(bool fused, const std::string& section = "") {
  torch::manual_seed(17);
  return build_model(kModel + section + "fused_kernels = " + (fused ? "true\n" : "false\n"));
}

at::Tensor tokens() {
  torch::manual_seed(5);
  return at::randint(0, 97, {2, 150}, at::kLong);  // two query blocks
}

// Logits and every parameter's gradient of one forward/backward (logsumexp objective), in float64.
struct Pass {
  at::Tensor logits;
  std::map<std::string, at::Tensor> grads;
};

Pass run(sdk::Model& m, bool bf16_autocast) {
  at::autocast::set_cpu_enabled(bf16_autocast);
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  const at::Tensor logits = m.forward(tokens()).to(at::kDouble);
  at::autocast::set_cpu_enabled(false);
  at::autocast::clear_cache();
  logits.logsumexp(-1).sum().backward();
  Pass out{logits.detach(), {}};
  for (const auto& p : m.named_parameters()) out.grads[p.key()] = p.value().grad().to(at::kDouble);
  return out;
}

// max |got - want| / max |want|.
double max_error(const at::Tensor& got, const at::Tensor& want) {
  return (got - want).abs().max().item<double>() / want.abs().max().item<double>();
}

// ||got - want|| / ||want||: an error relative to the tensor's scale.
double norm_error(const at::Tensor& got, const at::Tensor& want) {
  return (got - want).norm().item<double>() / want.norm().item<double>();
}

TEST(FusedKernels, Float32ModelMatchesTheCompositeOps) {
  // "math" runs the explicit attention, and so the causal softmax, in float32 too.
  const std::string math = "sdpa_backend = \"math\"\n";
  const Pass fused = run(*model(true, math), false), composite = run(*model(false, math), false);
  EXPECT_LE(max_error(fused.logits, composite.logits), 1e-5);
  double largest = 0.0;
  for (const auto& [name, want] : composite.grads) {
    const double error = max_error(fused.grads.at(name), want);
    EXPECT_LE(error, 1e-5) << name;
    largest = std::max(largest, error);
  }
  EXPECT_GT(largest, 0.0) << "the switch changed nothing: the fused kernels did not run";
}

TEST(FusedKernels, BFloat16AutocastModelIsAsCloseToFloat64AsTheCompositeOps) {
  auto reference_model = model(false);
  reference_model->to(at::kDouble);
  const Pass reference = run(*reference_model, false);
  const Pass fused = run(*model(true), true), composite = run(*model(false), true);
  // Both paths run the same bf16 GEMMs on the same rounded inputs, whatever this CPU's bf16 support;
  // the fused kernels compute in float and round their output once where the composite ops round
  // after each op. So against float64 the fused path is as accurate as the composite, up to the
  // spread between two equally rounded computations (a factor 2) plus one bfloat16 rounding (2^-8).
  const double bf16_rounding = std::ldexp(1.0, -8);
  auto check = [&](const std::string& what, const at::Tensor& f, const at::Tensor& c, const at::Tensor& want) {
    const double fused_error = norm_error(f, want), composite_error = norm_error(c, want);
    std::printf("[ %s against float64: fused %.3g, composite %.3g ]\n", what.c_str(), fused_error, composite_error);
    EXPECT_LE(fused_error, 2 * composite_error + bf16_rounding) << what;
    EXPECT_GT(norm_error(f, c), 0.0) << what << ": the switch changed nothing: the fused kernels did not run";
  };
  check("logits", fused.logits, composite.logits, reference.logits);
  for (const auto& [name, want] : reference.grads) check(name, fused.grads.at(name), composite.grads.at(name), want);
}

}  // namespace
}  // namespace kforge::test::models
