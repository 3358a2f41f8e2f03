// FSDP between two ranks (threads) on a tiny hand-written model with uneven row counts, against the
// same model trained whole in one process: gradients, clipping, eval forward, freeing, checkpoint
// slices.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>

#include <cmath>

#include "train/fully_sharded.h"
#include "two_ranks.h"

namespace kforge::test {
namespace {

constexpr int64_t kVocab = 11, kDim = 6;

// root: embed [11, 6] and head [11, 6] (11 rows: 6 + 5 on two ranks); block 0: w [6, 6], g [6];
// block 1: a [5, 6], b [5, 6] (5 rows: 3 + 2); block 2: c [1, 6] (one row: rank 1 holds none).
class TinyModel final : public sdk::Model {
 public:
  /// bypass: block 1 is called directly instead of through run_block (a plugin's mistake).
  explicit TinyModel(bool bypass = false) : bypass_(bypass) {
    at::Generator gen = at::detail::createCPUGenerator(7);  // its own: ranks are threads of one process
    embed_ = register_parameter("embed", at::randn({kVocab, kDim}, gen));
    head_ = register_parameter("head", at::randn({kVocab, kDim}, gen) * 0.5);
    w_ = register_parameter("b0_w", at::randn({kDim, kDim}, gen) * 0.4);
    g_ = register_parameter("b0_g", at::randn({kDim}, gen));
    a_ = register_parameter("b1_a", at::randn({5, kDim}, gen) * 0.4);
    b_ = register_parameter("b1_b", at::randn({5, kDim}, gen) * 0.4);
    c_ = register_parameter("b2_c", at::randn({1, kDim}, gen));
  }
  at::Tensor forward(const at::Tensor& tokens) override {
    at::Tensor x = embed_.index_select(0, tokens.reshape({-1})).view({tokens.size(0), tokens.size(1), kDim});
    x = run_block(0, x, [&](const at::Tensor& in) { return in + at::tanh(at::matmul(in, w_.t())) * g_; });
    const BlockFn block1 = [&](const at::Tensor& in) { return in + at::matmul(at::tanh(at::matmul(in, a_.t())), b_); };
    x = bypass_ ? block1(x) : run_block(1, x, block1);
    x = run_block(2, x, [&](const at::Tensor& in) { return in * at::sigmoid(c_[0]); });
    return at::matmul(x, head_.t());
  }
  std::vector<sdk::ModelBlock> blocks() const override {
    return {{"b0", {"b0_w", "b0_g"}}, {"b1", {"b1_a", "b1_b"}}, {"b2", {"b2_c"}}};
  }
  double flops_per_token(int64_t) const override { return 0; }
  int64_t num_params_estimate() const override { return 0; }

 private:
  bool bypass_;
  at::Tensor embed_, head_, w_, g_, a_, b_, c_;
};

at::Tensor tokens_of(int rank) { return at::arange(rank * 3, rank * 3 + 16, at::kLong).remainder(kVocab).view({2, 8}); }

at::Tensor loss_of(const at::Tensor& logits, int rank) {
  const at::Tensor labels = (tokens_of(rank) * 5 + 1).remainder(kVocab);
  return at::cross_entropy_loss(logits.reshape({-1, kVocab}), labels.reshape({-1}));
}

// The whole model's parameters by name after one backward of the mean of both ranks' losses.
std::map<std::string, at::Tensor> reference_grads(bool freeze_head) {
  TinyModel model;
  if (freeze_head) model.named_parameters()["head"].requires_grad_(false);
  const at::Tensor loss = (loss_of(model.forward(tokens_of(0)), 0) + loss_of(model.forward(tokens_of(1)), 1)) / 2;
  loss.backward();
  std::map<std::string, at::Tensor> out;
  for (const auto& item : model.named_parameters()) out.emplace(item.key(), item.value().grad());
  return out;
}

struct RankResult {
  std::map<std::string, at::Tensor> shard_grads, shards;
  std::map<std::string, checkpoint::Placement> placements;
  at::Tensor eval_logits;
  double norm = 0;
  bool all_released = false;
};

std::vector<RankResult> run_fsdp(bool freeze_head, int micro_batches, double clip = 1e9) {
  std::vector<RankResult> results(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    TinyModel model;
    if (freeze_head) model.named_parameters()["head"].requires_grad_(false);
    train::FullyShardedModel fsdp(model, rt.dp(), dist::Group());
    RankResult& r = results[static_cast<size_t>(rt.rank())];
    for (int k = 0; k < micro_batches; ++k) {
      (loss_of(fsdp.forward(tokens_of(rt.rank())), rt.rank()) / micro_batches).backward();
    }
    fsdp.finish_backward();
    r.norm = fsdp.clip_gradients(clip);
    r.all_released = true;
    for (const auto& item : model.named_parameters()) r.all_released &= item.value().storage().nbytes() == 0;
    {
      at::NoGradGuard no_grad;
      r.eval_logits = fsdp.forward(tokens_of(0));
    }
    checkpoint::TensorMap model_tensors;
    for (const auto& p : fsdp.shards()) {
      r.shards.emplace(p.name, p.tensor.detach().clone());
      model_tensors.emplace(p.name, p.tensor);
      if (p.tensor.grad().defined()) r.shard_grads.emplace(p.name, p.tensor.grad().clone());
    }
    r.placements = fsdp.placements(model_tensors, {});
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  return results;
}

// Rows [first, first + n) of `whole`, as rank `rank` of two holds them (chunks of ceil(rows / 2)).
at::Tensor rows_of(const at::Tensor& whole, int rank) {
  const int64_t chunk = (whole.size(0) + 1) / 2;
  const int64_t first = std::min(whole.size(0), rank * chunk);
  return whole.narrow(0, first, std::min(chunk, whole.size(0) - first));
}

TEST(FullyShardedModel, ShardGradientsAreTheRowsOfTheWholeModelsMeanGradient) {
  const auto expected = reference_grads(false);
  const auto results = run_fsdp(false, 1);
  for (int rank = 0; rank < 2; ++rank) {
    const RankResult& r = results[static_cast<size_t>(rank)];
    ASSERT_EQ(r.shard_grads.size(), expected.size()) << "rank " << rank;
    for (const auto& [name, grad] : expected) {
      const at::Tensor want = rows_of(grad, rank);
      ASSERT_EQ(r.shard_grads.at(name).sizes(), want.sizes()) << name << " rank " << rank;
      EXPECT_TRUE(at::allclose(r.shard_grads.at(name), want, 1e-5, 1e-6)) << name << " rank " << rank;
    }
    EXPECT_TRUE(r.all_released) << "rank " << rank << " kept gathered parameters after the step";
  }
  EXPECT_EQ(results[1].shard_grads.at("b2_c").numel(), 0);  // one row over two ranks: rank 1 holds none
}

TEST(FullyShardedModel, MicroBatchesAccumulateIntoTheShards) {
  const auto expected = reference_grads(false);
  const auto results = run_fsdp(false, 3);  // three identical micro-batches of loss / 3
  for (int rank = 0; rank < 2; ++rank) {
    for (const auto& [name, grad] : expected) {
      EXPECT_TRUE(at::allclose(results[static_cast<size_t>(rank)].shard_grads.at(name), rows_of(grad, rank), 1e-5, 1e-6))
          << name << " rank " << rank;
    }
  }
}

TEST(FullyShardedModel, GlobalNormIsOverAllShardsAndClippingScalesThem) {
  const auto expected = reference_grads(false);
  double squares = 0;
  for (const auto& [name, grad] : expected) squares += grad.square().sum().item<double>();
  const double norm = std::sqrt(squares);
  const auto results = run_fsdp(false, 1, norm / 4);
  for (int rank = 0; rank < 2; ++rank) {
    const RankResult& r = results[static_cast<size_t>(rank)];
    EXPECT_NEAR(r.norm, norm, 1e-5 * norm) << "rank " << rank;
    const double coef = (norm / 4) / (norm + 1e-6);
    for (const auto& [name, grad] : expected) {
      EXPECT_TRUE(at::allclose(r.shard_grads.at(name), rows_of(grad, rank) * coef, 1e-5, 1e-6)) << name;
    }
  }
}

TEST(FullyShardedModel, FrozenParameterGetsNoShardGradient) {
  const auto expected = reference_grads(true);
  const auto results = run_fsdp(true, 1);
  for (int rank = 0; rank < 2; ++rank) {
    const RankResult& r = results[static_cast<size_t>(rank)];
    EXPECT_EQ(r.shard_grads.count("head"), 0u) << "rank " << rank;
    EXPECT_TRUE(at::allclose(r.shard_grads.at("b1_a"), rows_of(expected.at("b1_a"), rank), 1e-5, 1e-6));
  }
}

TEST(FullyShardedModel, EvalForwardEqualsTheWholeModelAndShardsAreItsRows) {
  TinyModel whole;
  at::Tensor want;
  {
    at::NoGradGuard no_grad;
    want = whole.forward(tokens_of(0));
  }
  const auto results = run_fsdp(false, 1);
  for (int rank = 0; rank < 2; ++rank) {
    const RankResult& r = results[static_cast<size_t>(rank)];
    // Parameters moved by no optimizer step: the same logits exactly (the same kernels on the same values).
    EXPECT_TRUE(at::equal(r.eval_logits, want)) << "rank " << rank;
    for (const auto& item : whole.named_parameters()) {
      EXPECT_TRUE(at::equal(r.shards.at(item.key()), rows_of(item.value().detach(), rank))) << item.key();
      const checkpoint::Placement& place = r.placements.at("model/" + item.key());
      EXPECT_EQ(place.global_shape, item.value().sizes().vec()) << item.key();
      EXPECT_EQ(place.offsets[0], rank == 0 ? 0 : std::min<int64_t>(item.value().size(0), (item.value().size(0) + 1) / 2))
          << item.key();
    }
  }
}

TEST(FullyShardedModel, ModelBypassingTheBlockRunnerIsAnErrorNamingRunBlock) {
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    TinyModel model(/*bypass=*/true);
    train::FullyShardedModel fsdp(model, rt.dp(), dist::Group());
    fsdp.forward(tokens_of(rt.rank()));
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("the model ran 2 of its 3 blocks through run_block()"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace kforge::test
