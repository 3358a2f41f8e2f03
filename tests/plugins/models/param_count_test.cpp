// Parameter counts: the built model's real count vs num_params_estimate, KempnerForge's reference
// sizes, and the SwiGLU FFN width rule.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "model_builder.h"
#include "transformer/model_config.h"

namespace kforge::test::models {
namespace {

struct Shape {
  const char* label;
  std::string toml;
};

TEST(ModelParamCount, RealCountEqualsEstimateAcrossShapes) {
  const std::vector<Shape> shapes = {
      {"MHA", "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 100\n"},
      {"GQA", "[model]\ndim = 64\nn_layers = 3\nn_heads = 8\nn_kv_heads = 2\nvocab_size = 128\n"},
      {"MQA", "[model]\ndim = 96\nn_layers = 2\nn_heads = 6\nn_kv_heads = 1\nvocab_size = 50\n"},
      {"tied", "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 100\ntie_embeddings = true\n"},
      {"qk_norm", "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 100\nqk_norm = true\n"},
      {"layernorm+gelu", "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 100\nnorm_type = \"layernorm\"\n"
                         "activation = \"gelu\"\n"},
      {"relu+ffn_hidden_dim", "[model]\ndim = 64\nn_layers = 2\nn_heads = 2\nvocab_size = 70\nactivation = \"relu\"\n"
                              "ffn_hidden_dim = 100\n"},
      {"multiplier", "[model]\ndim = 128\nn_layers = 1\nn_heads = 4\nvocab_size = 64\nffn_dim_multiplier = 1.3\n"},
  };
  for (const auto& s : shapes) {
    SCOPED_TRACE(s.label);
    auto model = build_model(s.toml);
    EXPECT_EQ(count_params(*model), model->num_params_estimate());
  }
}

TEST(ModelParamCount, EstimateIsKempnerForgeFormulaForDefaultArchitecture) {
  // KempnerForge: L * (attn + 3 d ffn + 2 d) + V d + (tied ? 0 : V d) + d, written out by hand.
  auto model = build_model("[model]\ndim = 64\nn_layers = 3\nn_heads = 8\nn_kv_heads = 2\nvocab_size = 128\n");
  const int64_t d = 64, hd = 8, ffn = 256;  // int(4*64*2/3) = 170 -> 256
  const int64_t attn = d * 8 * hd + 2 * d * 2 * hd + 8 * hd * d;
  EXPECT_EQ(model->num_params_estimate(), 3 * (attn + 3 * d * ffn + 2 * d) + 128 * d + 128 * d + d);
  auto tied = build_model("[model]\ndim = 64\nn_layers = 3\nn_heads = 8\nn_kv_heads = 2\nvocab_size = 128\n"
                          "tie_embeddings = true\n");
  EXPECT_EQ(tied->num_params_estimate(), model->num_params_estimate() - 128 * d);
}

TEST(ModelParamCount, TiedEmbeddingIsOneParameterListedOnce) {
  auto model = build_model("[model]\ndim = 64\nn_layers = 1\nn_heads = 4\nvocab_size = 100\ntie_embeddings = true\n");
  int embedding = 0;
  for (const auto& p : model->named_parameters()) {
    EXPECT_NE(p.key(), "output_head.proj.weight");
    if (p.key() == "token_embedding.embedding.weight") ++embedding;
  }
  EXPECT_EQ(embedding, 1);
  // The head really uses the embedding: changing a row of it changes that vocab entry's logits.
  const at::Tensor tokens = at::zeros({1, 3}, at::kLong);
  const at::Tensor before = model->forward(tokens).detach().clone();
  {
    at::NoGradGuard g;
    model->named_parameters()["token_embedding.embedding.weight"][7].add_(1.0);
  }
  const at::Tensor after = model->forward(tokens).detach();
  EXPECT_GT((after.select(-1, 7) - before.select(-1, 7)).abs().max().item<double>(), 1e-3);
  EXPECT_TRUE(at::equal(after.narrow(-1, 8, 10), before.narrow(-1, 8, 10)));
}

TEST(ModelParamCount, DebugShapeBuiltHasKempnerForgeCount) {
  // dim 256 / 4 layers / 4 heads / vocab 32000: ffn 768,
  // 4 * (4 * 256^2 + 3 * 256 * 768 + 2 * 256) + 2 * 32000 * 256 + 256 = 19,794,176.
  auto model = build_model("[model]\ndim = 256\nn_layers = 4\nn_heads = 4\nvocab_size = 32000\n");
  EXPECT_EQ(count_params(*model), 19794176);
  EXPECT_EQ(model->num_params_estimate(), 19794176);
  EXPECT_EQ(model->named_parameters()["layers.0.mlp.gate_proj.weight"].sizes(), (at::IntArrayRef{768, 256}));
}

kforge::builtin::models::ModelConfig shape(int64_t dim, int64_t layers, int64_t heads, int64_t kv, int64_t vocab, double mult,
                                  int64_t ffn_hidden = 0) {
  kforge::builtin::models::ModelConfig c;
  c.dim = dim;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv;
  c.vocab_size = vocab;
  c.ffn_dim_multiplier = mult;
  c.ffn_hidden_dim = ffn_hidden;
  return c;
}

TEST(ModelParamCount, KempnerForgeReferenceSizesByEstimate) {
  // Not built (tens of GB): the estimate formula only. Reference: 8.03B, 14.84B, 70.55B.
  EXPECT_EQ(shape(4096, 32, 32, 8, 128256, 1.3).num_params(), 8030261248);
  EXPECT_EQ(shape(5120, 40, 40, 8, 128256, 1.3).num_params(), 14840386560);
  EXPECT_EQ(shape(8192, 80, 64, 8, 128256, 1.0, 28672).num_params(), 70553706496);
}

TEST(ModelFfnWidth, KempnerForgeRuleValues) {
  EXPECT_EQ(shape(256, 1, 4, 4, 10, 1.0).computed_ffn_hidden_dim(), 768);
  EXPECT_EQ(shape(4096, 1, 32, 32, 10, 1.3).computed_ffn_hidden_dim(), 14336);
  EXPECT_EQ(shape(5120, 1, 40, 40, 10, 1.3).computed_ffn_hidden_dim(), 17920);
  EXPECT_EQ(shape(6144, 1, 48, 48, 10, 1.3).computed_ffn_hidden_dim(), 21504);
  EXPECT_EQ(shape(2048, 1, 16, 16, 10, 1.3).computed_ffn_hidden_dim(), 7168);
  EXPECT_EQ(shape(4096, 1, 32, 32, 10, 1.0).computed_ffn_hidden_dim(), 11008);
  EXPECT_EQ(shape(64, 1, 4, 4, 10, 1.0, 100).computed_ffn_hidden_dim(), 100);  // explicit override
}

TEST(ModelFfnWidth, BuiltModelUsesRuleAndOverride) {
  auto rule = build_model("[model]\ndim = 128\nn_layers = 1\nn_heads = 4\nvocab_size = 64\nffn_dim_multiplier = 1.3\n");
  // int(4 * 128 * 2/3 * 1.3) = 443 -> 512
  EXPECT_EQ(rule->named_parameters()["layers.0.mlp.up_proj.weight"].sizes(), (at::IntArrayRef{512, 128}));
  auto fixed = build_model("[model]\ndim = 64\nn_layers = 1\nn_heads = 2\nvocab_size = 70\nffn_hidden_dim = 100\n");
  EXPECT_EQ(fixed->named_parameters()["layers.0.mlp.down_proj.weight"].sizes(), (at::IntArrayRef{64, 100}));
}

}  // namespace
}  // namespace kforge::test::models
