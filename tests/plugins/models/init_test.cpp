// Weight init: N(0, init_std) for >= 2-D weights, init_std / sqrt(2 n_layers) for o_proj / down_proj,
// norm weights 1 (LayerNorm bias 0), drawn from the host-seeded global torch RNG.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <cmath>

#include "model_builder.h"

namespace kforge::test::models {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(ModelInit, StdAndResidualScaling) {
  torch::manual_seed(7);
  // 8 layers: residual std = 0.02 / 4 = 0.005. Every weight matrix has >= 65k samples, so the sample
  // std is within ~0.6% (1 sigma); we allow 3%.
  auto model = build_model("[model]\ndim = 256\nn_layers = 8\nn_heads = 8\nn_kv_heads = 4\nvocab_size = 1024\n"
                           "qk_norm = true\n");
  const double base = 0.02, residual = 0.02 / std::sqrt(16.0);
  int residual_seen = 0, plain_seen = 0, ones_seen = 0;
  for (const auto& p : model->named_parameters()) {
    SCOPED_TRACE(p.key());
    const at::Tensor w = p.value().detach().to(at::kDouble);
    if (w.dim() == 1) {
      EXPECT_TRUE(at::equal(w, at::ones_like(w)));  // norm weights start at 1
      ++ones_seen;
      continue;
    }
    const bool is_residual = ends_with(p.key(), "o_proj.weight") || ends_with(p.key(), "down_proj.weight");
    const double expected = is_residual ? residual : base;
    EXPECT_NEAR(w.std().item<double>(), expected, 0.03 * expected);
    EXPECT_NEAR(w.mean().item<double>(), 0.0, 5.0 * expected / std::sqrt(static_cast<double>(w.numel())));
    // Gaussian, not uniform: ~4.55% of samples beyond 2 sigma (uniform of that std: 0%).
    const double tail = (w.abs() > 2.0 * expected).to(at::kDouble).mean().item<double>();
    EXPECT_NEAR(tail, 0.0455, 0.01);
    (is_residual ? residual_seen : plain_seen)++;
  }
  EXPECT_EQ(residual_seen, 16);        // o_proj + down_proj per layer
  EXPECT_EQ(plain_seen, 8 * 5 + 2);    // q,k,v,gate,up per layer + embedding + head
  EXPECT_EQ(ones_seen, 8 * 4 + 1);     // attention_norm, mlp_norm, q_norm, k_norm per layer + final norm
}

TEST(ModelInit, InitStdKeyIsUsed) {
  torch::manual_seed(3);
  auto model = build_model("[model]\ndim = 256\nn_layers = 2\nn_heads = 4\nvocab_size = 512\ninit_std = 0.05\n");
  auto params = model->named_parameters();
  EXPECT_NEAR(params["layers.0.attention.q_proj.weight"].std().item<double>(), 0.05, 0.0015);
  EXPECT_NEAR(params["layers.1.mlp.down_proj.weight"].std().item<double>(), 0.05 / 2.0, 0.00075);
  EXPECT_NEAR(params["token_embedding.embedding.weight"].std().item<double>(), 0.05, 0.0015);
}

TEST(ModelInit, LayerNormStartsAsIdentityAffine) {
  auto model = build_model("[model]\ndim = 64\nn_layers = 1\nn_heads = 4\nvocab_size = 32\nnorm_type = \"layernorm\"\n");
  auto params = model->named_parameters();
  for (const char* n : {"layers.0.attention_norm", "layers.0.mlp_norm", "norm"}) {
    SCOPED_TRACE(n);
    EXPECT_TRUE(at::equal(params[std::string(n) + ".weight"], at::ones({64})));
    EXPECT_TRUE(at::equal(params[std::string(n) + ".bias"], at::zeros({64})));
  }
}

TEST(ModelInit, UsesTheGlobalTorchRng) {
  const std::string toml = "[model]\ndim = 32\nn_layers = 1\nn_heads = 2\nvocab_size = 16\n";
  torch::manual_seed(42);
  auto a = build_model(toml);
  torch::manual_seed(42);
  auto b = build_model(toml);
  torch::manual_seed(43);
  auto c = build_model(toml);
  auto pa = a->named_parameters(), pb = b->named_parameters(), pc = c->named_parameters();
  for (const auto& p : pa) {
    SCOPED_TRACE(p.key());
    EXPECT_TRUE(at::equal(p.value(), pb[p.key()]));
    if (p.value().dim() >= 2) EXPECT_FALSE(at::equal(p.value(), pc[p.key()]));
  }
}

}  // namespace
}  // namespace kforge::test::models
