// c10d collectives and the start-up agreement check, between two ranks run as threads of this
// process (each with its own TCPStore client and Gloo process groups on 127.0.0.1).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "dist/group.h"
#include "dist/setup_check.h"
#include "kforge/sdk/error.h"
#include "support/two_ranks.h"

namespace kforge::test {
namespace {

TEST(Collectives, AllReduceBroadcastAllGatherReduceScatterBarrier) {
  std::vector<std::vector<at::Tensor>> seen(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const int r = rt.rank();
    auto& out = seen[static_cast<size_t>(r)];
    EXPECT_EQ(rt.dp().size(), 2);
    EXPECT_EQ(rt.mesh().shape().size("dp_shard"), 2);
    at::Tensor sum = at::tensor({1.0 + r, 10.0 * (1 + r)});
    rt.world().all_reduce(sum);
    out.push_back(sum);
    at::Tensor biggest = at::tensor({static_cast<double>(r)});
    rt.dp().all_reduce(biggest, dist::Reduce::Max);
    out.push_back(biggest);
    at::Tensor from_one = at::full({3}, static_cast<double>(r + 5));
    rt.world().broadcast(from_one, /*root=*/1);
    out.push_back(from_one);
    const auto gathered = rt.world().all_gather(at::full({2}, static_cast<double>(r)));
    out.push_back(at::cat(gathered));
    out.push_back(rt.world().reduce_scatter(at::arange(4, at::kDouble) * (r + 1)));
    rt.checkpoint_group().barrier();
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  for (int r = 0; r < 2; ++r) {
    const auto& out = seen[static_cast<size_t>(r)];
    EXPECT_TRUE(at::equal(out[0], at::tensor({3.0, 30.0})));
    EXPECT_TRUE(at::equal(out[1], at::tensor({1.0})));
    EXPECT_TRUE(at::equal(out[2], at::full({3}, 6.0)));
    EXPECT_TRUE(at::equal(out[3], at::tensor({0.0, 0.0, 1.0, 1.0})));
    // sum over ranks of arange(4) * (r + 1) = arange(4) * 3, split in two halves.
    EXPECT_TRUE(at::equal(out[4], r == 0 ? at::tensor({0.0, 3.0}) : at::tensor({6.0, 9.0})));
  }
}

// FSDP's prefetch: two all-gathers in flight at once, a blocking all-reduce issued between them, each finished later.
TEST(Collectives, AllGathersInFlightFinishWithTheirOwnResultsAroundABlockingAllReduce) {
  std::vector<std::vector<at::Tensor>> seen(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const int r = rt.rank();
    at::Tensor first = at::empty({2, 3}, at::kDouble), second = at::empty({2, 2}, at::kDouble);
    dist::PendingCollective a = rt.world().all_gather_into_async(first, at::full({3}, 1.0 + r, at::kDouble));
    dist::PendingCollective b = rt.world().all_gather_into_async(second, at::full({2}, 10.0 * (1 + r), at::kDouble));
    at::Tensor sum = at::tensor({static_cast<double>(r)});
    rt.world().all_reduce(sum);
    b.wait();
    a.wait();
    seen[static_cast<size_t>(r)] = {first, second, sum};
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  for (const auto& out : seen) {
    EXPECT_TRUE(at::equal(out[0], at::tensor({1.0, 1.0, 1.0, 2.0, 2.0, 2.0}, at::kDouble).view({2, 3})));
    EXPECT_TRUE(at::equal(out[1], at::tensor({10.0, 10.0, 20.0, 20.0}, at::kDouble).view({2, 2})));
    EXPECT_TRUE(at::equal(out[2], at::tensor({1.0})));
  }
}

// FSDP's backward: a reduce-scatter left in flight while other collectives start and finish, then waited for; and
// one of bf16 rows (moved as their bits, summed here).
TEST(Collectives, ReduceScattersInFlightFinishWithTheirOwnSums) {
  std::vector<std::vector<at::Tensor>> seen(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const int r = rt.rank();
    const at::Tensor grads = at::arange(6, at::kFloat).view({2, 3}) * (r + 1);  // the sum is arange * 3
    at::Tensor mine = at::empty({1, 3}, at::kFloat);
    dist::PendingCollective a = rt.world().reduce_scatter_async(mine, grads);
    at::Tensor gathered = at::empty({2, 2}, at::kDouble);
    dist::PendingCollective b = rt.world().all_gather_into_async(gathered, at::full({2}, 1.0 + r, at::kDouble));
    at::Tensor sum = at::tensor({static_cast<double>(r)});
    rt.world().all_reduce(sum);
    b.wait();
    a.wait();
    const at::Tensor halves = rt.world().reduce_scatter(at::full({4}, 0.5 + r, at::kBFloat16));
    seen[static_cast<size_t>(r)] = {mine, gathered, sum, halves};
    at::Tensor wrong = at::empty({3}, at::kFloat);
    EXPECT_THROW(rt.world().reduce_scatter_async(wrong, grads), sdk::Error);
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  for (int r = 0; r < 2; ++r) {
    const auto& out = seen[static_cast<size_t>(r)];
    EXPECT_TRUE(at::equal(out[0], at::arange(3 * r, 3 * r + 3, at::kFloat).view({1, 3}) * 3)) << out[0];
    EXPECT_TRUE(at::equal(out[1], at::tensor({1.0, 1.0, 2.0, 2.0}, at::kDouble).view({2, 2})));
    EXPECT_TRUE(at::equal(out[2], at::tensor({1.0})));
    EXPECT_EQ(out[3].scalar_type(), at::kBFloat16);
    EXPECT_TRUE(at::equal(out[3], at::full({2}, 2.0, at::kBFloat16))) << out[3];  // 0.5 + 1.5
  }
}

// FSDP's gathers: three ranks' pieces of uneven sizes (rank 2 holds none of the second; bf16 moved as its bits) land
// straight in their places; two in flight at once, a blocking all-reduce between them.
TEST(Collectives, GatheredPiecesLandInPlaceForEveryMember) {
  constexpr int kRanks = 3;
  std::vector<std::vector<at::Tensor>> seen(kRanks);
  const auto errors = on_ranks(kRanks, [&](const dist::Runtime& rt) {
    const int r = rt.rank();
    auto rows = [](int m) { return m == 2 ? 0 : 2; };  // of the second piece
    at::Tensor floats = at::full({kRanks, 2}, -1.0, at::kFloat), halves = at::full({4}, -1.0, at::kBFloat16);
    std::vector<std::vector<at::Tensor>> into(kRanks);
    for (int m = 0; m < kRanks; ++m) into[m] = {floats[m], halves.narrow(0, 2 * m, rows(m))};
    dist::PendingCollective a = rt.world().all_gather_pieces_async(
        {at::full({2}, 1.0 + r, at::kFloat), at::full({rows(r)}, 0.5 * r, at::kBFloat16)}, into);
    at::Tensor wide = at::empty({kRanks * 3}, at::kDouble);
    std::vector<std::vector<at::Tensor>> wide_into(kRanks);
    for (int m = 0; m < kRanks; ++m) wide_into[m] = {wide.narrow(0, 3 * m, 3)};
    dist::PendingCollective b = rt.world().all_gather_pieces_async({at::full({3}, 10.0 * r, at::kDouble)}, wide_into);
    at::Tensor sum = at::tensor({static_cast<double>(r)});
    rt.world().all_reduce(sum);
    b.wait();
    a.wait();
    seen[static_cast<size_t>(r)] = {floats, halves, wide, sum};
    EXPECT_THROW(rt.world().all_gather_pieces_async({floats.t()}, into), sdk::Error);  // not contiguous
  });
  ASSERT_EQ(errors, std::vector<std::string>(kRanks));
  for (const auto& out : seen) {
    EXPECT_TRUE(at::equal(out[0], at::tensor({1.0F, 1.0F, 2.0F, 2.0F, 3.0F, 3.0F}).view({kRanks, 2}))) << out[0];
    EXPECT_TRUE(at::equal(out[1], at::tensor({0.0, 0.0, 0.5, 0.5}).to(at::kBFloat16))) << out[1];
    EXPECT_TRUE(at::equal(out[2], at::tensor({0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 20.0, 20.0, 20.0}, at::kDouble)));
    EXPECT_TRUE(at::equal(out[3], at::tensor({3.0})));
  }
}

// FSDP's reduce-scatters: each member's parts summed on the member they go to, in member order (float addition does not
// associate: (1e8 + 1) - 1e8 is 0 in float32, 1 in another order), the parts read in place.
TEST(Collectives, ScatteredPartsAreSummedInMemberOrder) {
  constexpr int kRanks = 3;
  const std::vector<float> of_rank{1e8F, 1.0F, -1e8F};
  std::vector<at::Tensor> seen(kRanks);
  const auto errors = on_ranks(kRanks, [&](const dist::Runtime& rt) {
    const int r = rt.rank();
    // Piece 0: rank r sends of_rank[r] * (m + 1) to member m; piece 1: rank r sends r to member m, m + 1 of them.
    const at::Tensor grads =
        at::full({kRanks}, of_rank[static_cast<size_t>(r)], at::kFloat) * at::arange(1, kRanks + 1, at::kFloat);
    std::vector<std::vector<at::Tensor>> parts(kRanks);
    for (int m = 0; m < kRanks; ++m) parts[m] = {grads.narrow(0, m, 1), at::full({m + 1}, 1.0 * r, at::kDouble)};
    at::Tensor out = at::empty({1}, at::kFloat), counts = at::empty({r + 1}, at::kDouble);
    rt.world().reduce_scatter_pieces_async(parts, {out, counts}).wait();
    seen[static_cast<size_t>(r)] = at::cat({out.to(at::kDouble), counts});
  });
  ASSERT_EQ(errors, std::vector<std::string>(kRanks));
  for (int m = 0; m < kRanks; ++m) {
    float sum = of_rank[0] * static_cast<float>(m + 1);
    for (size_t r = 1; r < of_rank.size(); ++r) sum += of_rank[r] * static_cast<float>(m + 1);
    const at::Tensor expected = at::cat({at::tensor({static_cast<double>(sum)}), at::full({m + 1}, 3.0, at::kDouble)});
    EXPECT_TRUE(at::equal(seen[static_cast<size_t>(m)], expected)) << "member " << m << ": " << seen[m];
  }
}

// dist/collective_seconds: a rank that reaches an all-reduce first counts the time it waits there for the other; each
// thread counts only its own collectives, and taking the count restarts it. The order is set by an event, not by the
// threads' timing: rank 0 announces that it is entering the second all-reduce, and rank 1 enters it only kHeld after
// that announcement, so rank 0 waits there at least kHeld less the few instructions between its announcement and its
// collective's start (half of kHeld leaves that much room for its thread to be preempted there), and rank 1 finds
// rank 0 already waiting.
TEST(Collectives, EachThreadCountsTheSecondsItWaitedInCollectives) {
  constexpr std::chrono::milliseconds kHeld{1000};
  std::vector<double> counted(2), again(2);
  std::promise<std::chrono::steady_clock::time_point> rank0_entering;
  std::shared_future<std::chrono::steady_clock::time_point> announced = rank0_entering.get_future().share();
  dist::take_collective_seconds();
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const int r = rt.rank();
    at::Tensor x = at::ones({1});
    rt.world().all_reduce(x);
    dist::take_collective_seconds();  // the set-up and the first all-reduce
    if (r == 0) {
      rank0_entering.set_value(std::chrono::steady_clock::now());
    } else {
      std::this_thread::sleep_until(announced.get() + kHeld);  // the wait under test, not a synchronisation
    }
    rt.world().all_reduce(x);
    counted[static_cast<size_t>(r)] = dist::take_collective_seconds();
    again[static_cast<size_t>(r)] = dist::take_collective_seconds();
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_GT(counted[0], std::chrono::duration<double>(kHeld).count() / 2);
  EXPECT_LT(counted[1], counted[0]);
  EXPECT_GT(counted[1], 0.0);
  EXPECT_EQ(again, (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(dist::take_collective_seconds(), 0.0) << "the ranks' threads counted into the test's thread";
}

TEST(Collectives, GatherOfStringsIsInRankOrder) {
  std::vector<std::vector<std::string>> seen(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    seen[static_cast<size_t>(rt.rank())] = rt.all_gather_strings("t", "from " + std::to_string(rt.rank()));
  });
  ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(seen[0], (std::vector<std::string>{"from 0", "from 1"}));
  EXPECT_EQ(seen[1], seen[0]);
}

TEST(SetupCheck, DifferentPluginOnOneRankFailsEveryRankNamingRankAndPlugin) {
  const auto errors = on_two_ranks([](const dist::Runtime& rt) {
    const nlohmann::json plugins = {
        {{"name", "models"},
         {"version", "1.0.0"},
         {"file", "libkforge_models.so"},
         {"hash", rt.rank() == 0 ? "aa" : "bb"}}};
    dist::check_same_setup(rt, plugins, "[train]\nmax_steps = 5\n");
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("rank 1"), std::string::npos) << e;
    EXPECT_NE(e.find("'models' 1.0.0"), std::string::npos) << e;
    EXPECT_NE(e.find("hash bb"), std::string::npos) << e;
  }
}

TEST(SetupCheck, DifferentConfigNamesTheLine) {
  const auto errors = on_two_ranks([](const dist::Runtime& rt) {
    const std::string config = rt.rank() == 0 ? "[train]\nmax_steps = 5\n" : "[train]\nmax_steps = 6\n";
    dist::check_same_setup(rt, nlohmann::json::array(), config);
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("rank 1 resolved a different config: line 2 is 'max_steps = 6'"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace kforge::test
