// The Mixture of Modality-Aware Experts strategy ([vlm] arch = "moma") built through the registry (or directly, for the
// expert counts [vlm] cannot pass through sdk::ConfigView) with a siglip2 tower, an mlp_2layer adapter and the
// transformer's [model] keys: its logits and every parameter's gradient match tests/oracles/vlm_moma.py (float64) with
// the router noise off or in eval mode; in training the Gumbel noise follows the seed; each expert picks its top
// ceil(capacity * N) tokens by sigmoid score (checked by hand on ExpertChoiceFFN); its parameters and blocks carry the
// names under "transformer."; what it does not build is refused with the key named, and so is decoding.
#include "moma.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "expert_choice_ffn.h"
#include "own_stack_strategy.h"
#include "strategy_oracle.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

// The strategy built directly with `settings` over the parts the host builds from `h`.
std::shared_ptr<sdk::VisionLanguageModel> build_moma(const ComponentHost& h, const vlm::MoMaSettings& settings) {
  const auto encoder = h.components.vision_encoder();
  const auto adapter = h.components.adapter({encoder->feature_dim(), 16});
  const auto config = builtin::models::ModelConfig::from_view(h.job.view("model"));
  auto stack = std::make_shared<vlm::MoMa>(config, 4, settings);
  return std::make_shared<vlm::OwnStackStrategy>(sdk::VisionLanguageParts{encoder, adapter, stack}, "moma",
                                                 "training only");
}

// The MoMa stack of a strategy.
std::shared_ptr<vlm::MoMa> stack_of(const sdk::VisionLanguageModel& vlm) {
  return std::dynamic_pointer_cast<vlm::MoMa>(vlm.named_children()["transformer"]);
}

// The logits of tokens over random images after seeding the CPU generator with `seed`.
at::Tensor logits_at_seed(sdk::VisionLanguageModel& vlm, const at::Tensor& pixels, const at::Tensor& tokens,
                          uint64_t seed) {
  torch::manual_seed(seed);
  vlm.set_images(pixels);
  return vlm.forward(tokens).detach();
}

TEST(MoMa, LogitsAndGradientsMatchTheReferenceWithTheNoiseOff) {
  torch::manual_seed(7);
  const ComponentHost h(strategy_toml("moma", "", "moma_gumbel_noise = false\n"));
  const BuiltStrategy b = build_strategy(h);
  randomise_stack(*b.vlm);
  EXPECT_GT(expect_matches_oracle("vlm_moma.py", *b.vlm, h.job.view("model"), R"("moma": {"capacity_factor": 0.0})"),
            80);
}

TEST(MoMa, InEvalModeTheNoiseIsOffAndOtherExpertCountsMatchTheReference) {
  torch::manual_seed(8);
  const ComponentHost h(strategy_toml("moma", "qk_norm = true\nnorm_type = \"layernorm\"\ntie_embeddings = true\n"));
  vlm::MoMaSettings settings;
  settings.experts_per_modality = {{"image", 2}, {"text", 3}};
  settings.capacity_factor = 0.5;
  const auto vlm = build_moma(h, settings);
  randomise_stack(*vlm);
  vlm->eval();
  const at::Tensor pixels = at::rand({2, 3, 8, 8}), tokens = at::randint(0, 23, {2, 6}, at::kLong);
  EXPECT_TRUE(at::equal(logits_at_seed(*vlm, pixels, tokens, 1), logits_at_seed(*vlm, pixels, tokens, 2)));
  EXPECT_GT(expect_matches_oracle("vlm_moma.py", *vlm, h.job.view("model"), R"("moma": {"capacity_factor": 0.5})"), 50);
}

TEST(MoMa, InTrainingTheRouterNoiseFollowsTheSeed) {
  const ComponentHost h(strategy_toml("moma"));
  const BuiltStrategy b = build_strategy(h);
  const at::Tensor pixels = at::rand({2, 3, 8, 8}), tokens = at::randint(0, 23, {2, 6}, at::kLong);
  const at::Tensor first = logits_at_seed(*b.vlm, pixels, tokens, 1);
  EXPECT_TRUE(at::equal(logits_at_seed(*b.vlm, pixels, tokens, 1), first));
  EXPECT_FALSE(at::allclose(logits_at_seed(*b.vlm, pixels, tokens, 2), first));
  b.vlm->eval();
  EXPECT_TRUE(at::equal(logits_at_seed(*b.vlm, pixels, tokens, 1), logits_at_seed(*b.vlm, pixels, tokens, 2)));
}

TEST(ExpertChoiceFFN, EachExpertPicksItsTopTokensByScore) {
  builtin::models::ModelConfig c;
  c.dim = 4;
  c.ffn_hidden_dim = 16;
  vlm::ExpertChoiceFFN ffn(c, /*experts=*/2, /*capacity_factor=*/0.5, /*gumbel_noise=*/true);
  EXPECT_EQ(ffn.tokens_per_expert(6), 3);
  EXPECT_EQ(ffn.tokens_per_expert(7), 4);
  EXPECT_EQ(ffn.tokens_per_expert(1), 1);
  EXPECT_EQ(vlm::ExpertChoiceFFN(c, 2, 0.01, false).tokens_per_expert(6), 1) << "at least one token";
  EXPECT_EQ(vlm::ExpertChoiceFFN(c, 2, 1.0, false).tokens_per_expert(6), 6) << "at most all";
  auto params = ffn.named_parameters();
  {
    at::NoGradGuard no_grad;
    for (auto& p : params) p.value().normal_(0, 0.5);
    // Expert 0 scores a token by its feature 0, expert 1 by its feature 1.
    params["gate.weight"].copy_(at::tensor({1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f}).view({2, 4}));
  }
  at::Tensor x = at::randn({6, 4});
  x.select(1, 0).copy_(at::tensor({0.6f, -1.0f, 2.0f, 0.1f, 1.5f, -0.3f}));  // expert 0 picks tokens 2, 4, 0
  x.select(1, 1).copy_(at::tensor({1.0f, 0.5f, -2.0f, 3.0f, 0.0f, -1.0f}));  // expert 1 picks tokens 3, 0, 1
  ffn.eval();
  const at::Tensor out = ffn.forward(x).detach();
  const auto expert = [&](int e, int64_t token) {
    const std::string p = "experts." + std::to_string(e) + ".";
    const at::Tensor row = x[token].unsqueeze(0);
    const at::Tensor gate = at::matmul(row, params[p + "gate_proj.weight"].detach().t());
    const at::Tensor up = at::matmul(row, params[p + "up_proj.weight"].detach().t());
    return at::matmul(gate * at::sigmoid(gate) * up, params[p + "down_proj.weight"].detach().t()).squeeze(0) *
           at::sigmoid(x[token][e]);
  };
  const std::vector<at::Tensor> by_hand = {
      expert(0, 0) + expert(1, 0), expert(1, 1), expert(0, 2), expert(1, 3), expert(0, 4), at::zeros({4})};
  EXPECT_TRUE(at::allclose(out, at::stack(by_hand), 1e-5, 1e-6)) << out << at::stack(by_hand);
  EXPECT_NEAR(ffn.last_coverage().item<double>(), 5.0 / 6.0, 1e-6) << "token 5 is nobody's";
}

TEST(MoMa, ACapacityOfZeroIsOneOverTheModalitysExperts) {
  const ComponentHost h(strategy_toml("moma"));
  vlm::MoMaSettings settings;
  settings.experts_per_modality = {{"image", 2}, {"text", 4}};
  const auto stack = stack_of(*build_moma(h, settings));
  ASSERT_NE(stack, nullptr);
  ASSERT_EQ(stack->layers().size(), 2u);
  EXPECT_EQ(stack->layers()[1]->mlp()[vlm::kImage]->tokens_per_expert(8), 4);
  EXPECT_EQ(stack->layers()[1]->mlp()[vlm::kText]->tokens_per_expert(12), 3);
}

TEST(MoMa, StepMetricsAreTheShareOfTokensSomeExpertPicked) {
  const ComponentHost h(strategy_toml("moma", "", "moma_capacity_factor = 1.0\n"));
  const BuiltStrategy b = build_strategy(h);
  EXPECT_TRUE(b.vlm->step_metrics().empty()) << "before any forward";
  b.vlm->set_images(at::rand({2, 3, 8, 8}));
  b.vlm->forward(at::randint(0, 23, {2, 6}, at::kLong));
  const auto metrics = b.vlm->step_metrics();
  ASSERT_EQ(metrics.size(), 2u);
  EXPECT_EQ(metrics[0].first, "moma/image_coverage");
  EXPECT_EQ(metrics[1].first, "moma/text_coverage");
  EXPECT_EQ(metrics[0].second, 1.0) << "every expert takes every token at capacity 1";
  EXPECT_EQ(metrics[1].second, 1.0);
}

TEST(MoMa, ParametersAndBlocksCarryTheNames) {
  const ComponentHost h(strategy_toml("moma"));
  const BuiltStrategy b = build_strategy(h);
  std::set<std::string> expected = {"transformer.token_embedding.embedding.weight", "transformer.norm.weight",
                                    "transformer.output_head.proj.weight"};
  std::vector<std::set<std::string>> per_layer(2);
  for (int layer = 0; layer < 2; ++layer) {
    const std::string p = "transformer.layers." + std::to_string(layer) + ".";
    auto& names = per_layer[layer];
    for (const std::string n : {"attention_norm", "mlp_norm"}) names.insert(p + n + ".weight");
    for (const std::string proj : {"q", "k", "v", "o"}) names.insert(p + "attention." + proj + "_proj.weight");
    for (const std::string m : {"image", "text"}) {
      names.insert(p + "mlp." + m + ".gate.weight");
      for (int e = 0; e < 4; ++e) {
        for (const std::string proj : {"gate", "up", "down"}) {
          names.insert(p + "mlp." + m + ".experts." + std::to_string(e) + "." + proj + "_proj.weight");
        }
      }
    }
    expected.insert(names.begin(), names.end());
  }
  EXPECT_EQ(stack_parameter_names(*b.vlm), expected);
  EXPECT_EQ(b.vlm->named_parameters()["transformer.layers.0.mlp.text.gate.weight"].sizes(), (at::IntArrayRef{4, 16}));
  EXPECT_EQ(b.vlm->num_params_estimate(), parameter_elements(*b.vlm));
  const std::vector<sdk::ModelBlock> blocks = b.vlm->blocks();
  ASSERT_EQ(blocks.size(), 2u);
  for (int layer = 0; layer < 2; ++layer) {
    EXPECT_EQ(blocks[layer].name, "transformer.layers." + std::to_string(layer));
    EXPECT_EQ(std::set<std::string>(blocks[layer].params.begin(), blocks[layer].params.end()), per_layer[layer]);
    EXPECT_EQ(blocks[layer].checkpointable, std::vector<std::string>{"attention"});
  }
  EXPECT_EQ(b.vlm->max_seq_len(), 28);
  EXPECT_GT(b.vlm->flops_per_token(6), 0.0);
}

TEST(MoMa, TheConfigsExpertCountsReachTheStack) {
  const ComponentHost h(strategy_toml("moma", "", "moma_experts_per_modality = {image = 2, text = 3}\n"));
  const BuiltStrategy b = build_strategy(h);
  const auto params = b.vlm->named_parameters();
  EXPECT_EQ(params["transformer.layers.1.mlp.image.gate.weight"].sizes(), (at::IntArrayRef{2, 16}));
  EXPECT_EQ(params["transformer.layers.1.mlp.text.gate.weight"].sizes(), (at::IntArrayRef{3, 16}));
  EXPECT_EQ(params.find("transformer.layers.1.mlp.image.experts.2.up_proj.weight"), nullptr);
  EXPECT_NE(params.find("transformer.layers.1.mlp.text.experts.2.up_proj.weight"), nullptr);
}

TEST(MoMa, RefusesWhatItDoesNotBuildNamingTheKey) {
  const auto refusal = [](const std::string& model, const std::string& vlm) {
    return build_refusal(strategy_toml("moma", model, vlm));
  };
  // (A third modality the config rules refuse first: moma_experts_per_modality has no entry for it.)
  expect_has(refusal("", "moma_modalities = [\"text\", \"image\"]\n"),
             {"[vlm] moma_modalities = [\"text\", \"image\"]", "must be [\"image\", \"text\"]"});
  expect_has(refusal("", "moma_capacity_factor = 1.5\n"), {"[vlm] moma_capacity_factor = 1.5", "must be in [0, 1]"});
  // Expert counts the config rules would refuse first, given to the strategy directly.
  const ComponentHost h(strategy_toml("moma"));
  vlm::MoMaSettings none;
  none.experts_per_modality = {{"image", 0}, {"text", 4}};
  expect_has(config_error_of([&] { build_moma(h, none); }),
             {"[vlm] moma_experts_per_modality has image = 0", "at least 1 expert"});
  vlm::MoMaSettings missing;
  missing.experts_per_modality = {{"image", 2}};
  expect_has(config_error_of([&] { build_moma(h, missing); }),
             {"[vlm] moma_experts_per_modality has no entry for text"});
}

TEST(MoMa, RefusesDecoding) {
  const ComponentHost h(strategy_toml("moma"));
  const BuiltStrategy b = build_strategy(h);
  expect_has(error_of([&] { b.vlm->start_decoding(1, 6); }),
             {"[vlm] arch = \"moma\" is training-only", "not causal",
              "kforge generate supports joint_decoder and cross_attention"});
}

}  // namespace
}  // namespace kforge::test
