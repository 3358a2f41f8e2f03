// Data parallelism with the all-reduce overlapped with the backward, between two ranks (threads),
// against the whole model's mean gradient computed on one process.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "parallel/replicated_model.h"
#include "support/tiny_blocks_model.h"
#include "support/two_ranks.h"

namespace kforge::test {
namespace {

struct Outcome {
  std::map<std::string, at::Tensor> grads;
  int64_t overlapped = -1;
};

// Runs `body(model, replicated)` on both ranks, then sync(); returns each rank's gradients.
std::vector<Outcome> on_two_replicas(int64_t micro_batches,
                                     const std::function<void(TinyModel&, parallel::ReplicatedModel&, int)>& body) {
  std::vector<Outcome> out(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    TinyModel model;
    std::vector<sdk::NamedParameter> params;
    for (const auto& item : model.named_parameters()) params.push_back({item.key(), item.value()});
    parallel::ReplicatedModel replicated(model, rt.dp(), params, micro_batches);
    body(model, replicated, rt.rank());
    replicated.sync();
    Outcome& o = out[static_cast<size_t>(rt.rank())];
    for (const auto& p : params) o.grads.emplace(p.name, p.tensor.grad().clone());
    o.overlapped = replicated.overlapped_blocks();
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  return out;
}

void expect_reference(const std::vector<Outcome>& outcomes, double scale = 1.0) {
  const auto expected = tiny_reference_grads();
  for (int rank = 0; rank < 2; ++rank) {
    for (const auto& [name, grad] : expected) {
      EXPECT_TRUE(at::allclose(outcomes[static_cast<size_t>(rank)].grads.at(name), grad * scale, 1e-5, 1e-6))
          << name << " rank " << rank;
    }
  }
}

TEST(ReplicatedModel, EveryBlockIsReducedDuringTheBackwardAndGradientsAreTheMean) {
  const auto outcomes = on_two_replicas(1, [](TinyModel&, parallel::ReplicatedModel& r, int rank) {
    tiny_loss(r.forward(tiny_tokens(rank)), rank).backward();
  });
  expect_reference(outcomes);
  for (const Outcome& o : outcomes) EXPECT_EQ(o.overlapped, 3);
}

TEST(ReplicatedModel, OnlyTheLastMicroBatchStartsTheReduction) {
  const auto outcomes = on_two_replicas(2, [](TinyModel&, parallel::ReplicatedModel& r, int rank) {
    for (int k = 0; k < 2; ++k) (tiny_loss(r.forward(tiny_tokens(rank)), rank) / 2).backward();
  });
  expect_reference(outcomes);
  for (const Outcome& o : outcomes) EXPECT_EQ(o.overlapped, 3);
}

// A step body that runs more backwards than it announced: the gradients change after their
// reduction started, which sync() detects and redoes, so the mean is still right.
TEST(ReplicatedModel, GradientsChangedAfterTheirReductionStartedAreReducedAgain) {
  const auto outcomes = on_two_replicas(1, [](TinyModel&, parallel::ReplicatedModel& r, int rank) {
    for (int k = 0; k < 2; ++k) tiny_loss(r.forward(tiny_tokens(rank)), rank).backward();
  });
  expect_reference(outcomes, 2.0);
  for (const Outcome& o : outcomes) EXPECT_EQ(o.overlapped, 0);
}

}  // namespace
}  // namespace kforge::test
