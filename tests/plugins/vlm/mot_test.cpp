// The Mixture-of-Transformers strategy ([vlm] arch = "mot") built through the registry with a siglip2 tower, an
// mlp_2layer adapter and the transformer's [model] keys: its logits and every parameter's gradient match
// tests/oracles/vlm_mot.py (float64; per-modality RoPE positions, GQA, with and without QK-norm, tied or not); every
// block is the identity at construction; its parameters and blocks carry the per-modality names under "transformer.";
// the host's block and attention seams see every layer; what it does not build is refused with the key named, and so is
// decoding (the text MoE refusal, shared through stack_config, is tested here for both strategies).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "own_stack.h"
#include "strategy_oracle.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

// The 2-layer stack's parameter names under "transformer.layers.{layer}." (no QK-norm).
std::set<std::string> layer_names(int layer) {
  const std::string p = "transformer.layers." + std::to_string(layer) + ".";
  std::set<std::string> names;
  for (const std::string m : {"image", "text"}) {
    names.insert(p + "attention_norm." + m + ".weight");
    for (const std::string proj : {"q", "k", "v", "o"})
      names.insert(p + "attention." + proj + "_proj." + m + ".weight");
    names.insert(p + "mlp_norm." + m + ".weight");
    for (const std::string proj : {"gate", "up", "down"}) names.insert(p + "mlp." + m + "." + proj + "_proj.weight");
  }
  return names;
}

TEST(Mot, LogitsAndGradientsMatchTheReference) {
  torch::manual_seed(7);
  const ComponentHost h(strategy_toml("mot"));
  const BuiltStrategy b = build_strategy(h);
  randomise_stack(*b.vlm);
  EXPECT_GT(expect_matches_oracle("vlm_mot.py", *b.vlm, h.job.view("model")), 40);
  EXPECT_FALSE(b.vlm->named_parameters()["transformer.mot_norms.image.weight"].grad().defined())
      << "the image positions never reach the head";
}

TEST(Mot, LogitsAndGradientsMatchTheReferenceWithQkNormTiedLayerNorm) {
  torch::manual_seed(8);
  const ComponentHost h(strategy_toml(
      "mot", "qk_norm = true\ntie_embeddings = true\nnorm_type = \"layernorm\"\nactivation = \"gelu\"\n"));
  const BuiltStrategy b = build_strategy(h);
  randomise_stack(*b.vlm);
  EXPECT_EQ(b.vlm->named_parameters().find("transformer.output_head.proj.weight"), nullptr);
  EXPECT_NE(b.vlm->named_parameters().find("transformer.layers.1.attention.k_norm.image.weight"), nullptr);
  EXPECT_GT(expect_matches_oracle("vlm_mot.py", *b.vlm, h.job.view("model")), 40);
}

TEST(Mot, EveryBlockIsTheIdentityAtConstruction) {
  torch::manual_seed(9);
  const ComponentHost h(strategy_toml("mot"));
  const BuiltStrategy b = build_strategy(h);
  int zeros = 0;
  for (const auto& p : b.vlm->named_parameters()) {
    const std::string& name = p.key();
    const bool output =
        name.find(".attention.o_proj.") != std::string::npos || name.find(".down_proj.weight") != std::string::npos;
    if (output || p.value().dim() == 2) {
      EXPECT_EQ(p.value().count_nonzero().item<int64_t>() == 0, output) << name;
    }
    zeros += output ? 1 : 0;
  }
  EXPECT_EQ(zeros, 2 * 2 * 2) << "o_proj and down_proj of both modalities in both layers";
  int blocks = 0;
  b.vlm->set_block_runner([&](size_t, const at::Tensor& input, const sdk::Model::BlockFn& block) {
    const at::Tensor output = block(input);
    EXPECT_TRUE(at::equal(output, input));
    ++blocks;
    return output;
  });
  const at::Tensor tokens = at::randint(0, 23, {2, 6}, at::kLong);
  b.vlm->set_images(at::rand({2, 3, 8, 8}));
  const at::Tensor logits = b.vlm->forward(tokens).detach();
  EXPECT_EQ(blocks, 2);
  // So the logits are the head's of the text's final norm (unit weights) of the token embeddings.
  auto params = b.vlm->named_parameters();
  const at::Tensor x = params["transformer.token_embedding.embedding.weight"].detach().index_select(0, tokens.view(-1));
  const at::Tensor normed = x / (x.square().mean(-1, true) + 1e-5).sqrt();
  const at::Tensor by_hand = at::matmul(normed, params["transformer.output_head.proj.weight"].detach().t());
  EXPECT_TRUE(at::allclose(logits.reshape({12, 23}), by_hand, 1e-5, 1e-6));
}

TEST(Mot, ParametersAndBlocksCarryThePerModalityNames) {
  const ComponentHost h(strategy_toml("mot"));
  const BuiltStrategy b = build_strategy(h);
  for (const auto& p : b.vlm->named_parameters()) {
    EXPECT_TRUE(p.key().rfind("transformer.", 0) == 0 || p.key().rfind("vision_encoder.", 0) == 0 ||
                p.key().rfind("adapter.", 0) == 0)
        << p.key();
  }
  std::set<std::string> expected = {"transformer.token_embedding.embedding.weight",
                                    "transformer.mot_norms.image.weight", "transformer.mot_norms.text.weight",
                                    "transformer.output_head.proj.weight"};
  for (int layer = 0; layer < 2; ++layer) expected.merge(layer_names(layer));
  EXPECT_EQ(stack_parameter_names(*b.vlm), expected);
  EXPECT_EQ(b.vlm->num_params_estimate(), parameter_elements(*b.vlm));
  const std::vector<sdk::ModelBlock> blocks = b.vlm->blocks();
  ASSERT_EQ(blocks.size(), 2u);
  for (int layer = 0; layer < 2; ++layer) {
    EXPECT_EQ(blocks[layer].name, "transformer.layers." + std::to_string(layer));
    EXPECT_EQ(std::set<std::string>(blocks[layer].params.begin(), blocks[layer].params.end()), layer_names(layer));
    EXPECT_EQ(blocks[layer].checkpointable, std::vector<std::string>{"attention"});
  }
  EXPECT_EQ(b.vlm->visual_tokens(), 4);
  EXPECT_EQ(b.vlm->max_seq_len(), 28);
  EXPECT_GT(b.vlm->flops_per_token(6), 0.0);
}

TEST(Mot, TheHostsSeamsRunEveryBlockAndItsAttention) {
  const ComponentHost h(strategy_toml("mot"));
  const BuiltStrategy b = build_strategy(h);
  std::vector<size_t> seen;
  std::vector<std::pair<size_t, std::string>> modules;
  b.vlm->set_block_runner([&](size_t index, const at::Tensor& input, const sdk::Model::BlockFn& block) {
    seen.push_back(index);
    EXPECT_EQ(input.size(1), 4 + 6) << "a block runs over the image and text positions";
    return block(input);
  });
  b.vlm->set_module_runner(
      [&](size_t block, const std::string& module, const at::Tensor& input, const sdk::Model::BlockFn& fn) {
        modules.emplace_back(block, module);
        return fn(input);
      });
  b.vlm->set_images(at::rand({1, 3, 8, 8}));
  b.vlm->forward(at::zeros({1, 6}, at::kLong));
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(modules, (std::vector<std::pair<size_t, std::string>>{{0, "attention"}, {1, "attention"}}));
}

// Both strategies build their stack through stack_config, which refuses a text MoE.
TEST(OwnStack, MotAndMoMaRefuseATextMixtureOfExperts) {
  for (const std::string arch : {"mot", "moma"}) {
    expect_has(build_refusal(strategy_toml(arch, "num_experts = 2\n")),
               {"[model] num_experts = 2", "arch = \"" + arch + "\"", "set num_experts = 0"});
  }
}

TEST(Mot, RefusesWhatItDoesNotBuildNamingTheKey) {
  const auto refusal = [](const std::string& model, const std::string& vlm) {
    return build_refusal(strategy_toml("mot", model, vlm));
  };
  expect_has(refusal("", "mot_modalities = [\"image\", \"text\", \"audio\"]\n"),
             {"[vlm] mot_modalities = [\"image\", \"text\", \"audio\"]", "must be [\"image\", \"text\"]"});
  expect_has(refusal("", "mot_modalities = [\"text\", \"image\"]\n"), {"[vlm] mot_modalities = [\"text\", \"image\"]"});
  expect_has(refusal("", "mot_image_n_heads = 2\n"),
             {"[vlm] mot_image_n_heads = 2", "[model] n_heads = 4", "equal across modalities"});
  expect_has(refusal("", "mot_image_n_kv_heads = 4\n"), {"[vlm] mot_image_n_kv_heads = 4", "[model] n_kv_heads = 2"});
  // The model's own head counts are the same heads, so they are taken.
  const ComponentHost same(strategy_toml("mot", "", "mot_image_n_heads = 4\nmot_image_n_kv_heads = 2\n"));
  EXPECT_NO_THROW(build_strategy(same));
  // 4 image tokens leave a max_seq_len of 4 nothing for the text.
  expect_has(build_refusal(strategy_toml("mot", "", "", 4)),
             {"[vlm] arch = \"mot\"", "max_seq_len = 4", "no position for text"});
}

// The warm start maps each stack parameter to the dense transformer's, named as a joint-decoder run saves them
// ("transformer." first) or as a text run does; the host copies what it returns.
TEST(Mot, WarmStartTakesEveryStackParameterFromTheDenseWeightOfItsName) {
  const ComponentHost dense_host(strategy_toml("joint_decoder"));
  const BuiltStrategy dense = build_strategy(dense_host);
  std::map<std::string, at::Tensor> joint, text;
  for (const auto& item : dense.vlm->named_parameters(/*recurse=*/true)) {
    joint.emplace(item.key(), item.value());
    if (item.key().rfind("transformer.", 0) == 0) text.emplace(item.key().substr(12), item.value());
  }
  const ComponentHost h(
      strategy_toml("mot", "", "mot_warm_start_from_text = true\nmot_warm_start_path = \"t/step_3\"\n"));
  const BuiltStrategy b = build_strategy(h);
  EXPECT_EQ(b.vlm->text_warm_start_path(), "t/step_3");
  const std::set<std::string> stack = stack_parameter_names(*b.vlm);
  for (const auto* state : {&joint, &text}) {
    const std::map<std::string, at::Tensor> made = b.vlm->from_text_state(*state);
    std::set<std::string> names;
    for (const auto& [name, t] : made) names.insert(name);
    EXPECT_EQ(names, stack) << "every stack parameter, and only those (the encoder and adapter keep theirs)";
    for (const char* m : {"image", "text"}) {
      const std::string q = std::string("transformer.layers.1.attention.q_proj.") + m + ".weight";
      EXPECT_TRUE(made.at(q).is_same(joint.at("transformer.layers.1.attention.q_proj.weight"))) << q;
      const std::string up = std::string("transformer.layers.0.mlp.") + m + ".up_proj.weight";
      EXPECT_TRUE(made.at(up).is_same(joint.at("transformer.layers.0.mlp.up_proj.weight"))) << up;
      const std::string norm = std::string("transformer.mot_norms.") + m + ".weight";
      EXPECT_TRUE(made.at(norm).is_same(joint.at("transformer.norm.weight"))) << norm;
    }
    EXPECT_TRUE(made.at("transformer.token_embedding.embedding.weight")
                    .is_same(joint.at("transformer.token_embedding.embedding.weight")));
  }
  text.erase("layers.1.mlp.down_proj.weight");
  expect_has(error_of([&] { b.vlm->from_text_state(text); }),
             {"[vlm] mot_warm_start_path = \"t/step_3\"", "no 'layers.1.mlp.down_proj.weight'",
              "'transformer.layers.1.mlp.image.down_proj.weight'"});
  const ComponentHost cold(strategy_toml("mot"));
  EXPECT_EQ(build_strategy(cold).vlm->text_warm_start_path(), "") << "no warm start without the key";
  EXPECT_TRUE(build_strategy(cold).vlm->from_text_state(joint).empty());
}

TEST(Mot, RefusesDecodingAndTooLongText) {
  const ComponentHost h(strategy_toml("mot"));
  const BuiltStrategy b = build_strategy(h);
  expect_has(error_of([&] { b.vlm->start_decoding(1, 6); }),
             {"[vlm] arch = \"mot\" is training-only", "kforge generate supports joint_decoder and cross_attention"});
  b.vlm->set_images(at::rand({1, 3, 8, 8}));
  expect_has(error_of([&] {
               b.vlm->forward(at::zeros({1, 29}, at::kLong));
             }),
             {"29 text tokens and 4 image tokens exceed [model] max_seq_len = 32", "at most 28"});
  expect_has(error_of([&] { b.vlm->forward(at::zeros({2, 6}, at::kLong)); }), {"1 images for tokens [2, 6]"});
}

// The host's [model] view, except that model_type names another model plugin (the config layer takes only the names of
// loaded plugins, and this process loads no other).
class OtherModelType final : public sdk::ConfigView {
 public:
  explicit OtherModelType(const sdk::ConfigView& model) : model_(model) {}
  std::string section() const override { return model_.section(); }
  bool has(std::string_view key) const override { return model_.has(key); }
  bool get_bool(std::string_view key) const override { return model_.get_bool(key); }
  int64_t get_int(std::string_view key) const override { return model_.get_int(key); }
  double get_float(std::string_view key) const override { return model_.get_float(key); }
  std::string get_string(std::string_view key) const override {
    return key == "model_type" ? "other" : model_.get_string(key);
  }
  std::vector<double> get_float_list(std::string_view key) const override { return model_.get_float_list(key); }
  std::vector<int64_t> get_int_list(std::string_view key) const override { return model_.get_int_list(key); }
  std::vector<std::string> get_string_list(std::string_view key) const override { return model_.get_string_list(key); }
  std::map<std::string, int64_t> get_int_dict(std::string_view key) const override { return model_.get_int_dict(key); }

 private:
  const sdk::ConfigView& model_;
};

// make_mot reads [model] through stack_config first.
TEST(Mot, RefusesAnotherModelPluginsModelType) {
  const ComponentHost h(strategy_toml("mot"));
  const auto model = h.job.view("model");
  const OtherModelType other(model);
  EXPECT_NO_THROW(vlm::stack_config("mot", &model, ""));
  expect_has(config_error_of([&] { vlm::stack_config("mot", &other, ""); }),
             {"[model] model_type = \"other\"", "[vlm] arch = \"mot\"", "set model_type = \"transformer\""});
}

}  // namespace
}  // namespace kforge::test
