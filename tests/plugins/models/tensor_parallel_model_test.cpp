// The transformer split over two tensor-parallel ranks (two threads with Gloo groups) against the whole model built
// from the same seed: each rank's logits are the whole model's vocabulary columns, each slice's gradient is the whole
// gradient's slice and every parameter kept whole gets the whole model's gradient (float64, so the only difference is
// the summation order).
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

#include "dist/tensor_group.h"
#include "support/max_abs_diff.h"
#include "support/two_ranks.h"
#include "transformer/transformer.h"

namespace kforge::test::models {
namespace {

using builtin::models::ModelConfig;
using builtin::models::Transformer;

ModelConfig small_config(bool tied, bool qk_norm, const std::string& activation) {
  ModelConfig c;
  c.dim = 32;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.vocab_size = 48;
  c.max_seq_len = 16;
  c.tie_embeddings = tied;
  c.qk_norm = qk_norm;
  c.activation = activation;
  return c;
}

struct ShardedPass {
  at::Tensor logits;
  std::map<std::string, at::Tensor> grads;  ///< parameter name -> gradient, as the rank holds it
  std::vector<sdk::TensorShard> shards;
};

// Forward of fixed tokens and the backward of a fixed linear function of the logits: the whole vocabulary's on one
// process, this rank's columns of it under tensor parallelism.
ShardedPass run(const ModelConfig& c, const sdk::TensorParallel* tp) {
  static std::mutex draws;  // the rank threads share the global generator: one seeds and draws at a time
  std::unique_lock<std::mutex> lock(draws);
  at::manual_seed(7);
  Transformer model(c, nullptr, nullptr, tp);
  model.to(at::kDouble);
  at::manual_seed(11);
  const at::Tensor tokens = at::randint(c.vocab_size, {2, 8}, at::kLong);
  const at::Tensor probe = at::randn({2, 8, c.vocab_size}, at::kDouble);
  lock.unlock();
  const at::Tensor logits = model.forward(tokens);
  const int64_t width = logits.size(2), first = tp ? width * tp->rank() : 0;
  (logits * probe.narrow(2, first, width)).sum().backward();
  ShardedPass out{logits.detach(), {}, model.tensor_shards()};
  for (const auto& item : model.named_parameters(true)) out.grads[item.key()] = item.value().grad();
  return out;
}

void expect_slices_of_whole(const ModelConfig& c) {
  const ShardedPass whole = run(c, nullptr);
  std::vector<ShardedPass> ranks(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const dist::TensorGroup tp(rt.world());
    ranks[static_cast<size_t>(tp.rank())] = run(c, &tp);
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  const double tolerance = 1e-10;  // float64: the same products, summed in another order
  for (int r = 0; r < 2; ++r) {
    SCOPED_TRACE(fmt::format("rank {}", r));
    const ShardedPass& p = ranks[static_cast<size_t>(r)];
    ASSERT_EQ(p.logits.size(2), c.vocab_size / 2);  // never the whole vocabulary
    EXPECT_LT(max_abs_diff(p.logits, whole.logits.narrow(2, r * c.vocab_size / 2, c.vocab_size / 2)), tolerance);
    std::map<std::string, sdk::TensorShard> sliced;
    for (const auto& s : p.shards) sliced.emplace(s.name, s);
    ASSERT_EQ(p.grads.size(), whole.grads.size());
    for (const auto& [name, grad] : whole.grads) {
      SCOPED_TRACE(name);
      at::Tensor expected = grad;
      if (const auto it = sliced.find(name); it != sliced.end()) {
        EXPECT_EQ(it->second.global_shape, grad.sizes().vec());
        for (int64_t d = 0; d < grad.dim(); ++d) {
          expected = expected.narrow(d, it->second.offsets[static_cast<size_t>(d)], p.grads.at(name).size(d));
        }
      }
      ASSERT_EQ(p.grads.at(name).sizes(), expected.sizes());
      EXPECT_LT(max_abs_diff(p.grads.at(name), expected), tolerance);
    }
  }
  // Every projection, the embedding and an untied head are split; norms are whole.
  const size_t expected_slices = 1 + c.n_layers * (4 + (c.activation == "silu" ? 3 : 2)) + (c.tie_embeddings ? 0 : 1);
  EXPECT_EQ(ranks[0].shards.size(), expected_slices);
}

// Dense with untied embeddings: sequence parallelism (norms and residual stream on half the positions each).
TEST(TensorParallelTransformer, EachRanksSlicesComputeTheWholeModelsLogitsAndGradients) {
  expect_slices_of_whole(small_config(/*tied=*/false, /*qk_norm=*/false, "silu"));
}

// Tied embeddings: activations whole on every rank between the projections; QK-norm's weights see half the heads.
TEST(TensorParallelTransformer, TiedEmbeddingsQkNormAndGeluSplitAlike) {
  expect_slices_of_whole(small_config(/*tied=*/true, /*qk_norm=*/true, "gelu"));
}

TEST(TensorParallelTransformer, AHiddenSizeTpDoesNotDivideIsAConfigErrorNamingIt) {
  ModelConfig c = small_config(false, false, "silu");
  c.ffn_hidden_dim = 33;
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const dist::TensorGroup tp(rt.world());
    try {
      Transformer model(c, nullptr, nullptr, &tp);
    } catch (const sdk::ConfigError& e) {
      throw std::runtime_error(std::string("ConfigError: ") + e.what());
    }
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("ConfigError: the MLP's hidden size"), std::string::npos) << e;
    EXPECT_NE(e.find("(33) must be divisible by [distributed] tp (2)"), std::string::npos) << e;
  }
}

// Sequence parallelism splits positions evenly: a length tp does not divide is a ConfigError naming the keys.
TEST(TensorParallelTransformer, SequenceParallelismRefusesALengthTpDoesNotDivide) {
  const ModelConfig c = small_config(false, false, "silu");
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const dist::TensorGroup tp(rt.world());
    Transformer model(c, nullptr, nullptr, &tp);
    try {
      model.forward(at::zeros({1, 7}, at::kLong));
    } catch (const sdk::ConfigError& e) {
      throw std::runtime_error(std::string("ConfigError: ") + e.what());
    }
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("ConfigError: transformer: sequence parallelism (tp = 2"), std::string::npos) << e;
    EXPECT_NE(e.find("make [train] seq_len divisible by [distributed] tp"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace kforge::test::models
