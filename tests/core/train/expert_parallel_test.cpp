// Expert parallelism ([distributed] ep): the host's differentiable exchanges between two thread ranks, and real jobs
// through `kforge launch` on 127.0.0.1 against one rank: both routers, packed and per-expert experts, ep x dp_shard,
// a router that leaves one rank's experts idle, and checkpoints that hold every expert once and resume at other ep.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/replicated_parameters.h"
#include "core/train/train_fixture.h"
#include "dist/expert_group.h"
#include "support/launch_job.h"
#include "support/max_abs_diff.h"
#include "support/precision_parity.h"
#include "support/same_checkpoint.h"
#include "support/two_ranks.h"

namespace kforge::test {
namespace {

// share -> unite and the all-to-all, forward and backward, between two ranks. Rank r scales its share by r + 1, so the
// gradients show which rank computed which rows.
TEST(ExpertGroup, ShareUniteAndAllToAllCarryRowsAndTheirGradients) {
  std::vector<std::vector<at::Tensor>> seen(2);
  std::vector<std::vector<int64_t>> counts(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const dist::ExpertGroup group(rt.world());
    const int r = group.rank();
    const at::Tensor x = at::arange(10, at::kDouble).view({5, 2}).requires_grad_();
    const at::Tensor weights = at::arange(1, 11, at::kDouble).view({5, 2});
    const at::Tensor united = group.unite(group.share(x) * (r + 1), 5);
    (united * weights).sum().backward();
    // Rank 0 sends its 3 rows as 1 to itself and 2 to rank 1; rank 1 sends its 2 rows both to rank 0.
    const std::vector<int64_t> send = r == 0 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{2, 0};
    const std::vector<int64_t> recv = group.exchange_counts(send);
    const at::Tensor rows = (at::arange(3 - r, at::kDouble) + 10 * r).unsqueeze(1).requires_grad_();
    const at::Tensor got = group.all_to_all(rows, send, recv);
    (got * (at::arange(got.size(0), at::kDouble).unsqueeze(1) + 1) * (r + 1)).sum().backward();
    seen[static_cast<size_t>(r)] = {united.detach(), x.grad(), got.detach(), rows.grad()};
    counts[static_cast<size_t>(r)] = recv;
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  const at::Tensor x = at::arange(10, at::kDouble).view({5, 2});
  const at::Tensor weights = at::arange(1, 11, at::kDouble).view({5, 2});
  const at::Tensor scale = at::tensor({1.0, 1.0, 2.0, 2.0, 2.0}, at::kDouble).unsqueeze(1);  // shares: rows 0-1, 2-4
  for (int r = 0; r < 2; ++r) {
    const auto& s = seen[static_cast<size_t>(r)];
    EXPECT_TRUE(at::equal(s[0], x * scale)) << "rank " << r;
    EXPECT_TRUE(at::equal(s[1], weights * scale)) << "rank " << r;  // every rank continues with the whole gradient
  }
  EXPECT_EQ(counts[0], (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(counts[1], (std::vector<int64_t>{2, 0}));
  // Rank 0 receives its row 0, then rank 1's rows 10 and 11; rank 1 receives rank 0's rows 1 and 2.
  EXPECT_TRUE(at::equal(seen[0][2], at::tensor({0.0, 10.0, 11.0}, at::kDouble).unsqueeze(1)));
  EXPECT_TRUE(at::equal(seen[1][2], at::tensor({1.0, 2.0}, at::kDouble).unsqueeze(1)));
  // Gradients return to the sender: on rank 0 row j received weighs (j + 1) * 1, on rank 1 (j + 1) * 2.
  EXPECT_TRUE(at::equal(seen[0][3], at::tensor({1.0, 2.0, 4.0}, at::kDouble).unsqueeze(1)));
  EXPECT_TRUE(at::equal(seen[1][3], at::tensor({2.0, 3.0}, at::kDouble).unsqueeze(1)));
}

// Under bf16 autocast the exchanges carry bfloat16 rows, which Gloo cannot reduce: they move as raw 16-bit words, exactly.
TEST(ExpertGroup, MovesBfloat16RowsBitExactly) {
  std::vector<std::vector<at::Tensor>> seen(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const dist::ExpertGroup group(rt.world());
    const int r = group.rank();
    const at::Tensor x = (at::arange(6, at::kFloat) / 7 + r).to(at::kBFloat16).view({3, 2});
    const std::vector<int64_t> send = r == 0 ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{0, 3};
    const at::Tensor got = group.all_to_all(x, send, group.exchange_counts(send));
    seen[static_cast<size_t>(r)] = {x, got, group.unite(x, 6)};
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_TRUE(at::equal(seen[0][1], seen[0][0].narrow(0, 0, 1)));
  EXPECT_TRUE(at::equal(seen[1][1], at::cat({seen[0][0].narrow(0, 1, 2), seen[1][0]})));
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(at::equal(seen[r][2], at::cat({seen[0][0], seen[1][0]}))) << "rank " << r;
}

std::vector<std::string> moe_args(const std::string& router, bool packed, int64_t steps) {
  return {fmt::format("--train.max_steps={}", steps), "--eval.enabled=true", "--model.num_experts=4", "--model.moe_top_k=2",
          "--model.moe_router=" + router, "--model.moe_aux_loss_weight=0.01",
          fmt::format("--model.moe_packed_experts={}", packed ? "true" : "false"),
          // The drop path, the per-expert gradient scale and a shared expert run in the packed variant.
          fmt::format("--model.moe_capacity_factor={}", packed ? "1.0" : "0.0"),
          fmt::format("--model.moe_gradient_scale={}", packed ? "true" : "false"),
          fmt::format("--model.moe_shared_experts={}", packed ? 1 : 0)};
}

// 20 steps at ep = 2 against one rank, with either router, packed or per-expert experts. In fp32 and under bf16
// autocast, where the MoE layer sums its experts' bf16 outputs (it threw on a float32 sum before, on one rank too) and
// the exchanges carry bf16 rows; and in fp16 (their parity: support/precision_parity.h).
class ExpertParallelAt : public ::testing::TestWithParam<Precision> {};
INSTANTIATE_TEST_SUITE_P(Precisions, ExpertParallelAt, ::testing::ValuesIn(parity_precisions()), precision_name);

TEST_P(ExpertParallelAt, TwoRanksMatchOneRankWithEitherRouterPackedOrPerExpert) {
  const Precision& p = GetParam();
  for (const std::string router : {"softmax_topk", "sigmoid_topk"}) {
    for (const bool packed : {false, true}) {
      SCOPED_TRACE(fmt::format("{}, packed = {}", router, packed));
      const auto args = with(moe_args(router, packed, 20), p.overrides);
      TrainFixture one, two;
      launch(one, 1, args);
      std::string output;
      ASSERT_EQ(launch(two, 2, with(args, {"--distributed.ep=2"}), &output), 0) << output;
      EXPECT_NE(output.find("[distributed] ep = 2: this rank holds its share of the MoE experts"), std::string::npos)
          << output;
      expect_parity(two, one, p);
      for (int64_t step = 5; step <= p.last_step; step += 5) {
        expect_close(metric(two, "eval/loss"), metric(one, "eval/loss"), step, step, p.loss_tolerance);
      }
      EXPECT_TRUE(metric(two, "ep/exchange_seconds").count(20));
    }
  }
}

// After 10 steps at ep = 2 (packed experts, each rank holding half their rows), every parameter and buffer both ranks
// hold whole (attention, norms, embedding, head, the router, its load-balancing bias and that bias's EMA of the expert
// loads) is bit-identical on them; and at tp = 2 x ep = 2 on four ranks, within each ep group (ranks 0 and 2, 1 and 3:
// tp is the fastest dimension).
TEST(ExpertParallel, TensorsEveryEpRankHoldsWholeStayBitIdentical) {
  const auto args = moe_args("sigmoid_topk", true, 10);
  TrainFixture two, four;
  const auto two_dumps = two.root / "parameters", four_dumps = four.root / "parameters";
  launch(two, 2, with(with(args, {"--distributed.ep=2"}), dumping_parameters(two_dumps)));
  const auto compared = expect_whole_tensors_identical(two_dumps, {0, 1}, two.checkpoint_dir / "step_10");
  for (const std::string name : {"layers.0.attention.q_proj.weight", "layers.0.mlp.router.gate.weight",
                                 "layers.0.mlp.router.expert_bias", "layers.0.mlp.router.expert_ema"}) {
    EXPECT_NE(std::find(compared.begin(), compared.end(), name), compared.end())
        << name << " not among " << fmt::format("{}", fmt::join(compared, ", "));
  }
  launch(four, 4, with(with(args, {"--distributed.ep=2", "--distributed.tp=2"}), dumping_parameters(four_dumps)));
  for (const std::vector<int> group : {std::vector<int>{0, 2}, std::vector<int>{1, 3}}) {
    EXPECT_FALSE(expect_whole_tensors_identical(four_dumps, group, four.checkpoint_dir / "step_10").empty());
  }
}

// Four ranks: ep = 2 inside dp_shard = 2 (FSDP over the ranks holding the same experts, each shard group on its own
// half of the batch). Against one rank with their global batch where the MoE layer treats tokens independently (no
// aux loss, no capacity, no gradient scale: a per-batch statistic differs between one batch of 8 and two of 4 by design); against
// ep = 1 x dp_shard = 2 (the same data split) with the sigmoid router's bias updates, aux loss and token drops.
TEST(ExpertParallel, EpTimesFsdpOnFourRanksMatchesOneRankAndFsdpAlone) {
  const std::vector<std::string> four_ranks = {"--distributed.ep=2", "--distributed.dp_shard=2"};
  {
    SCOPED_TRACE("softmax_topk, packed, against one rank");
    const auto args = with(moe_args("softmax_topk", true, 20),
                           {"--model.moe_aux_loss_weight=0", "--model.moe_capacity_factor=0", "--model.moe_gradient_scale=false"});
    TrainFixture one, four;
    launch(one, 1, with(args, {"--train.batch_size=8"}));
    launch(four, 4, with(args, four_ranks));
    expect_parity(four, one, 1, 20);
  }
  {
    SCOPED_TRACE("sigmoid_topk, per expert, against ep = 1 x dp_shard = 2");
    const auto args = with(moe_args("sigmoid_topk", false, 20), {"--model.moe_capacity_factor=1.0"});
    TrainFixture two, four;
    launch(two, 2, with(args, {"--distributed.dp_shard=2"}));
    launch(four, 4, with(args, four_ranks));
    expect_parity(four, two, 1, 20);
  }
}

// KempnerForge's moe_ep_32gpu layout (tp 4 x ep 2 x dp_shard 4) scaled to four ranks: tp = 2 x ep = 2, attention split
// over tp while each ep rank holds half the experts (whole on both of its tp ranks). Against one rank, and its
// checkpoint holds the one-rank run's tensors, each once.
TEST(ExpertParallel, EpTimesTpOnFourRanksMatchesOneRankAndCheckpointsEveryTensorOnce) {
  for (const std::string router : {"softmax_topk", "sigmoid_topk"}) {
    const bool packed = router == "softmax_topk";
    SCOPED_TRACE(fmt::format("{}, packed = {}", router, packed));
    TrainFixture one, four;
    launch(one, 1, moe_args(router, packed, 20));
    launch(four, 4, with(moe_args(router, packed, 20), {"--distributed.ep=2", "--distributed.tp=2"}));
    expect_parity(four, one, 1, 20);
    expect_same_logical_tensors(one.checkpoint_dir / "step_20", four.checkpoint_dir / "step_20", 1e-4,
                                kOptimizerStateTolerance);
  }
}

// Every token goes to experts 0 and 1 (rank 0's): rank 1's experts get no rows and no gradient, and still take part
// in every exchange, forward and backward.
TEST(ExpertParallel, ARouterThatLeavesOneRanksExpertsIdleNeitherHangsNorDiverges) {
  const std::vector<std::string> plugin = {"--plugin-dir", KFORGE_LOPSIDED_ROUTER_DIR};
  for (const bool packed : {false, true}) {
    SCOPED_TRACE(fmt::format("packed = {}", packed));
    TrainFixture one, two;
    launch(one, 1, with(plugin, moe_args("fixture_lopsided_topk", packed, 10)));
    launch(two, 2, with(plugin, with(moe_args("fixture_lopsided_topk", packed, 10), {"--distributed.ep=2"})));
    expect_parity(two, one, 1, 10);
    // Rank 1's experts got no token: per-expert, they never trained (no gradient, as on one rank); packed, they
    // decayed as the one-rank tensor's idle rows did (a zero gradient), and their step counts agree.
    const auto a = checkpoint::CheckpointManager::load(one.checkpoint_dir / "step_10");
    const auto b = checkpoint::CheckpointManager::load(two.checkpoint_dir / "step_10");
    const std::string idle = packed ? "layers.1.mlp.up_w" : "layers.1.mlp.experts.3.up_proj.weight";
    EXPECT_LT(max_abs_diff(a.model.at(idle), b.model.at(idle)), 1e-5);
    EXPECT_TRUE(at::equal(a.optimizer.at(idle + ".step"), b.optimizer.at(idle + ".step")));
  }
}

// Written at ep = 2: every expert once, under its global name (rank 1 writes experts 2 and 3, or its rows of the packed
// tensors); resumed at ep = 1 and at ep = 4, the runs continue the one-rank run's losses.
TEST(ExpertParallel, CheckpointHoldsEveryExpertOnceAndResumesAtEpOneAndFour) {
  for (const bool packed : {false, true}) {
    SCOPED_TRACE(fmt::format("packed = {}", packed));
    // A constant learning rate: the 10-step run's schedule is the 20-step run's first half.
    const std::vector<std::string> constant = {"--scheduler.name=constant"};
    TrainFixture one, two;
    launch(one, 1, with(moe_args("softmax_topk", packed, 20), constant));
    launch(two, 2, with(moe_args("softmax_topk", packed, 10), with(constant, {"--distributed.ep=2"})));
    expect_same_logical_tensors(one.checkpoint_dir / "step_10", two.checkpoint_dir / "step_10", 1e-4,
                                kOptimizerStateTolerance);
    const auto meta = read_json(two.checkpoint_dir / "step_10" / "metadata.json");
    const std::string expert = packed ? "model/layers.0.mlp.up_w" : "model/layers.0.mlp.experts.3.up_proj.weight";
    ASSERT_TRUE(meta["tensors"].contains(expert)) << meta["tensors"].dump();
    EXPECT_NE(meta["tensors"][expert].dump().find("shard-00001-of-00002"), std::string::npos)
        << meta["tensors"][expert].dump();

    for (const int ep : {1, 4}) {
      SCOPED_TRACE(fmt::format("resumed at ep = {}", ep));
      TrainFixture resumed;
      auto args = with(moe_args("softmax_topk", packed, 20),
                       with(constant, {"--checkpoint.load_path=" + (two.checkpoint_dir / "step_10").string()}));
      if (ep > 1) args.push_back(fmt::format("--distributed.ep={}", ep));
      std::string output;
      ASSERT_EQ(launch(resumed, ep, args, &output), 0) << output;
      EXPECT_NE(output.find("resumed from step 10"), std::string::npos) << output;
      expect_parity(resumed, one, 11, 20);
    }
  }
}

}  // namespace
}  // namespace kforge::test
