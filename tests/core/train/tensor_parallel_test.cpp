// Tensor parallelism ([distributed] tp): the host's differentiable enter/sum between two thread ranks, the
// vocabulary-parallel cross-entropy against ATen's on the whole logits, and real jobs through `kforge launch` on
// 127.0.0.1 against one rank: dense and MoE models (attention-only splits), activation checkpointing, tp x dp_shard,
// and checkpoints that hold the logical tensors and resume on other layouts.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/train/replicated_parameters.h"
#include "core/train/scaled_preset.h"
#include "core/train/train_fixture.h"
#include "dist/tensor_group.h"
#include "losses/vocab_parallel_cross_entropy.h"
#include "support/launch_job.h"
#include "support/max_abs_diff.h"
#include "support/precision_parity.h"
#include "support/same_checkpoint.h"
#include "support/two_ranks.h"

namespace kforge::test {
namespace {

// enter: identity forward, gradients summed over the ranks; sum: the ranks' sum forward, gradient unchanged; max:
// the elementwise maximum. Rank r weighs its results by r + 1, so the gradients show the sums.
TEST(TensorGroup, EnterSumsGradientsSumAddsValuesAndMaxTakesTheLargest) {
  std::vector<std::vector<at::Tensor>> seen(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const dist::TensorGroup group(rt.world());
    const int r = group.rank();
    const at::Tensor x = at::arange(4, at::kDouble).requires_grad_();
    const at::Tensor y = (at::arange(4, at::kDouble) * (r + 1)).requires_grad_();
    const at::Tensor entered = group.enter(x);
    const at::Tensor summed = group.sum(y);
    ((entered + summed) * (r + 1)).sum().backward();
    const at::Tensor bf16 = (at::arange(3, at::kFloat) / 3 + r).to(at::kBFloat16);
    seen[static_cast<size_t>(r)] = {
        entered.detach(), summed.detach(), x.grad(), y.grad(), group.max(at::tensor({1.0 * r, 5.0 - r}, at::kDouble)),
        group.sum(bf16)};
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  const at::Tensor ramp = at::arange(4, at::kDouble);
  const at::Tensor bf16_sum = ((at::arange(3, at::kFloat) / 3).to(at::kBFloat16).to(at::kFloat) +
                               (at::arange(3, at::kFloat) / 3 + 1).to(at::kBFloat16).to(at::kFloat))
                                  .to(at::kBFloat16);
  for (int r = 0; r < 2; ++r) {
    const auto& s = seen[static_cast<size_t>(r)];
    EXPECT_TRUE(at::equal(s[0], ramp)) << "rank " << r;
    EXPECT_TRUE(at::equal(s[1], ramp * 3)) << "rank " << r;                             // 1x + 2x
    EXPECT_TRUE(at::equal(s[2], at::full({4}, 3.0, at::kDouble))) << "rank " << r;      // (1 + 2) summed back
    EXPECT_TRUE(at::equal(s[3], at::full({4}, r + 1.0, at::kDouble))) << "rank " << r;  // its own weight
    EXPECT_TRUE(at::equal(s[4], at::tensor({1.0, 5.0}, at::kDouble))) << "rank " << r;
    EXPECT_EQ(s[5].scalar_type(), at::kBFloat16);
    EXPECT_TRUE(at::equal(s[5], bf16_sum)) << "rank " << r;  // summed in float32, rounded once
  }
}

// gather: every rank's rows concatenated along a dimension, gradients reduce-scattered back; scatter: this rank's part
// of the ranks' sum, gradients all-gathered back (sequence parallelism's pair), in float32 and bfloat16.
TEST(TensorGroup, GatherConcatenatesAndScatterSplitsTheSumAlongADimension) {
  std::vector<std::vector<at::Tensor>> seen(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const dist::TensorGroup group(rt.world());
    const int r = group.rank();
    const at::Tensor x = (at::arange(6, at::kDouble).view({1, 2, 3}) + 10 * r).requires_grad_();
    const at::Tensor gathered = group.gather(x, 1);  // [1, 4, 3]
    const at::Tensor y = (at::arange(12, at::kDouble).view({1, 4, 3}) * (r + 1)).requires_grad_();
    const at::Tensor scattered = group.scatter(y, 1);  // [1, 2, 3]
    (gathered * (r + 1)).sum().backward();
    (scattered * (r + 1)).sum().backward();
    const at::Tensor bf16 = (at::arange(4, at::kFloat).view({2, 2}) / 3 + r).to(at::kBFloat16);
    seen[static_cast<size_t>(r)] = {
        gathered.detach(), x.grad(), scattered.detach(), y.grad(), group.gather(bf16, 0), group.scatter(bf16, 0)};
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  const at::Tensor rows = at::arange(6, at::kDouble).view({1, 2, 3});
  const at::Tensor sums = at::arange(12, at::kDouble).view({1, 4, 3}) * 3;  // 1x + 2x
  const at::Tensor bf16_0 = (at::arange(4, at::kFloat).view({2, 2}) / 3).to(at::kBFloat16);
  const at::Tensor bf16_1 = (at::arange(4, at::kFloat).view({2, 2}) / 3 + 1).to(at::kBFloat16);
  const at::Tensor bf16_sum = (bf16_0.to(at::kFloat) + bf16_1.to(at::kFloat)).to(at::kBFloat16);
  for (int r = 0; r < 2; ++r) {
    const auto& s = seen[static_cast<size_t>(r)];
    EXPECT_TRUE(at::equal(s[0], at::cat({rows, rows + 10}, 1))) << "rank " << r;
    EXPECT_TRUE(at::equal(s[1], at::full({1, 2, 3}, 3.0, at::kDouble))) << "rank " << r;  // (1 + 2) summed back
    EXPECT_TRUE(at::equal(s[2], sums.narrow(1, 2 * r, 2))) << "rank " << r;
    EXPECT_TRUE(at::equal(s[3], at::cat({at::full({1, 2, 3}, 1.0, at::kDouble), at::full({1, 2, 3}, 2.0, at::kDouble)},
                                        1)))
        << "rank " << r;  // each part's gradient comes from the rank that holds it
    EXPECT_TRUE(at::equal(s[4], at::cat({bf16_0, bf16_1}))) << "rank " << r;
    EXPECT_TRUE(at::equal(s[5], bf16_sum.narrow(0, r, 1))) << "rank " << r;
  }
}

// Each rank holds half the vocabulary's columns: the summed cross-entropy (ignored labels skipped), every row's
// logsumexp and each rank's gradient equal ATen's on the whole logits, whole or in chunks of 5 rows.
TEST(VocabParallelCrossEntropy, EqualsTheWholeLogitsCrossEntropyValuesAndGradients) {
  at::manual_seed(3);
  const int64_t rows = 12, vocab = 20;
  const at::Tensor logits = at::randn({rows, vocab}, at::kDouble) * 4;
  at::Tensor labels = at::randint(vocab, {rows}, at::kLong);
  labels[2] = sdk::kIgnoreIndex;
  labels[7] = sdk::kIgnoreIndex;
  const at::Tensor whole = logits.clone().requires_grad_();
  const at::Tensor expected =
      at::cross_entropy_loss(whole, labels, {}, at::Reduction::Sum, sdk::kIgnoreIndex) + at::logsumexp(whole, 1).sum();
  expected.backward();
  for (const int64_t chunk : {0, 5}) {
    SCOPED_TRACE(fmt::format("chunk_tokens = {}", chunk));
    std::vector<std::vector<at::Tensor>> seen(2);
    const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
      const dist::TensorGroup group(rt.world());
      const at::Tensor mine = logits.narrow(1, group.rank() * vocab / 2, vocab / 2).clone().requires_grad_();
      const auto sums = builtin::losses::vocab_parallel_cross_entropy(mine, labels, group, chunk);
      (sums.cross_entropy + sums.logsumexp.sum()).backward();
      seen[static_cast<size_t>(group.rank())] = {sums.cross_entropy.detach(), sums.logsumexp.detach(), mine.grad()};
    });
    ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
    const double tolerance = 1e-12;  // float64, the same terms in another order
    for (int r = 0; r < 2; ++r) {
      const auto& s = seen[static_cast<size_t>(r)];
      EXPECT_NEAR(s[0].item<double>(),
                  at::cross_entropy_loss(logits, labels, {}, at::Reduction::Sum, sdk::kIgnoreIndex).item<double>(),
                  tolerance)
          << "rank " << r;
      EXPECT_LT(max_abs_diff(s[1], at::logsumexp(logits, 1)), tolerance) << "rank " << r;
      EXPECT_LT(max_abs_diff(s[2], whole.grad().narrow(1, r * vocab / 2, vocab / 2)), tolerance) << "rank " << r;
    }
  }
}

// 20 steps at tp = 2 against one rank, with activation checkpointing off and on: the split model trains the same. The
// fixture's model is dense with untied embeddings, so it runs with sequence parallelism (the tied and MoE variants
// below without).
TEST(TensorParallel, TwoRanksMatchOneRankWithAndWithoutActivationCheckpointing) {
  for (const std::string ac : {"none", "full"}) {
    SCOPED_TRACE("activation_checkpointing = " + ac);
    const std::vector<std::string> args = {"--train.max_steps=20", "--eval.enabled=true",
                                           "'--train.activation_checkpointing=\"" + ac + "\"'"};
    TrainFixture one, two;
    launch(one, 1, args);
    std::string output;
    ASSERT_EQ(launch(two, 2, with(args, {"--distributed.tp=2"}), &output), 0) << output;
    EXPECT_NE(output.find("[distributed] tp = 2: this rank holds its slice"), std::string::npos) << output;
    expect_parity(two, one, 1, 20);
    for (const int64_t step : {5, 10, 15, 20})
      expect_close(metric(two, "eval/loss"), metric(one, "eval/loss"), step, step);
    EXPECT_TRUE(metric(two, "tp/exchange_seconds").count(20));
  }
}

// Tied embeddings, QK-norm, z-loss and the chunked loss; and an MoE model, whose router and experts stay whole on
// every rank while attention splits (KempnerForge's attention-only TP of MoE blocks), its blocks recomputed in the
// backward.
TEST(TensorParallel, TiedQkNormZLossAndMoEMatchOneRank) {
  const std::vector<std::vector<std::string>> variants = {
      {"--model.tie_embeddings=true", "--model.qk_norm=true", "--train.z_loss_weight=0.01",
       "--train.loss_fn=chunked_cross_entropy", "--train.ce_chunk_size=24"},
      {"--model.num_experts=4", "--model.moe_top_k=2", "--model.moe_router=sigmoid_topk",
       "--model.moe_shared_experts=1", "--model.moe_capacity_factor=1.0",
       "'--train.activation_checkpointing=\"full\"'"}};
  for (const auto& variant : variants) {
    SCOPED_TRACE(variant.front());
    const auto args = with({"--train.max_steps=20"}, variant);
    TrainFixture one, two;
    launch(one, 1, args);
    launch(two, 2, with(args, {"--distributed.tp=2"}));
    expect_parity(two, one, 1, 20);
  }
}

// After 10 steps at tp = 2, every parameter both ranks hold whole (the norms; with MoE the router and the experts too)
// is bit-identical on them: the dense model with sequence parallelism (whose norms see each rank's half of the
// sequence, so their gradients must be summed over tp), and the MoE model.
TEST(TensorParallel, ParametersBothRanksHoldWholeStayBitIdentical) {
  for (const auto& variant : std::vector<std::vector<std::string>>{
           {}, {"--model.num_experts=4", "--model.moe_top_k=2", "--model.moe_router=sigmoid_topk"}}) {
    SCOPED_TRACE(fmt::format("{}", fmt::join(variant, " ")));
    TrainFixture two;
    const auto dumps = two.root / "parameters";
    launch(two, 2, with(with({"--train.max_steps=10", "--distributed.tp=2"}, variant), dumping_parameters(dumps)));
    const auto compared = expect_whole_tensors_identical(dumps, {0, 1}, two.checkpoint_dir / "step_10");
    EXPECT_NE(std::find(compared.begin(), compared.end(), "layers.0.attention_norm.weight"), compared.end())
        << fmt::format("{}", fmt::join(compared, ", "));
    if (!variant.empty()) {
      EXPECT_NE(std::find(compared.begin(), compared.end(), "layers.0.mlp.router.gate.weight"), compared.end())
          << fmt::format("{}", fmt::join(compared, ", "));
    }
  }
}

// Four ranks: tp = 2 inside dp_shard = 2 (FSDP over the ranks holding the same slices), against one rank with the
// global batch and against dp_shard = 2 alone, which matches one rank too; and with activation checkpointing, against
// one rank. In fp32, under bf16 autocast and in fp16 (their parity: support/precision_parity.h).
class TensorParallelAt : public ::testing::TestWithParam<Precision> {};
INSTANTIATE_TEST_SUITE_P(Precisions, TensorParallelAt, ::testing::ValuesIn(parity_precisions()), precision_name);

TEST_P(TensorParallelAt, TpTimesFsdpOnFourRanksMatchesOneRankAndFsdpAlone) {
  const Precision& p = GetParam();
  const auto args = with({"--train.max_steps=20"}, p.overrides);
  TrainFixture one, fsdp, four;
  launch(one, 1, with(args, {"--train.batch_size=8"}));
  launch(fsdp, 2, with(args, {"--distributed.dp_shard=2"}));
  launch(four, 4, with(args, {"--distributed.tp=2", "--distributed.dp_shard=2"}));
  expect_parity(fsdp, one, p);
  expect_parity(four, one, p);
  expect_parity(four, fsdp, p);
  TrainFixture recomputed;
  launch(recomputed, 4,
         with(args, {"--distributed.tp=2", "--distributed.dp_shard=2", "'--train.activation_checkpointing=\"full\"'"}));
  expect_parity(recomputed, one, p);
}

// Written at tp = 2 x dp_shard = 2: the logical tensors (the one-rank run's names and shapes, values within the parity
// tolerance); resumed on one rank, at tp = 2 alone and at dp_shard = 4, the runs continue the one-rank run's losses.
TEST(TensorParallel, CheckpointHoldsLogicalTensorsAndResumesOnOtherLayouts) {
  // A constant learning rate: the 10-step run's schedule is the 20-step run's first half. A global batch of 8 rows.
  const std::vector<std::string> constant = {"--scheduler.name=constant"};
  TrainFixture one, four;
  launch(one, 1, with({"--train.max_steps=20", "--train.batch_size=8"}, constant));
  launch(four, 4, with({"--train.max_steps=10", "--distributed.tp=2", "--distributed.dp_shard=2"}, constant));
  expect_same_logical_tensors(one.checkpoint_dir / "step_10", four.checkpoint_dir / "step_10", 1e-4,
                              kOptimizerStateTolerance);
  const auto meta = read_json(four.checkpoint_dir / "step_10" / "metadata.json");
  const std::string o_proj = "model/layers.0.attention.o_proj.weight";  // split by columns, then FSDP's rows
  ASSERT_TRUE(meta["tensors"].contains(o_proj)) << meta["tensors"].dump();
  EXPECT_NE(meta["tensors"][o_proj].dump().find("shard-00003-of-00004"), std::string::npos)
      << meta["tensors"][o_proj].dump();

  for (const auto& layout : std::vector<std::vector<std::string>>{
           {}, {"--distributed.tp=2", "--train.batch_size=8"}, {"--distributed.dp_shard=4", "--train.batch_size=2"}}) {
    const int ranks = layout.empty() ? 1 : layout.front() == "--distributed.tp=2" ? 2 : 4;
    SCOPED_TRACE(fmt::format("resumed on {} ranks", ranks));
    TrainFixture resumed;
    auto args =
        with(with({"--train.max_steps=20", "--checkpoint.load_path=" + (four.checkpoint_dir / "step_10").string()},
                  constant),
             layout.empty() ? std::vector<std::string>{"--train.batch_size=8"} : layout);
    std::string output;
    ASSERT_EQ(launch(resumed, ranks, args, &output), 0) << output;
    EXPECT_NE(output.find("resumed from step 10"), std::string::npos) << output;
    expect_parity(resumed, one, 11, 20);
  }
}

// KempnerForge's tensor-parallel cluster presets with their layout scaled to four ranks (tp = 2 inside dp_shard = 2)
// and a small shape: each trains here as written otherwise (bf16, full activation checkpointing, the 13B validation's
// profiled window), and its loss falls.
TEST(TensorParallel, ClusterPresetsScaledToFourRanksTrain) {
  for (const std::string preset : {"7b_12gpu_tp4", "13b_24gpu_validation", "70b_32gpu_tp4"}) {
    expect_scaled_preset_trains(preset, 4, {"--distributed.tp=2", "--distributed.dp_shard=2"}, 2);
  }
}

}  // namespace
}  // namespace kforge::test
