// The transformer's hook points (sdk::Model::set_capture, for kforge extract): every declared point
// delivered once with its shape, only the requested ones, the residual stream wired from the sublayer
// outputs, attention probabilities causal, normalised and the ones the attention kernels apply, the MoE router's
// choices, weights and counts as the layer routed (and refused on a dense layer), forward() unchanged by capturing;
// dense and MoE values (norm outputs and router points included) against tests/oracles/llama_reference.py (through
// an .npz).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "data/npz_writer.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"
#include "model_builder.h"
#include "support/max_abs_diff.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "transformer/attention.h"
#include "transformer/flash_attention.h"

namespace kforge::test::models {
namespace {

bool is_router_point(const std::string& point) { return point.find(".mlp.router.") != std::string::npos; }

/// The transformer's declared hook points with {layer} expanded for `n_layers` blocks, the router's only for the MoE
/// layers `moe_layers`.
std::vector<std::string> declared_points(int64_t n_layers, const std::vector<int64_t>& moe_layers = {}) {
  const plugins::Entry* entry = host().registry.find(sdk::kind::model, "transformer");
  EXPECT_NE(entry, nullptr);
  std::vector<std::string> points;
  for (const std::string& pattern : entry->meta.hook_points) {
    const size_t slot = pattern.find("{layer}");
    if (slot == std::string::npos) {
      points.push_back(pattern);
      continue;
    }
    for (int64_t i = 0; i < n_layers; ++i) {
      if (is_router_point(pattern) && std::find(moe_layers.begin(), moe_layers.end(), i) == moe_layers.end()) continue;
      points.push_back(pattern.substr(0, slot) + std::to_string(i) + pattern.substr(slot + 7));
    }
  }
  return points;
}

/// What one forward with `points` captured delivered: point -> value, and how often each came.
struct Captured {
  std::map<std::string, at::Tensor> values;
  std::map<std::string, int> deliveries;
  at::Tensor logits;
};

Captured capture_forward(sdk::Model& model, const at::Tensor& tokens, const std::vector<std::string>& points) {
  Captured c;
  model.set_capture(points, [&](const std::string& point, const at::Tensor& value) {
    c.values[point] = value.clone();
    ++c.deliveries[point];
  });
  {
    const at::NoGradGuard no_grad;
    c.logits = model.forward(tokens);
  }
  model.set_capture({}, {});
  return c;
}

const std::string kGqa =
    "[model]\ndim = 32\nn_layers = 3\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 50\nmax_seq_len = 32\n";

TEST(ModelCapture, EveryDeclaredPointIsDeliveredOnceWithItsShape) {
  at::manual_seed(3);
  auto model = build_model(kGqa);
  const std::vector<std::string> points = declared_points(3);
  ASSERT_EQ(points.size(), 2u + 3u * 6u);  // a dense model: no router points
  const Captured c = capture_forward(*model, at::randint(0, 50, {2, 9}, at::kLong), points);
  EXPECT_EQ(c.values.size(), points.size());
  for (const std::string& point : points) {
    SCOPED_TRACE(point);
    ASSERT_EQ(c.deliveries.count(point), 1u);
    EXPECT_EQ(c.deliveries.at(point), 1);
    const at::Tensor& v = c.values.at(point);
    EXPECT_FALSE(v.requires_grad());
    const bool attention = point.size() > 10 && point.compare(point.size() - 10, 10, ".attention") == 0;
    const std::vector<int64_t> expected = attention ? std::vector<int64_t>{2, 4, 9, 9} : std::vector<int64_t>{2, 9, 32};
    EXPECT_EQ(v.sizes().vec(), expected);
    EXPECT_EQ(v.scalar_type(), at::kFloat);
  }
}

TEST(ModelCapture, OnlyTheRequestedPointsAreDelivered) {
  at::manual_seed(3);
  auto model = build_model(kGqa);
  const Captured c = capture_forward(*model, at::randint(0, 50, {1, 5}, at::kLong),
                                     {"layers.1.residual", "layers.2.attention", "final_norm"});
  std::vector<std::string> delivered;
  for (const auto& [point, count] : c.deliveries) delivered.push_back(point);
  EXPECT_EQ(delivered, (std::vector<std::string>{"final_norm", "layers.1.residual", "layers.2.attention"}));
}

TEST(ModelCapture, ResidualStreamIsEmbedPlusEachSublayersOutput) {
  at::manual_seed(4);
  auto model = build_model(kGqa);
  const Captured c = capture_forward(*model, at::randint(0, 50, {2, 7}, at::kLong), declared_points(3));
  at::Tensor stream = c.values.at("embed");
  for (int layer = 0; layer < 3; ++layer) {
    const std::string p = "layers." + std::to_string(layer) + ".";
    // The block's own additions, in its order: (x + attn_out) + mlp_out.
    stream = (stream + c.values.at(p + "attn_out")) + c.values.at(p + "mlp_out");
    EXPECT_TRUE(at::equal(stream, c.values.at(p + "residual"))) << p;
  }
}

TEST(ModelCapture, AttentionProbabilitiesAreCausalAndRowsSumToOne) {
  at::manual_seed(5);
  auto model = build_model(kGqa + "qk_norm = true\n");
  const Captured c =
      capture_forward(*model, at::randint(0, 50, {2, 12}, at::kLong), {"layers.0.attention", "layers.2.attention"});
  for (const char* point : {"layers.0.attention", "layers.2.attention"}) {
    const at::Tensor& p = c.values.at(point);
    const at::Tensor above = at::ones({12, 12}, at::kBool).triu(1);
    EXPECT_EQ(p.masked_select(above).abs().max().item<float>(), 0.0f) << point;
    EXPECT_LT(max_abs_diff(p.sum(-1), at::ones({2, 4, 12})), 1e-6) << point;
    EXPECT_GT(p.min().item<float>(), -1e-30f) << point;
  }
}

// probs @ v equals what both attention kernels compute, for GQA and for queries after cached keys
// (the query rows sit at the last positions: the mask's offset).
TEST(ModelCapture, AttentionProbabilitiesAreTheOnesTheKernelsApply) {
  at::manual_seed(6);
  for (const auto& [queries, keys] : {std::pair<int64_t, int64_t>{10, 10}, {3, 11}, {1, 7}}) {
    SCOPED_TRACE(std::to_string(queries) + " queries, " + std::to_string(keys) + " keys");
    const at::Tensor q = at::randn({2, 6, queries, 8}), k = at::randn({2, 2, keys, 8}), v = at::randn({2, 2, keys, 8});
    const at::Tensor probs = builtin::models::attention_probabilities(q, k);
    ASSERT_EQ(probs.sizes(), (at::IntArrayRef{2, 6, queries, keys}));
    const at::Tensor applied = at::matmul(probs, v.repeat_interleave(3, 1));
    EXPECT_LT(max_abs_diff(applied, builtin::models::causal_attention(q, k, v)), 1e-5);
    EXPECT_LT(max_abs_diff(applied, builtin::models::flash_attention(q, k, v)), 1e-5);
  }
}

const std::string kMoe = kGqa + "num_experts = 4\nmoe_top_k = 2\nmoe_frequency = 2\n";  // layer 1 is MoE

TEST(ModelCapture, RouterPointsAreEachTokensExpertsAndEachSequencesCounts) {
  at::manual_seed(8);
  auto model = build_model(kMoe);
  const std::string r = "layers.1.mlp.router.";
  const Captured c = capture_forward(*model, at::randint(0, 50, {3, 7}, at::kLong),
                                     {r + "choices", r + "weights", r + "expert_counts"});
  const at::Tensor& choices = c.values.at(r + "choices");
  const at::Tensor& weights = c.values.at(r + "weights");
  const at::Tensor& counts = c.values.at(r + "expert_counts");
  ASSERT_EQ(choices.scalar_type(), at::kLong);
  ASSERT_EQ(counts.scalar_type(), at::kLong);
  EXPECT_EQ(choices.sizes().vec(), (std::vector<int64_t>{3, 7, 2}));
  EXPECT_EQ(weights.sizes().vec(), (std::vector<int64_t>{3, 7, 2}));
  EXPECT_EQ(counts.sizes().vec(), (std::vector<int64_t>{3, 4}));
  EXPECT_GE(choices.min().item<int64_t>(), 0);
  EXPECT_LT(choices.max().item<int64_t>(), 4);
  EXPECT_TRUE(choices.select(2, 0).ne(choices.select(2, 1)).all().item<bool>());  // two distinct experts
  // softmax_topk: the renormalised top-2, the larger first; each row sums to 1 within a float32 rounding.
  EXPECT_TRUE(weights.select(2, 0).ge(weights.select(2, 1)).all().item<bool>());
  EXPECT_LT(max_abs_diff(weights.sum(-1), at::ones({3, 7})), 2 * std::numeric_limits<float>::epsilon());
  for (int64_t b = 0; b < 3; ++b) {  // each sequence's row: its 7 tokens x 2 slots, per expert
    EXPECT_TRUE(at::equal(counts[b], at::bincount(choices[b].reshape(-1), {}, 4))) << b;
  }
}

TEST(ModelCapture, RouterPointsOfADenseLayerAreRefusedNamingTheMoELayers) {
  auto model = build_model(kMoe);
  model->set_capture({"layers.2.mlp.router.choices"}, [](const std::string&, const at::Tensor&) {});
  try {
    const at::NoGradGuard no_grad;
    model->forward(at::randint(0, 50, {1, 4}, at::kLong));
    ADD_FAILURE() << "a dense layer's router point was captured";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer 2 is a dense layer and has no router to capture "
                                         "(layers.2.mlp.router.*): the MoE layers are 1 ([model] num_experts = 4, "
                                         "moe_frequency = 2)"),
              std::string::npos)
        << e.what();
  }
  model->set_capture({}, {});
}

TEST(ModelCapture, CapturingLeavesForwardBitIdentical) {
  at::manual_seed(7);
  auto model = build_model(kMoe);
  const at::Tensor tokens = at::randint(0, 50, {2, 11}, at::kLong);
  at::Tensor before;
  {
    const at::NoGradGuard no_grad;
    before = model->forward(tokens);
  }
  const Captured c = capture_forward(*model, tokens, declared_points(3, {1}));
  EXPECT_TRUE(at::equal(before, c.logits));
  int after_clear = 0;
  model->set_capture(declared_points(3, {1}), [&](const std::string&, const at::Tensor&) { ++after_clear; });
  model->set_capture({}, {});
  const at::Tensor after = model->forward(tokens);
  EXPECT_TRUE(at::equal(before, after.detach()));
  EXPECT_EQ(after_clear, 0);
  EXPECT_TRUE(after.requires_grad());  // the training path still builds its graph
}

// Captures every point of a model built from `model_toml`, writes them with the model's parameters
// and `config_json` for the oracle, which compares each point with its own float64 forward.
void expect_points_match_reference(const std::string& label, const std::string& model_toml,
                                   const std::string& config_json, int64_t n_layers,
                                   const std::vector<int64_t>& moe_layers = {}) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  at::manual_seed(1234);
  auto model = build_model("[model]\n" + model_toml);
  {
    // Off the init values (norm weights 1), so the norms' weights are part of what is compared.
    const at::NoGradGuard g;
    for (auto& p : model->named_parameters()) {
      if (p.value().dim() == 1) p.value().add_(at::randn_like(p.value()) * 0.2);
    }
  }
  const auto dir = temp_dir("capture_oracle");
  for (const auto& p : model->named_parameters()) write_npy(dir / (p.key() + ".npy"), p.value());
  std::ofstream(dir / "config.json") << config_json;
  const at::Tensor tokens = at::randint(0, 50, {2, 13}, at::kLong);
  const std::vector<std::string> points = declared_points(n_layers, moe_layers);
  const Captured c = capture_forward(*model, tokens, points);
  {
    data::NpzWriter npz(dir / "acts.npz");
    npz.add("tokens", "<i8", 8, tokens.sizes().vec(), tokens.data_ptr(), tokens.nbytes());
    for (const std::string& point : points) {
      const at::Tensor v = c.values.at(point).contiguous();
      const bool integer = v.scalar_type() == at::kLong;  // the router's choices and counts
      npz.add(point, integer ? "<i8" : "<f4", integer ? 8 : 4, v.sizes().vec(), v.data_ptr(), v.nbytes());
    }
    npz.close();
  }
  std::string out;
  EXPECT_EQ(run_oracle("llama_reference.py", {dir.string(), "--activations", (dir / "acts.npz").string()}, &out), 0)
      << out;
  std::printf("[capture oracle] %s\n%s", label.c_str(), out.c_str());
  std::filesystem::remove_all(dir);
}

TEST(ModelCapture, DenseGqaQkNormPointsMatchTheReference) {
  expect_points_match_reference(
      "dense GQA qk_norm",
      "dim = 64\nn_layers = 3\nn_heads = 8\nn_kv_heads = 2\nvocab_size = 50\nqk_norm = true\nmax_seq_len = 32\n"
      "init_std = 0.1\n",
      R"({"dim": 64, "n_layers": 3, "n_heads": 8, "n_kv_heads": 2, "norm_type": "rmsnorm", "norm_eps": 1e-5,
          "activation": "silu", "rope_theta": 10000.0, "tie_embeddings": false, "qk_norm": true})",
      3);
}

TEST(ModelCapture, MoEPointsMatchTheReference) {
  expect_points_match_reference(
      "MoE top-2 of 4, shared expert",
      "dim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 50\nmax_seq_len = 32\ninit_std = 0.1\n"
      "num_experts = 4\nmoe_top_k = 2\nmoe_frequency = 2\nmoe_shared_experts = 1\n",
      R"({"dim": 32, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "norm_type": "rmsnorm", "norm_eps": 1e-5,
          "activation": "silu", "rope_theta": 10000.0, "tie_embeddings": false, "qk_norm": false,
          "num_experts": 4, "moe_top_k": 2, "moe_frequency": 2})",
      2, {1});
}

}  // namespace
}  // namespace kforge::test::models
