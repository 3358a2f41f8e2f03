// MoE transformers built through the host: layer placement and parameter names, parameter counts and
// expert widths, active-parameter FLOPs by hand, weight init, the auxiliary losses and metrics, the
// router step schedule, and cached decoding (forked states too).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "model_builder.h"
#include "support/forked_decoding.h"
#include "transformer/model_config.h"

namespace kforge::test::models {
namespace {

const std::string kBase = "[model]\ndim = 32\nn_layers = 4\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 64\n";

std::map<std::string, at::Tensor> params_of(const sdk::Model& m) {
  std::map<std::string, at::Tensor> out;
  for (const auto& p : m.named_parameters()) out.emplace(p.key(), p.value());
  return out;
}

TEST(MoEModel, EveryFrequencyThLayerIsMoEWithKempnerForgeNames) {
  auto model = build_model(kBase + "num_experts = 4\nmoe_frequency = 2\nmoe_shared_experts = 1\n");
  const auto p = params_of(*model);
  for (int layer : {0, 2}) {
    EXPECT_TRUE(p.count("layers." + std::to_string(layer) + ".mlp.gate_proj.weight")) << layer;
    EXPECT_FALSE(p.count("layers." + std::to_string(layer) + ".mlp.router.gate.weight")) << layer;
  }
  for (int layer : {1, 3}) {
    const std::string mlp = "layers." + std::to_string(layer) + ".mlp.";
    EXPECT_EQ(p.at(mlp + "router.gate.weight").sizes(), (at::IntArrayRef{4, 32}));
    EXPECT_EQ(p.at(mlp + "experts.3.down_proj.weight").sizes(), (at::IntArrayRef{32, 256}));  // ffn 256 for dim 32
    EXPECT_TRUE(p.count(mlp + "shared_expert.gate_proj.weight"));
    EXPECT_FALSE(p.count(mlp + "gate_proj.weight"));
  }
}

TEST(MoEModel, PackedExpertsAreEInOutTensors) {
  auto model = build_model(kBase + "num_experts = 3\nmoe_packed_experts = true\nactivation = \"relu\"\n");
  const auto p = params_of(*model);
  EXPECT_EQ(p.at("layers.0.mlp.up_w").sizes(), (at::IntArrayRef{3, 32, 256}));
  EXPECT_EQ(p.at("layers.0.mlp.down_w").sizes(), (at::IntArrayRef{3, 256, 32}));
  EXPECT_FALSE(p.count("layers.0.mlp.gate_w"));  // 2-matrix experts
  EXPECT_FALSE(p.count("layers.0.mlp.experts.0.up_proj.weight"));
}

TEST(MoEModel, SigmoidRouterAddsExpertBiasAndEmaBuffer) {
  auto model = build_model(kBase + "num_experts = 4\nmoe_router = \"sigmoid_topk\"\nmoe_frequency = 2\n");
  const auto p = params_of(*model);
  EXPECT_EQ(p.at("layers.1.mlp.router.expert_bias").sizes(), (at::IntArrayRef{4}));
  bool ema = false;
  for (const auto& b : model->named_buffers()) ema |= b.key() == "layers.3.mlp.router.expert_ema";
  EXPECT_TRUE(ema);
  // The estimate leaves the router's own bias out, as KempnerForge's does.
  EXPECT_EQ(count_params(*model), model->num_params_estimate() + 2 * 4);
}

TEST(MoEModel, ParameterCountEqualsEstimateAcrossMoEShapes) {
  for (const std::string extra :
       {"num_experts = 4\n", "num_experts = 4\nmoe_frequency = 2\nmoe_shared_experts = 3\n",
        "num_experts = 8\nmoe_top_k = 1\nmoe_expert_ffn_multiplier = 0.5\n",
        "num_experts = 2\nmoe_packed_experts = true\nactivation = \"gelu\"\ntie_embeddings = true\n"}) {
    SCOPED_TRACE(extra);
    auto model = build_model(kBase + extra);
    EXPECT_EQ(count_params(*model), model->num_params_estimate());
  }
}

TEST(MoEModel, EstimateIsKempnerForgeFormulaByHand) {
  // dim 32, 4 heads (hd 8), 2 KV heads, 4 layers, 2 of them MoE (frequency 2), 4 experts of ffn 256
  // (256 * ceil(int(4 * 32 * 2/3) / 256)), one shared expert: per MoE layer 4 * 3 * 32 * 256 + 32 * 4 + 3 * 32 * 256.
  auto model = build_model(kBase + "num_experts = 4\nmoe_frequency = 2\nmoe_shared_experts = 1\n");
  const int64_t attn = 32 * 32 + 2 * 32 * 16 + 32 * 32, mlp = 3 * 32 * 256, norms = 2 * 32;
  const int64_t dense_layer = attn + mlp + norms, moe_layer = attn + 4 * mlp + 32 * 4 + mlp + norms;
  EXPECT_EQ(model->num_params_estimate(), 2 * dense_layer + 2 * moe_layer + 2 * 64 * 32 + 32);
}

TEST(MoEModel, ExpertWidthRule) {
  kforge::builtin::models::ModelConfig c;
  c.dim = 256;  // dense ffn 768
  c.num_experts = 4;
  EXPECT_EQ(c.computed_expert_ffn_hidden_dim(), 768);
  c.moe_expert_ffn_multiplier = 0.5;
  EXPECT_EQ(c.computed_expert_ffn_hidden_dim(), 384);
  c.moe_expert_ffn_multiplier = 0.3;  // int(230.4) = 230 -> 16 * round(14.375) = 224
  EXPECT_EQ(c.computed_expert_ffn_hidden_dim(), 224);
  c.moe_expert_ffn_multiplier = 0.01;  // 7 -> 16 * round(0.4375) = 0 -> at least 16
  EXPECT_EQ(c.computed_expert_ffn_hidden_dim(), 16);
  c.ffn_hidden_dim = 200;  // 200 / 16 = 12.5 rounds to even (Python round): 192
  c.moe_expert_ffn_multiplier = 1.0;
  EXPECT_EQ(c.computed_expert_ffn_hidden_dim(), 192);
  c.ffn_hidden_dim = 216;  // 13.5 -> 14
  EXPECT_EQ(c.computed_expert_ffn_hidden_dim(), 224);
}

TEST(MoEFlops, ActiveParametersByHand) {
  // 4 layers, 2 MoE (frequency 2), top-2 of 4 experts plus a shared one: an MoE layer's active
  // MLP is 3 experts; dense layers count their MLP once; vocab * dim for the head.
  auto model = build_model(kBase + "num_experts = 4\nmoe_top_k = 2\nmoe_frequency = 2\nmoe_shared_experts = 1\n");
  const double attn = 32.0 * 32 + 2.0 * 32 * 16 + 32.0 * 32, mlp = 3.0 * 32 * 256;
  const double p_active = 4 * attn + 2 * mlp + 2 * 3 * mlp + 64.0 * 32;
  EXPECT_DOUBLE_EQ(model->flops_per_token(128), 6.0 * p_active + 12.0 * 4 * 32 * 128);
  // Total experts do not count: 16 experts cost the same as 4 at the same top-k.
  auto wide = build_model(kBase + "num_experts = 16\nmoe_top_k = 2\nmoe_frequency = 2\nmoe_shared_experts = 1\n");
  EXPECT_DOUBLE_EQ(wide->flops_per_token(128), model->flops_per_token(128));
  EXPECT_GT(wide->num_params_estimate(), model->num_params_estimate());
}

TEST(MoEFlops, KempnerForgeMoEReferenceValue) {
  // §8.2: MoE 2048d / 24 layers / 8 experts top-2, FFN 1.3x (7168), seq 4096, vocab 128256: 18.19 GFLOP/token.
  kforge::builtin::models::ModelConfig c;
  c.dim = 2048;
  c.n_layers = 24;
  c.n_heads = 16;
  c.n_kv_heads = 4;
  c.vocab_size = 128256;
  c.ffn_dim_multiplier = 1.3;
  c.num_experts = 8;
  c.moe_top_k = 2;
  EXPECT_EQ(c.computed_ffn_hidden_dim(), 7168);
  EXPECT_NEAR(c.flops_per_token(4096) / 1e9, 18.19, 0.005);
}

TEST(MoEModel, ExpertInitFollowsKempnerForge) {
  // Per-expert down_proj is residual-scaled (0.02 / sqrt(2 L)); packed down_w is not.
  const std::string shape = "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 64\nnum_experts = 4\n";
  at::manual_seed(0);
  const auto unpacked = params_of(*build_model(shape));
  at::manual_seed(0);
  const auto packed = params_of(*build_model(shape + "moe_packed_experts = true\n"));
  EXPECT_NEAR(unpacked.at("layers.0.mlp.experts.1.down_proj.weight").std().item<double>(), 0.01, 0.0005);
  EXPECT_NEAR(unpacked.at("layers.0.mlp.experts.1.up_proj.weight").std().item<double>(), 0.02, 0.001);
  EXPECT_NEAR(unpacked.at("layers.0.mlp.router.gate.weight").std().item<double>(), 0.02, 0.002);
  EXPECT_NEAR(packed.at("layers.0.mlp.down_w").std().item<double>(), 0.02, 0.0005);
}

TEST(MoEModel, AuxiliaryLossesAreWeightedSumsOverLayers) {
  auto model = build_model(kBase + "num_experts = 4\nmoe_aux_loss_weight = 0.5\nmoe_router_z_loss_weight = 0.1\n");
  {
    at::NoGradGuard no_grad;  // zero gates: uniform probabilities, so each layer's aux is 1, z = log(4)^2
    for (auto& p : model->named_parameters()) {
      if (p.key().find("router.gate.weight") != std::string::npos) p.value().zero_();
    }
  }
  model->forward(at::randint(0, 64, {2, 8}));
  const auto losses = model->auxiliary_losses();
  ASSERT_EQ(losses.size(), 2u);
  EXPECT_EQ(losses[0].first, "moe/aux_loss");
  EXPECT_NEAR(losses[0].second.item<double>(), 0.5 * 4, 1e-5);
  EXPECT_EQ(losses[1].first, "moe/router_z_loss");
  EXPECT_NEAR(losses[1].second.item<double>(), 0.1 * 4 * std::log(4.0) * std::log(4.0), 1e-4);
  std::map<std::string, double> metrics;
  for (const auto& [k, v] : model->step_metrics()) metrics[k] = v;
  EXPECT_NEAR(metrics.at("moe/aux_loss"), 4.0, 1e-5);  // unweighted
  EXPECT_NEAR(metrics.at("moe/router_z_loss"), 4 * std::log(4.0) * std::log(4.0), 1e-4);
  EXPECT_GE(metrics.at("moe/expert_balance"), 0.0);
  EXPECT_LE(metrics.at("moe/expert_balance"), 1.0);
}

TEST(MoEModel, ZLossTermOnlyWhenWeighted) {
  auto model = build_model(kBase + "num_experts = 2\n");
  model->forward(at::randint(0, 64, {1, 4}));
  const auto losses = model->auxiliary_losses();
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_EQ(losses[0].first, "moe/aux_loss");
  EXPECT_TRUE(build_model(kBase)->auxiliary_losses().empty());
  EXPECT_TRUE(build_model(kBase)->step_metrics().empty());
}

TEST(MoEModel, ExpertBalanceIsOneWhenEveryTokenUsesEveryExpert) {
  // top_k = num_experts: every expert gets every token in every layer, so min / max = 1.
  auto model = build_model(kBase + "num_experts = 3\nmoe_top_k = 3\n");
  model->forward(at::randint(0, 64, {2, 5}));
  std::map<std::string, double> metrics;
  for (const auto& [k, v] : model->step_metrics()) metrics[k] = v;
  EXPECT_DOUBLE_EQ(metrics.at("moe/expert_balance"), 1.0);
}

TEST(MoEModel, TokensPerExpertAndDropRate) {
  // top_k = num_experts: each of the 10 tokens reaches all 3 experts in each layer.
  auto model = build_model(kBase + "num_experts = 3\nmoe_top_k = 3\n");
  model->forward(at::randint(0, 64, {2, 5}));
  std::map<std::string, double> metrics;
  for (const auto& [k, v] : model->step_metrics()) metrics[k] = v;
  const double layers = static_cast<double>(model->blocks().size());
  for (const char* e : {"0", "1", "2"})
    EXPECT_DOUBLE_EQ(metrics.at(std::string("moe/tokens/expert_") + e), 10 * layers);
  EXPECT_FALSE(metrics.count("moe/drop_rate"));  // no capacity limit
  // One expert, capacity factor 0.5: each layer keeps ceil(10 * 0.5) = 5 of its 10 tokens.
  auto capped = build_model(kBase + "num_experts = 1\nmoe_top_k = 1\nmoe_capacity_factor = 0.5\n");
  capped->forward(at::randint(0, 64, {2, 5}));
  std::map<std::string, double> capped_metrics;
  for (const auto& [k, v] : capped->step_metrics()) capped_metrics[k] = v;
  EXPECT_DOUBLE_EQ(capped_metrics.at("moe/drop_rate"), 0.5);
}

TEST(MoEModel, SetStepReachesTheRouters) {
  auto model =
      build_model(kBase + "num_experts = 4\nmoe_router = \"sigmoid_topk\"\nmoe_bias_schedule = \"cosine_decay\"\n");
  const auto bias = [&] { return model->named_parameters()["layers.0.mlp.router.expert_bias"].clone(); };
  const at::Tensor tokens = at::randint(0, 64, {2, 8});
  model->set_step(100, 100);  // cosine_decay factor 0: training forwards leave the bias alone
  model->forward(tokens);
  EXPECT_TRUE(at::equal(bias(), at::zeros({4})));
  model->set_step(0, 100);
  model->forward(tokens);
  EXPECT_FALSE(at::equal(bias(), at::zeros({4})));
}

TEST(MoEModel, ForkedDecodingMatchesTheFullForward) {
  auto model = build_model(kBase + "num_experts = 4\nmoe_shared_experts = 1\n");
  model->eval();
  EXPECT_LT(forked_decoding_error(*model, 64), 1e-4);  // the test below's allclose bound, for logits below 0.9
}

TEST(MoEModel, CachedDecodingMatchesTheFullForward) {
  for (const std::string router : {"softmax_topk", "sigmoid_topk"}) {
    SCOPED_TRACE(router);
    auto model = build_model(kBase + "num_experts = 4\nmoe_shared_experts = 1\nmoe_router = \"" + router + "\"\n");
    model->eval();
    const at::Tensor tokens = at::randint(0, 64, {2, 7});
    at::NoGradGuard no_grad;
    const at::Tensor full = model->forward(tokens);
    auto state = model->start_decoding(2, 7);
    const at::Tensor prefix = model->decode(tokens.narrow(1, 0, 4), *state);
    std::vector<at::Tensor> steps{prefix};
    for (int64_t i = 4; i < 7; ++i) steps.push_back(model->decode(tokens.narrow(1, i, 1), *state));
    EXPECT_TRUE(at::allclose(at::cat(steps, 1), full, 1e-4, 1e-5));
  }
}

}  // namespace
}  // namespace kforge::test::models
