// blocks(): one ModelBlock per layer in order; every non-root parameter in exactly one block.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "model_builder.h"

namespace kforge::test::models {
namespace {

void check_blocks(const sdk::Model& model, int64_t n_layers, const std::set<std::string>& expected_root) {
  const auto blocks = model.blocks();
  ASSERT_EQ(static_cast<int64_t>(blocks.size()), n_layers);
  std::map<std::string, int> seen;
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(blocks[i].name, "layers." + std::to_string(i));
    EXPECT_FALSE(blocks[i].params.empty());
    for (const auto& p : blocks[i].params) {
      EXPECT_EQ(p.rfind(blocks[i].name + ".", 0), 0u) << p << " is not under " << blocks[i].name;
      ++seen[p];
    }
  }
  std::set<std::string> root;
  for (const auto& p : model.named_parameters()) {
    const int n = seen.count(p.key()) ? seen[p.key()] : 0;
    if (n == 0) root.insert(p.key());
    EXPECT_LE(n, 1) << p.key() << " listed in " << n << " blocks";
    seen.erase(p.key());
  }
  EXPECT_TRUE(seen.empty()) << "block lists a name that is not a parameter: " << seen.begin()->first;
  EXPECT_EQ(root, expected_root);
}

TEST(ModelBlocks, EveryNonRootParameterInExactlyOneBlock) {
  auto model = build_model("[model]\ndim = 32\nn_layers = 3\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 20\nqk_norm = true\n");
  check_blocks(*model, 3, {"token_embedding.embedding.weight", "norm.weight", "output_head.proj.weight"});
  auto tied = build_model("[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nvocab_size = 20\ntie_embeddings = true\n"
                          "norm_type = \"layernorm\"\nactivation = \"gelu\"\n");
  check_blocks(*tied, 2, {"token_embedding.embedding.weight", "norm.weight", "norm.bias"});
}

TEST(ModelBlocks, ParameterNamesAreKempnerForgeFqns) {
  auto model = build_model("[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 20\nqk_norm = true\n");
  std::vector<std::string> expected = {"token_embedding.embedding.weight"};
  for (int i = 0; i < 2; ++i) {
    const std::string l = "layers." + std::to_string(i) + ".";
    for (const char* n : {"attention_norm.weight", "attention.q_proj.weight", "attention.k_proj.weight",
                          "attention.v_proj.weight", "attention.o_proj.weight", "attention.q_norm.weight",
                          "attention.k_norm.weight", "mlp_norm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
                          "mlp.down_proj.weight"}) {
      expected.push_back(l + n);
    }
  }
  expected.push_back("norm.weight");
  expected.push_back("output_head.proj.weight");
  std::vector<std::string> actual;
  for (const auto& p : model->named_parameters()) actual.push_back(p.key());
  EXPECT_EQ(actual, expected);  // names and KempnerForge's registration order

  auto gelu = build_model("[model]\ndim = 32\nn_layers = 1\nn_heads = 4\nvocab_size = 20\nactivation = \"gelu\"\n");
  auto params = gelu->named_parameters();
  EXPECT_TRUE(params.contains("layers.0.mlp.up_proj.weight"));
  EXPECT_TRUE(params.contains("layers.0.mlp.down_proj.weight"));
  EXPECT_FALSE(params.contains("layers.0.mlp.gate_proj.weight"));
  EXPECT_FALSE(params.contains("layers.0.attention.q_norm.weight"));
}

}  // namespace
}  // namespace kforge::test::models
