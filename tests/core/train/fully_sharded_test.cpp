// FSDP between two ranks (threads) on a tiny hand-written model with uneven row counts, against the
// same model trained whole in one process: gradients, clipping, eval forward, freeing, checkpoint
// slices.
#include "parallel/fully_sharded.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "support/tiny_blocks_model.h"
#include "support/two_ranks.h"

namespace kforge::test {
namespace {

struct RankResult {
  std::map<std::string, at::Tensor> shard_grads, shards;
  std::map<std::string, checkpoint::Placement> placements;
  at::Tensor eval_logits;
  at::Tensor whole;                      ///< the parameter held whole, after the step
  std::vector<std::string> whole_names;  ///< FullyShardedModel::whole()
  double norm = 0;
  bool all_released = false;
};

// One FSDP step on two ranks; `frozen` names a parameter that does not require a gradient, held whole when
// `frozen_whole`.
std::vector<RankResult> run_fsdp(const std::string& frozen, int micro_batches, double clip = 1e9,
                                 bool frozen_whole = false) {
  std::vector<RankResult> results(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    TinyModel model;
    if (!frozen.empty()) model.named_parameters()[frozen].requires_grad_(false);
    const dist::Group no_replicas;  // held by reference for the model's life
    parallel::FullyShardedModel fsdp(model, rt.dp(), no_replicas,
                                  frozen_whole ? std::set<std::string>{frozen} : std::set<std::string>{});
    RankResult& r = results[static_cast<size_t>(rt.rank())];
    for (int k = 0; k < micro_batches; ++k) {
      (tiny_loss(fsdp.forward(tiny_tokens(rt.rank())), rt.rank()) / micro_batches).backward();
    }
    fsdp.finish_backward();
    r.norm = fsdp.clip_gradients(clip);
    r.all_released = true;
    for (const auto& item : model.named_parameters()) {
      if (frozen_whole && item.key() == frozen) {
        r.whole = item.value().detach().clone();
      } else {
        r.all_released &= item.value().storage().nbytes() == 0;
      }
    }
    for (const auto& p : fsdp.whole()) r.whole_names.push_back(p.name);
    {
      at::NoGradGuard no_grad;
      r.eval_logits = fsdp.forward(tiny_tokens(0));
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
  const auto expected = tiny_reference_grads();
  const auto results = run_fsdp("", 1);
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
  const auto expected = tiny_reference_grads();
  const auto results = run_fsdp("", 3);  // three identical micro-batches of loss / 3
  for (int rank = 0; rank < 2; ++rank) {
    for (const auto& [name, grad] : expected) {
      EXPECT_TRUE(at::allclose(results[static_cast<size_t>(rank)].shard_grads.at(name), rows_of(grad, rank), 1e-5, 1e-6))
          << name << " rank " << rank;
    }
  }
}

TEST(FullyShardedModel, GlobalNormIsOverAllShardsAndClippingScalesThem) {
  const auto expected = tiny_reference_grads();
  double squares = 0;
  for (const auto& [name, grad] : expected) squares += grad.square().sum().item<double>();
  const double norm = std::sqrt(squares);
  const auto results = run_fsdp("", 1, norm / 4);
  for (int rank = 0; rank < 2; ++rank) {
    const RankResult& r = results[static_cast<size_t>(rank)];
    EXPECT_NEAR(r.norm, norm, 1e-5 * norm) << "rank " << rank;
    const double coef = (norm / 4) / (norm + 1e-6);
    for (const auto& [name, grad] : expected) {
      EXPECT_TRUE(at::allclose(r.shard_grads.at(name), rows_of(grad, rank) * coef, 1e-5, 1e-6)) << name;
    }
  }
}

// A frozen head (root), and a frozen embedding: then no block's input needs a gradient, so no
// block's backward hook runs and finish_backward() reduces the blocks.
TEST(FullyShardedModel, FrozenParameterGetsNoShardGradientAndTheOthersTheirMean) {
  for (const std::string frozen : {"head", "embed"}) {
    const auto expected = tiny_reference_grads(frozen);
    const auto results = run_fsdp(frozen, 1);
    for (int rank = 0; rank < 2; ++rank) {
      const RankResult& r = results[static_cast<size_t>(rank)];
      EXPECT_EQ(r.shard_grads.count(frozen), 0u) << frozen << " rank " << rank;
      for (const auto& [name, grad] : expected) {
        if (name == frozen) continue;
        ASSERT_TRUE(r.shard_grads.count(name)) << name << " with " << frozen << " frozen, rank " << rank;
        EXPECT_TRUE(at::allclose(r.shard_grads.at(name), rows_of(grad, rank), 1e-5, 1e-6)) << name << " rank " << rank;
      }
      EXPECT_TRUE(r.all_released) << frozen << " frozen, rank " << rank;
    }
  }
}

// A parameter the run never trains (as a frozen vision encoder) held whole: outside the shards, the placements and
// the gathered units, never freed, unchanged; the model's output and the others' gradients are as when it is sharded.
TEST(FullyShardedModel, AFrozenParameterHeldWholeStaysWholeAndTheOthersGetTheirMean) {
  for (const std::string frozen : {"head", "embed", "b1_a"}) {  // root parameters, and a block's
    const auto expected = tiny_reference_grads(frozen);
    const auto sharded = run_fsdp(frozen, 1);
    const auto results = run_fsdp(frozen, 1, 1e9, /*frozen_whole=*/true);
    const at::Tensor initial = TinyModel().named_parameters()[frozen].detach();
    for (int rank = 0; rank < 2; ++rank) {
      const RankResult& r = results[static_cast<size_t>(rank)];
      EXPECT_EQ(r.whole_names, std::vector<std::string>{frozen});
      EXPECT_EQ(r.shards.count(frozen), 0u) << frozen;
      EXPECT_EQ(r.placements.count("model/" + frozen), 0u) << frozen;
      ASSERT_TRUE(r.whole.defined()) << frozen;
      EXPECT_TRUE(at::equal(r.whole, initial)) << frozen << " rank " << rank;
      EXPECT_TRUE(r.all_released) << "the sharded parameters are still freed after the step; " << frozen;
      EXPECT_TRUE(at::equal(r.eval_logits, sharded[static_cast<size_t>(rank)].eval_logits)) << frozen;
      for (const auto& [name, grad] : expected) {
        if (name == frozen) continue;
        ASSERT_TRUE(r.shard_grads.count(name)) << name << " with " << frozen << " whole, rank " << rank;
        EXPECT_TRUE(at::allclose(r.shard_grads.at(name), rows_of(grad, rank), 1e-5, 1e-6)) << name << " rank " << rank;
      }
    }
  }
}

TEST(FullyShardedModel, EvalForwardEqualsTheWholeModelAndShardsAreItsRows) {
  TinyModel whole;
  at::Tensor want;
  {
    at::NoGradGuard no_grad;
    want = whole.forward(tiny_tokens(0));
  }
  const auto results = run_fsdp("", 1);
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

TEST(FullyShardedModel, InPlaceChangesTheModelMakesInItsForwardReachTheShards) {
  const at::Tensor before = TinyModel().named_parameters()["b2_c"].detach().clone();
  std::vector<at::Tensor> after(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    TinyModel model;
    model.mutate_in_forward = true;
    const dist::Group no_replicas;  // held by reference for the model's life
    parallel::FullyShardedModel fsdp(model, rt.dp(), no_replicas);
    at::NoGradGuard no_grad;
    for (int k = 0; k < 2; ++k) fsdp.forward(tiny_tokens(rt.rank()));
    for (const auto& p : fsdp.shards()) {
      if (p.name == "b2_c") after[static_cast<size_t>(rt.rank())] = p.tensor.clone();
    }
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_TRUE(at::equal(after[0], before + 1.0));  // two forwards of +0.5; rank 0 holds its one row
  EXPECT_EQ(after[1].numel(), 0);
}

TEST(FullyShardedModel, ModelBypassingTheBlockRunnerIsAnErrorNamingRunBlock) {
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    TinyModel model(/*bypass=*/true);
    const dist::Group no_replicas;  // held by reference for the model's life
    parallel::FullyShardedModel fsdp(model, rt.dp(), no_replicas);
    fsdp.forward(tiny_tokens(rt.rank()));
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("the model ran 2 of its 3 blocks through run_block()"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace kforge::test
