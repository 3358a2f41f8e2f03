// The joint decoder ([vlm] arch = "joint_decoder") built through the registry with a siglip2 tower, an mlp_2layer
// adapter and the transformer: its logits and every parameter's gradient match tests/oracles/joint_decoder.py (the
// python3-torch tower, adapter and decoder references composed, float64) and equal the text model's forward_prefixed
// over the adapter's image tokens; cached decoding gives the same logits; its parameters and blocks carry KempnerForge's
// VLMWrapper names; the host's block seam sees the text blocks; a frozen tower gets no gradient while the adapter and
// text model do; bad inputs are refused.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "support/component_host.h"
#include "support/expect_text.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "support/tiny_tower.h"

namespace kforge::test {
namespace {

std::string vlm_toml(int64_t max_seq_len) {
  return "[model]\ndim = 16\nn_layers = 2\nn_heads = 2\nvocab_size = 23\nmax_seq_len = " + std::to_string(max_seq_len) +
         "\ninit_std = 0.1\n[vision_encoder]\ntype = \"siglip2\"\npath = \"" + tiny_tower_dir() +
         "\"\n[adapter]\ntype = \"mlp_2layer\"\n[vlm]\narch = \"joint_decoder\"\nmax_text_len = 6\n";
}

// The parts, kept by the test, and the strategy composing them.
struct Built {
  std::shared_ptr<sdk::VisionEncoder> encoder;
  std::shared_ptr<sdk::Adapter> adapter;
  std::shared_ptr<sdk::Model> text;
  std::shared_ptr<sdk::VisionLanguageModel> vlm;
};

// The parts as the host builds them: the adapter from the tower's width to [model] dim.
Built parts(const ComponentHost& h) {
  Built b;
  b.encoder = h.components.vision_encoder();
  b.text = h.components.model();
  b.adapter = h.components.adapter({b.encoder->feature_dim(), h.job.view("model").get_int("dim")});
  return b;
}

Built build(const ComponentHost& h) {
  Built b = parts(h);
  b.vlm = h.components.vision_language_model({b.encoder, b.adapter, b.text});
  return b;
}

TEST(JointDecoder, LogitsAreTheTextModelsOverTheAdaptersImageTokens) {
  torch::manual_seed(5);
  const ComponentHost h(vlm_toml(32));
  const Built b = build(h);
  EXPECT_EQ(b.vlm->visual_tokens(), 4);
  EXPECT_EQ(b.vlm->max_seq_len(), 28);
  const at::Tensor pixels = at::rand({2, 3, 8, 8}), tokens = at::randint(0, 23, {2, 6}, at::kLong);
  b.vlm->set_images(pixels);
  const at::Tensor logits = b.vlm->forward(tokens);
  ASSERT_EQ(logits.sizes(), (at::IntArrayRef{2, 6, 23}));
  const at::Tensor by_hand = b.text->forward_prefixed(b.adapter->forward(b.encoder->forward(pixels)), tokens);
  EXPECT_TRUE(at::equal(logits.detach(), by_hand.detach()));
  // The images matter: other pixels, other logits.
  b.vlm->set_images(at::rand({2, 3, 8, 8}));
  EXPECT_FALSE(at::allclose(b.vlm->forward(tokens).detach(), logits.detach()));
}

// The fp32 model against the float64 reference, as tests/plugins/models/llama_oracle_test.cpp.
void expect_close(const at::Tensor& actual, const at::Tensor& expected, const std::string& what) {
  expect_within(actual, expected, what, 1e-5, 1e-4);
}

TEST(JointDecoder, LogitsAndGradientsMatchTheComposedReference) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  torch::manual_seed(7);
  const ComponentHost h(vlm_toml(32));
  const Built b = build(h);
  const auto dir = temp_dir("oracle_joint_decoder");
  const at::Tensor pixels = at::rand({2, 3, 8, 8}) * 2 - 1;
  const at::Tensor tokens = at::randint(0, 23, {2, 6}, at::kLong), targets = at::randint(0, 23, {2, 6}, at::kLong);
  write_npy(dir / "pixels.npy", pixels);
  write_npy(dir / "tokens.npy", tokens);
  write_npy(dir / "targets.npy", targets);
  for (const auto& p : b.vlm->named_parameters()) write_npy(dir / (p.key() + ".npy"), p.value());
  std::ofstream(dir / "config.json") << R"({"tower": "siglip2",
      "vision": {"hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1, "num_attention_heads": 2,
                 "image_size": 8, "patch_size": 4},
      "adapter": {"type": "mlp_2layer", "activation": "gelu", "hidden_dim": 0, "out_dim": 16},
      "model": {"dim": 16, "n_layers": 2, "n_heads": 2, "n_kv_heads": 2, "norm_type": "rmsnorm", "norm_eps": 1e-5,
                "activation": "silu", "rope_theta": 10000.0, "tie_embeddings": false, "qk_norm": false}})";
  b.vlm->set_images(pixels);
  const at::Tensor logits = b.vlm->forward(tokens);
  const at::Tensor loss = at::cross_entropy_loss(logits.reshape({12, 23}), targets.reshape({-1}));
  loss.backward();

  std::string out;
  ASSERT_EQ(run_oracle("joint_decoder.py", {dir.string()}, &out), 0) << out;
  expect_close(logits.detach(), read_npy(dir / "logits.npy"), "logits");
  expect_close(loss.detach().reshape({1}), read_npy(dir / "loss.npy"), "loss");
  int compared = 0;
  for (const auto& p : b.vlm->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    expect_close(p.value().grad(), read_npy(dir / ("grad." + p.key() + ".npy")), "grad of " + p.key());
    ++compared;
  }
  EXPECT_GT(compared, 30);
  std::filesystem::remove_all(dir);
}

TEST(JointDecoder, CachedDecodingRunsTheImagesFirstAndMatchesTheForward) {
  torch::manual_seed(6);
  const ComponentHost h(vlm_toml(32));
  const Built b = build(h);
  const at::Tensor tokens = at::randint(0, 23, {2, 6}, at::kLong);
  b.vlm->set_images(at::rand({2, 3, 8, 8}));
  const at::Tensor whole = b.vlm->forward(tokens).detach();
  at::NoGradGuard no_grad;
  auto state = b.vlm->start_decoding(2, 6);
  std::vector<at::Tensor> pieces = {b.vlm->decode(tokens.narrow(1, 0, 3), *state)};
  for (int64_t t = 3; t < 6; ++t) pieces.push_back(b.vlm->decode(tokens.narrow(1, t, 1), *state));
  const at::Tensor cached = at::cat(pieces, 1);
  EXPECT_TRUE(at::allclose(cached, whole, 1e-5, 1e-5)) << (cached - whole).abs().max().item<double>();
}

TEST(JointDecoder, ParametersAndBlocksCarryTheWrapperNames) {
  const ComponentHost h(vlm_toml(32));
  const Built b = build(h);
  std::set<std::string> names;
  for (const auto& p : b.vlm->named_parameters()) names.insert(p.key());
  size_t parts = 0;
  for (const auto& [prefix, module] : std::vector<std::pair<std::string, torch::nn::Module*>>{
           {"vision_encoder.", b.encoder.get()}, {"adapter.", b.adapter.get()}, {"transformer.", b.text.get()}}) {
    for (const auto& p : module->named_parameters()) {
      EXPECT_EQ(names.count(prefix + p.key()), 1u) << prefix + p.key();
      ++parts;
    }
  }
  EXPECT_EQ(names.size(), parts);
  EXPECT_EQ(names.count("vision_encoder.vision_model.embeddings.patch_embedding.weight"), 1u);
  const std::vector<sdk::ModelBlock> blocks = b.vlm->blocks();
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[1].name, "transformer.layers.1");
  EXPECT_EQ(blocks[1].checkpointable, b.text->blocks()[1].checkpointable);
  for (const sdk::ModelBlock& block : blocks) {
    for (const std::string& p : block.params) EXPECT_EQ(names.count(p), 1u) << p;
  }
}

TEST(JointDecoder, TheHostsBlockSeamRunsEveryTextBlockInOrder) {
  const ComponentHost h(vlm_toml(32));
  const Built b = build(h);
  std::vector<size_t> seen;
  b.vlm->set_block_runner([&](size_t index, const at::Tensor& input, const sdk::Model::BlockFn& block) {
    seen.push_back(index);
    EXPECT_EQ(input.size(1), 4 + 6) << "a block runs over the image and text positions";
    return block(input);
  });
  b.vlm->set_images(at::rand({1, 3, 8, 8}));
  b.vlm->forward(at::zeros({1, 6}, at::kLong));
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1}));
}

TEST(JointDecoder, AFrozenTowerGetsNoGradientAndTheRestDoes) {
  const ComponentHost h(vlm_toml(32));
  const Built b = build(h);
  const at::Tensor pixels = at::rand({2, 3, 8, 8}), tokens = at::randint(0, 23, {2, 6}, at::kLong);
  b.vlm->set_images(pixels);
  const at::Tensor trained = b.vlm->forward(tokens).detach();
  for (at::Tensor p : b.encoder->parameters()) p.requires_grad_(false);
  const at::Tensor logits = b.vlm->forward(tokens);
  EXPECT_TRUE(at::equal(logits.detach(), trained));
  logits.sum().backward();
  EXPECT_FALSE(b.encoder->forward(pixels).requires_grad()) << "a frozen tower's features record no graph";
  for (const auto& p : b.vlm->named_parameters()) {
    const bool in_tower = p.key().rfind("vision_encoder.", 0) == 0;
    EXPECT_EQ(p.value().grad().defined(), !in_tower) << p.key();
  }
}

TEST(JointDecoder, RefusesMissingOrMismatchedImagesAndATooSmallModel) {
  const ComponentHost h(vlm_toml(32));
  const Built b = build(h);
  const auto expect_error = [&](const std::function<void()>& call, const std::vector<std::string>& needles) {
    try {
      call();
      ADD_FAILURE() << "expected an error";
    } catch (const sdk::Error& e) {
      expect_has(e.what(), needles);
    }
  };
  const at::Tensor tokens = at::zeros({2, 6}, at::kLong);
  expect_error([&] { b.vlm->forward(tokens); }, {"no images were set"});
  b.vlm->set_images(at::rand({3, 3, 8, 8}));
  expect_error([&] { b.vlm->forward(tokens); }, {"3 images for tokens [2, 6]", "one image per row"});
  expect_error([&] { b.vlm->set_images(at::rand({3, 8, 8})); }, {"[batch, channels, height, width]"});
  // 4 image tokens leave a max_seq_len of 4 nothing for the text (the config rules see only encoders that state
  // num_tokens; the strategy checks what the built parts say).
  const ComponentHost small(vlm_toml(4));
  const Built p = parts(small);
  try {
    small.components.vision_language_model({p.encoder, p.adapter, p.text});
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"each image takes 4 positions", "max_seq_len = 4", "leaves none for text"});
  }
}

}  // namespace
}  // namespace kforge::test
