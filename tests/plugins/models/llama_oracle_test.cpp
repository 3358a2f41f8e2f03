// Forward logits and cross-entropy gradients of the C++ model against tests/oracles/llama_reference.py,
// an independent float64 implementation in python3-torch, also with an embedding prefix (the joint decoder's
// image tokens: forward_prefixed, with the prefix's gradient). Tolerance (fp32 model): atol 1e-5, rtol 1e-4.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "model_builder.h"
#include "support/npy.h"
#include "support/oracle.h"

namespace kforge::test::models {
namespace {

constexpr double kAtol = 1e-5;
constexpr double kRtol = 1e-4;

struct OracleCase {
  const char* label;
  std::string model_toml;  // [model] keys (after the header)
  std::string json;        // the same settings for the oracle
  int64_t prefix_len = 0;  // > 0: forward_prefixed with a random prefix of this many positions
};

void expect_close(const at::Tensor& actual, const at::Tensor& expected, const std::string& what) {
  expect_within(actual, expected, what, kAtol, kRtol);
}

void run_case(const OracleCase& c) {
  ASSERT_TRUE(kforge::test::oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  torch::manual_seed(1234);
  auto model = build_model("[model]\n" + c.model_toml);
  const int64_t vocab = model->named_parameters()["token_embedding.embedding.weight"].size(0);
  {
    // Move the 1-D parameters off their init values (norm weights 1, biases 0) so their handling is tested.
    at::NoGradGuard g;
    for (auto& p : model->named_parameters()) {
      if (p.value().dim() == 1) p.value().add_(at::randn_like(p.value()) * 0.2);
    }
  }
  const auto dir = temp_dir("oracle_llama");
  const int64_t batch = 2, seq = 12;
  const at::Tensor tokens = at::randint(0, vocab, {batch, seq}, at::kLong);
  const at::Tensor targets = at::randint(0, vocab, {batch, seq}, at::kLong);
  write_npy(dir / "tokens.npy", tokens);
  write_npy(dir / "targets.npy", targets);
  for (const auto& p : model->named_parameters()) write_npy(dir / (p.key() + ".npy"), p.value());
  std::ofstream(dir / "config.json") << c.json;

  at::Tensor prefix;
  if (c.prefix_len > 0) {
    const int64_t dim = model->named_parameters()["token_embedding.embedding.weight"].size(1);
    prefix = at::randn({batch, c.prefix_len, dim}).requires_grad_(true);
    write_npy(dir / "prefix.npy", prefix.detach());
  }
  const at::Tensor logits = prefix.defined() ? model->forward_prefixed(prefix, tokens) : model->forward(tokens);
  const at::Tensor loss = at::cross_entropy_loss(logits.reshape({batch * seq, vocab}), targets.reshape({-1}));
  loss.backward();

  std::string out;
  ASSERT_EQ(run_oracle("llama_reference.py", {dir.string()}, &out), 0) << out;
  const at::Tensor ref_logits = read_npy(dir / "logits.npy");
  expect_close(logits.detach(), ref_logits, "logits");
  double worst_grad = 0.0;
  expect_close(loss.detach().reshape({1}), read_npy(dir / "loss.npy"), "loss");
  int compared = 0;
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    const at::Tensor ref_grad = read_npy(dir / ("grad." + p.key() + ".npy"));
    expect_close(p.value().grad(), ref_grad, "grad of " + p.key());
    worst_grad = std::max(worst_grad, (p.value().grad().to(at::kDouble) - ref_grad).abs().max().item<double>());
    ++compared;
  }
  EXPECT_GT(compared, 0);
  if (prefix.defined()) {
    ASSERT_TRUE(prefix.grad().defined());
    expect_close(prefix.grad(), read_npy(dir / "grad.prefix.npy"), "grad of the prefix");
  }
  std::printf("[oracle] %s: %d parameters; max |logits diff| %.3g (max |logit| %.3g), max |grad diff| %.3g\n", c.label,
              compared, (logits.detach().to(at::kDouble) - ref_logits).abs().max().item<double>(),
              ref_logits.abs().max().item<double>(), worst_grad);
  std::filesystem::remove_all(dir);
}

TEST(ModelOracle, GqaWithQkNormMatchesReference) {
  run_case({"gqa_qk_norm",
            "dim = 64\nn_layers = 2\nn_heads = 8\nn_kv_heads = 2\nvocab_size = 97\nqk_norm = true\n"
            "max_seq_len = 32\ninit_std = 0.1\nrope_theta = 10000.0\n",
            R"({"dim": 64, "n_layers": 2, "n_heads": 8, "n_kv_heads": 2, "norm_type": "rmsnorm", "norm_eps": 1e-5,
                "activation": "silu", "rope_theta": 10000.0, "tie_embeddings": false, "qk_norm": true})"});
}

TEST(ModelOracle, EmbeddingPrefixMatchesReference) {
  run_case({"gqa_prefix",
            "dim = 64\nn_layers = 2\nn_heads = 8\nn_kv_heads = 2\nvocab_size = 97\nmax_seq_len = 32\ninit_std = 0.1\n",
            R"({"dim": 64, "n_layers": 2, "n_heads": 8, "n_kv_heads": 2, "norm_type": "rmsnorm", "norm_eps": 1e-5,
                "activation": "silu", "rope_theta": 10000.0, "tie_embeddings": false, "qk_norm": false})",
            7});
}

TEST(ModelOracle, TiedMhaMatchesReference) {
  run_case({"tied_mha",
            "dim = 48\nn_layers = 2\nn_heads = 4\nvocab_size = 61\ntie_embeddings = true\nmax_seq_len = 16\n"
            "init_std = 0.1\nrope_theta = 500.0\nnorm_eps = 1e-6\n",
            R"({"dim": 48, "n_layers": 2, "n_heads": 4, "n_kv_heads": 4, "norm_type": "rmsnorm", "norm_eps": 1e-6,
                "activation": "silu", "rope_theta": 500.0, "tie_embeddings": true, "qk_norm": false})"});
}

TEST(ModelOracle, MqaLayerNormGeluMatchesReference) {
  run_case({"mqa_layernorm_gelu",
            "dim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = 1\nvocab_size = 40\nnorm_type = \"layernorm\"\n"
            "activation = \"gelu\"\nffn_hidden_dim = 72\nmax_seq_len = 12\ninit_std = 0.1\n",
            R"({"dim": 32, "n_layers": 2, "n_heads": 4, "n_kv_heads": 1, "norm_type": "layernorm", "norm_eps": 1e-5,
                "activation": "gelu", "rope_theta": 10000.0, "tie_embeddings": false, "qk_norm": false})"});
}

TEST(ModelOracle, ReluMatchesReference) {
  run_case({"relu",
            "dim = 32\nn_layers = 1\nn_heads = 2\nvocab_size = 30\nactivation = \"relu\"\nmax_seq_len = 12\n"
            "init_std = 0.1\n",
            R"({"dim": 32, "n_layers": 1, "n_heads": 2, "n_kv_heads": 2, "norm_type": "rmsnorm", "norm_eps": 1e-5,
                "activation": "relu", "rope_theta": 10000.0, "tie_embeddings": false, "qk_norm": false})"});
}

}  // namespace
}  // namespace kforge::test::models
