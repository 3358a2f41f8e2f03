// flops_per_token: 6 * P_active + 12 * n_layers * dim * seq_len (KempnerForge §8.2, PaLM).
#include <gtest/gtest.h>

#include "model_builder.h"
#include "transformer/model_config.h"

namespace kforge::test::models {
namespace {

TEST(ModelFlops, BuiltModelMatchesHandFormula) {
  // dim 64, 8 heads (hd 8), 2 KV heads, 3 layers, vocab 128, ffn 256.
  auto model = build_model("[model]\ndim = 64\nn_layers = 3\nn_heads = 8\nn_kv_heads = 2\nvocab_size = 128\n");
  const double attn = 64.0 * 64 + 2.0 * 64 * 16 + 64.0 * 64;
  const double p_active = 3.0 * (attn + 3.0 * 64 * 256) + 128.0 * 64;  // embedding excluded, head included
  for (int64_t seq : {1, 128, 4096}) {
    EXPECT_DOUBLE_EQ(model->flops_per_token(seq), 6.0 * p_active + 12.0 * 3 * 64 * seq);
  }
}

TEST(ModelFlops, TiedHeadStillCostsItsMatmul) {
  const std::string base = "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 100\n";
  auto untied = build_model(base);
  auto tied = build_model(base + "tie_embeddings = true\n");
  EXPECT_DOUBLE_EQ(tied->flops_per_token(256), untied->flops_per_token(256));
  EXPECT_LT(tied->num_params_estimate(), untied->num_params_estimate());
}

TEST(ModelFlops, TwoMatrixMlpCountsTwoMatrices) {
  auto gelu = build_model("[model]\ndim = 64\nn_layers = 1\nn_heads = 4\nvocab_size = 100\nactivation = \"gelu\"\n");
  const double p_active = (4.0 * 64 * 64 + 2.0 * 64 * 256) + 100.0 * 64;
  EXPECT_DOUBLE_EQ(gelu->flops_per_token(32), 6.0 * p_active + 12.0 * 64 * 32);
}

TEST(ModelFlops, KempnerForgeReferenceValues) {
  // §8.2 at seq 4096, vocab 128256: 7B 51.47, 13B 95.17, 70B 449.22 GFLOP/token.
  auto cfg = [](int64_t dim, int64_t layers, int64_t heads, double mult, int64_t ffn) {
    kforge::builtin::models::ModelConfig c;
    c.dim = dim;
    c.n_layers = layers;
    c.n_heads = heads;
    c.n_kv_heads = 8;
    c.vocab_size = 128256;
    c.ffn_dim_multiplier = mult;
    c.ffn_hidden_dim = ffn;
    return c;
  };
  EXPECT_NEAR(cfg(4096, 32, 32, 1.3, 0).flops_per_token(4096) / 1e9, 51.47, 0.005);
  EXPECT_NEAR(cfg(5120, 40, 40, 1.3, 0).flops_per_token(4096) / 1e9, 95.17, 0.005);
  EXPECT_NEAR(cfg(8192, 80, 64, 1.0, 28672).flops_per_token(4096) / 1e9, 449.22, 0.005);
}

}  // namespace
}  // namespace kforge::test::models
