// Forward behaviour: output shapes for MHA/GQA/MQA, causality, sequence-length limit, config errors; the embedding
// prefix (forward_prefixed) against the tokens it embeds, its length budget and its refusals.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>
#include <torch/utils.h>

#include "model_builder.h"
#include "transformer/model_config.h"

namespace kforge::test::models {
namespace {

TEST(ModelForward, OutputShapesMhaGqaMqa) {
  for (const char* kv : {"8", "4", "2", "1"}) {
    SCOPED_TRACE(std::string("n_kv_heads = ") + kv);
    auto model = build_model(std::string("[model]\ndim = 64\nn_layers = 2\nn_heads = 8\nn_kv_heads = ") + kv +
                             "\nvocab_size = 77\nmax_seq_len = 32\n");
    const at::Tensor tokens = at::randint(0, 77, {3, 11}, at::kLong);
    const at::Tensor logits = model->forward(tokens);
    EXPECT_EQ(logits.sizes(), (at::IntArrayRef{3, 11, 77}));
    EXPECT_EQ(logits.scalar_type(), at::kFloat);
    EXPECT_TRUE(logits.isfinite().all().item<bool>());
    const int64_t kv_dim = std::stoll(kv) * 8;
    EXPECT_EQ(model->named_parameters()["layers.1.attention.k_proj.weight"].sizes(), (at::IntArrayRef{kv_dim, 64}));
    EXPECT_EQ(model->named_parameters()["layers.1.attention.v_proj.weight"].sizes(), (at::IntArrayRef{kv_dim, 64}));
  }
}

TEST(ModelForward, IsCausal) {
  torch::manual_seed(1);
  auto model = build_model("[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 50\n"
                           "init_std = 0.1\n");
  at::Tensor tokens = at::randint(0, 50, {2, 10}, at::kLong);
  const at::Tensor before = model->forward(tokens).detach();
  tokens.index_put_({at::indexing::Slice(), 6}, (tokens.select(1, 6) + 1) % 50);
  const at::Tensor after = model->forward(tokens).detach();
  EXPECT_TRUE(at::equal(before.narrow(1, 0, 6), after.narrow(1, 0, 6)));  // earlier positions untouched
  EXPECT_GT((before.narrow(1, 6, 4) - after.narrow(1, 6, 4)).abs().max().item<double>(), 1e-4);
}

TEST(ModelForward, BatchRowsAreIndependent) {
  auto model = build_model("[model]\ndim = 32\nn_layers = 1\nn_heads = 4\nn_kv_heads = 1\nvocab_size = 20\n");
  const at::Tensor tokens = at::randint(0, 20, {3, 7}, at::kLong);
  const at::Tensor all = model->forward(tokens).detach();
  const at::Tensor one = model->forward(tokens.narrow(0, 1, 1)).detach();
  EXPECT_TRUE(at::allclose(all.narrow(0, 1, 1), one, 1e-5, 1e-6));
}

TEST(ModelForward, SequenceLongerThanMaxSeqLenIsRejected) {
  auto model = build_model("[model]\ndim = 32\nn_layers = 1\nn_heads = 2\nvocab_size = 20\nmax_seq_len = 8\n");
  EXPECT_NO_THROW(model->forward(at::zeros({1, 8}, at::kLong)));
  try {
    model->forward(at::zeros({1, 9}, at::kLong));
    FAIL() << "expected an error";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_seq_len"), std::string::npos) << e.what();
  }
}

// A prefix that is the embedding of a sequence's first P tokens gives the logits forward() gives for the rest: the
// prefix takes positions 0..P-1 of one causal stack and only the token positions reach the head.
TEST(ModelForward, EmbeddingPrefixOfTheFirstTokensGivesTheLogitsOfTheRest) {
  torch::manual_seed(3);
  auto model = build_model(
      "[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 30\n"
      "init_std = 0.1\n");
  const at::Tensor tokens = at::randint(0, 30, {2, 9}, at::kLong);
  const at::Tensor whole = model->forward(tokens).detach();
  const at::Tensor embedding = model->named_parameters()["token_embedding.embedding.weight"].detach();
  const at::Tensor prefix = embedding.index_select(0, tokens.narrow(1, 0, 4).reshape({-1})).reshape({2, 4, 32});
  const at::Tensor rest = model->forward_prefixed(prefix, tokens.narrow(1, 4, 5)).detach();
  ASSERT_EQ(rest.sizes(), (at::IntArrayRef{2, 5, 30}));
  EXPECT_TRUE(at::allclose(rest, whole.narrow(1, 4, 5), 1e-5, 1e-6))
      << (rest - whole.narrow(1, 4, 5)).abs().max().item<double>();
}

// Cached decoding with a prefix: the prefix and the first tokens in one call, then a token at a time, give the logits
// forward_prefixed gives over the whole sequence.
TEST(ModelForward, CachedDecodingWithAPrefixMatchesTheWholeForward) {
  torch::manual_seed(4);
  auto model = build_model(
      "[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 30\n"
      "init_std = 0.1\nmax_seq_len = 16\n");
  const at::Tensor prefix = at::randn({2, 3, 32}), tokens = at::randint(0, 30, {2, 6}, at::kLong);
  const at::Tensor whole = model->forward_prefixed(prefix, tokens).detach();
  at::NoGradGuard no_grad;
  auto state = model->start_decoding(2, 9);
  std::vector<at::Tensor> pieces = {model->decode_prefixed(prefix, tokens.narrow(1, 0, 4), *state)};
  for (int64_t t = 4; t < 6; ++t) pieces.push_back(model->decode(tokens.narrow(1, t, 1), *state));
  const at::Tensor cached = at::cat(pieces, 1);
  EXPECT_TRUE(at::allclose(cached, whole, 1e-5, 1e-5)) << (cached - whole).abs().max().item<double>();
  try {
    model->decode(tokens.narrow(1, 0, 1), *state);
    ADD_FAILURE() << "expected the full cache to refuse another token";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the cache's 9 positions"), std::string::npos) << e.what();
  }
}

TEST(ModelForward, EmbeddingPrefixCountsTowardsMaxSeqLenAndBadPrefixesAreRefused) {
  auto model = build_model("[model]\ndim = 32\nn_layers = 1\nn_heads = 2\nvocab_size = 20\nmax_seq_len = 8\n");
  const at::Tensor tokens = at::zeros({1, 5}, at::kLong);
  EXPECT_NO_THROW(model->forward_prefixed(at::zeros({1, 3, 32}), tokens));
  const auto expect_error = [&](const at::Tensor& prefix, const std::string& needle) {
    try {
      model->forward_prefixed(prefix, tokens);
      ADD_FAILURE() << "expected an error naming " << needle;
    } catch (const sdk::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(at::zeros({1, 4, 32}), "max_seq_len");
  expect_error(at::zeros({1, 3, 16}), "the model dim");
  expect_error(at::zeros({2, 3, 32}), "2 rows");
  model->set_documents(at::zeros({1, 5}, at::kLong));
  expect_error(at::zeros({1, 3, 32}), "pack_sequences");
}

TEST(ModelForward, BackwardReachesEveryParameter) {
  auto model = build_model("[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 20\n"
                           "qk_norm = true\n");
  const at::Tensor logits = model->forward(at::randint(0, 20, {2, 5}, at::kLong));
  at::cross_entropy_loss(logits.reshape({10, 20}), at::randint(0, 20, {10}, at::kLong)).backward();
  for (const auto& p : model->named_parameters()) {
    SCOPED_TRACE(p.key());
    ASSERT_TRUE(p.value().grad().defined());
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0);
  }
}

TEST(ModelConfigErrors, BadMixtureOfExpertsSettingsAreConfigErrors) {
  // top_k beyond the expert count: the host's rules or the plugin, a ConfigError naming the key.
  try {
    build_model("[model]\ndim = 32\nn_layers = 1\nn_heads = 2\nvocab_size = 20\nnum_experts = 2\nmoe_top_k = 3\n");
    FAIL() << "expected ConfigError";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("moe_top_k"), std::string::npos) << e.what();
  }
  kforge::builtin::models::ModelConfig c;
  c.num_experts = 4;
  c.moe_frequency = 0;
  EXPECT_THROW(c.validate(), sdk::ConfigError);
  // A router no loaded plugin provides.
  try {
    build_model("[model]\ndim = 32\nn_layers = 1\nn_heads = 2\nvocab_size = 20\nnum_experts = 2\n"
                "moe_router = \"expert_choice\"\n");
    FAIL() << "expected ConfigError";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("expert_choice"), std::string::npos) << e.what();
  }
}

TEST(ModelConfigErrors, BadHeadSplitsAreConfigErrors) {
  // Caught by the host's rules or by the plugin: either way a ConfigError naming the key.
  try {
    build_model("[model]\ndim = 32\nn_layers = 1\nn_heads = 4\nn_kv_heads = 3\nvocab_size = 20\n");
    FAIL() << "expected ConfigError";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("n_kv_heads"), std::string::npos) << e.what();
  }
  try {
    build_model("[model]\ndim = 36\nn_layers = 1\nn_heads = 4\nvocab_size = 20\n");  // head_dim 9: odd
    FAIL() << "expected ConfigError";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("n_heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge::test::models
