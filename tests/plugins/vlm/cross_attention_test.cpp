// The cross-attention strategy ([vlm] arch = "cross_attention") built through the registry with a siglip2 tower, an
// mlp_2layer adapter and the transformer: its logits and every parameter's gradient match
// tests/oracles/vlm_cross_attention.py (float64) with grouped-query cross-attention blocks; a new model ignores the
// images (zero-initialised outputs) and keeps the text model's positions; cached decoding gives the forward's logits;
// the blocks carry KempnerForge's names and stay out of blocks(); the settings that place no block or do not divide are
// refused with the key named.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "strategy_oracle.h"
#include "support/component_host.h"
#include "support/expect_text.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "support/tiny_tower.h"

namespace kforge::test {
namespace {

// The strategy over the shared tiny config (two text blocks of dim 16), with the [vlm] lines `vlm`, and the plugins
// it came from (declared first: destroyed after it).
struct CrossAttentionModel {
  std::unique_ptr<ComponentHost> host;
  std::shared_ptr<sdk::VisionLanguageModel> vlm;
  sdk::VisionLanguageModel* operator->() const { return vlm.get(); }
  sdk::VisionLanguageModel& operator*() const { return *vlm; }
};

CrossAttentionModel build_cross_attention(const std::string& vlm) {
  auto host = std::make_unique<ComponentHost>(strategy_toml("cross_attention", "", vlm));
  auto model = build_strategy(*host).vlm;
  return {std::move(host), std::move(model)};
}

// Gives the cross-attention blocks' zero-initialised outputs weights, so the images reach the logits.
void wake_cross_attention(torch::nn::Module& vlm) {
  at::NoGradGuard no_grad;
  for (auto& p : vlm.named_parameters()) {
    if (p.key().find("cross_attention_layers") != std::string::npos && p.value().dim() == 2) p.value().normal_(0, 0.3);
  }
}

TEST(CrossAttention, ANewModelIgnoresTheImagesAndKeepsTheTextPositions) {
  torch::manual_seed(3);
  const auto vlm = build_cross_attention("cross_attention_every_n_layers = 1\n");
  EXPECT_EQ(vlm->max_seq_len(), 32) << "the image tokens take no position";
  EXPECT_EQ(vlm->visual_tokens(), 4);
  const at::Tensor tokens = at::randint(0, 23, {2, 6}, at::kLong);
  vlm->set_images(at::rand({2, 3, 8, 8}));
  const at::Tensor first = vlm->forward(tokens).detach();
  vlm->set_images(at::rand({2, 3, 8, 8}));
  EXPECT_TRUE(at::equal(vlm->forward(tokens).detach(), first)) << "o_proj and down_proj start at zero";
  wake_cross_attention(*vlm);
  EXPECT_FALSE(at::allclose(vlm->forward(tokens).detach(), first));
}

TEST(CrossAttention, LogitsAndGradientsMatchTheReference) {
  torch::manual_seed(11);
  // 8 cross-attention heads over 2 key/value heads, after each of the 2 text blocks.
  const ComponentHost h(strategy_toml(
      "cross_attention", "",
      "cross_attention_every_n_layers = 1\ncross_attention_n_heads = 8\ncross_attention_n_kv_heads = 2\n"));
  const BuiltStrategy b = build_strategy(h);
  randomise_stack(*b.vlm);
  const int compared = expect_matches_oracle("vlm_cross_attention.py", *b.vlm, h.job.view("model"),
                                             R"("cross_attention": {"every": 1, "n_heads": 8, "n_kv_heads": 2})");
  int cross = 0;
  for (const auto& p : b.vlm->named_parameters()) cross += p.key().find("cross_attention_layers") != std::string::npos;
  EXPECT_EQ(cross, 2 * 9) << "two blocks of two norms, four projections and three MLP matrices";
  EXPECT_GT(compared, 40);
}

TEST(CrossAttention, CachedDecodingMatchesTheForward) {
  torch::manual_seed(6);
  const auto vlm = build_cross_attention("cross_attention_every_n_layers = 1\n");
  wake_cross_attention(*vlm);
  const at::Tensor tokens = at::randint(0, 23, {2, 6}, at::kLong);
  vlm->set_images(at::rand({2, 3, 8, 8}));
  const at::Tensor whole = vlm->forward(tokens).detach();
  at::NoGradGuard no_grad;
  auto state = vlm->start_decoding(2, 6);
  std::vector<at::Tensor> pieces = {vlm->decode(tokens.narrow(1, 0, 3), *state)};
  for (int64_t t = 3; t < 6; ++t) pieces.push_back(vlm->decode(tokens.narrow(1, t, 1), *state));
  const at::Tensor cached = at::cat(pieces, 1);
  EXPECT_TRUE(at::allclose(cached, whole, 1e-5, 1e-5)) << (cached - whole).abs().max().item<double>();
}

TEST(CrossAttention, BlocksAreNamedAfterTheTextBlockTheyFollowAndStayOutOfTheHostsBlocks) {
  const auto vlm = build_cross_attention("cross_attention_every_n_layers = 2\n");
  std::set<std::string> names;
  for (const auto& p : vlm->named_parameters()) names.insert(p.key());
  EXPECT_EQ(names.count("transformer.cross_attention_layers.0.attention.k_proj.weight"), 1u);
  EXPECT_EQ(names.count("transformer.cross_attention_layers.0.mlp.down_proj.weight"), 1u);
  EXPECT_EQ(names.count("transformer.cross_attention_layers.1.attention_norm.weight"), 0u) << "2 layers / 2: one block";
  const std::vector<sdk::ModelBlock> blocks = vlm->blocks();
  ASSERT_EQ(blocks.size(), 2u);
  for (const sdk::ModelBlock& block : blocks) {
    for (const std::string& p : block.params) EXPECT_EQ(p.find("cross_attention"), std::string::npos) << p;
  }
  std::vector<size_t> seen;
  vlm->set_block_runner([&](size_t index, const at::Tensor& input, const sdk::Model::BlockFn& block) {
    seen.push_back(index);
    EXPECT_EQ(input.size(1), 6) << "the residual stream is the text alone";
    return block(input);
  });
  vlm->set_images(at::rand({1, 3, 8, 8}));
  vlm->forward(at::zeros({1, 6}, at::kLong));
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1}));
}

TEST(CrossAttention, RefusesSettingsThatPlaceNoBlockOrDoNotDivide) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"cross_attention_every_n_layers = 3\n",
       {"[vlm] cross_attention_every_n_layers = 3", "no cross-attention block", "[model] n_layers", "at most 2"}},
      {"cross_attention_every_n_layers = 1\ncross_attention_n_heads = 3\n",
       {"[vlm] cross_attention_n_heads = 3", "does not divide [model] dim = 16"}},
      {"cross_attention_every_n_layers = 1\ncross_attention_n_heads = 4\ncross_attention_n_kv_heads = 3\n",
       {"[vlm] cross_attention_n_kv_heads = 3", "does not divide the cross-attention heads (4)"}},
  };
  for (const auto& [vlm, needles] : cases)
    expect_has(build_refusal(strategy_toml("cross_attention", "", vlm)), needles);
}

}  // namespace
}  // namespace kforge::test
