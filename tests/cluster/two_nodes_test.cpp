// `kforge launch --nnodes 2` on 2 nodes of scripts/cluster.sh (network + UTS + mount namespaces on a bridge), no Slurm
// (issue 55): the losses equal one node's with the same two ranks bit for bit, whether each hostname resolves to
// loopback (with and without GLOO_SOCKET_IFNAME) or to the node's address; a rank that never comes and a peer killed
// mid-run are named, with host and address, by the survivor, which ends within distributed.nccl_timeout_sec.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>

#include "cluster_nodes.h"
#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

constexpr int kTimeoutSec = 20;  // distributed.nccl_timeout_sec of every two-node job

// The one-node reference: both ranks on this host, over loopback.
class TwoNodes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    one = new TrainFixture();
    launch(*one, 2, args());
  }
  static void TearDownTestSuite() {
    delete one;
    run_command(kCluster + " down");
  }
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "the cluster tests build network namespaces: run them as root";
  }

  static std::vector<std::string> args() {
    return {"--train.max_steps=6", fmt::format("--distributed.nccl_timeout_sec={}", kTimeoutSec)};
  }
  // Both nodes' launchers' output; a non-zero exit of node 1's is a test failure.
  static std::string train_on_both(const TrainFixture& fx, const std::string& env) {
    std::string output;
    EXPECT_EQ(run_command(both_nodes(fx, args(), env), &output), 0) << output;
    return output;
  }
  // The two-node run's losses equal the one-node run's at every step, bit for bit.
  static void expect_same_losses(const TrainFixture& two) {
    const auto a = metric(two, "train/loss"), b = metric(*one, "train/loss");
    ASSERT_EQ(a.size(), 6u);
    ASSERT_EQ(b.size(), 6u);
    for (const auto& [step, loss] : b) EXPECT_EQ(a.at(step), loss) << "step " << step;
  }
  static inline TrainFixture* one = nullptr;
};

TEST_F(TwoNodes, HostnamesResolvingToLoopbackTrainLikeOneNodeGlooBindingTheRouteToTheMaster) {
  cluster_up(2);
  TrainFixture two;
  const std::string output = train_on_both(two, "");
  expect_same_losses(two);
  EXPECT_NE(output.find("rank 0 on host node1: Gloo listens on 10.78.0.11 (eth0; chosen by the route to 10.78.0.11)"),
            std::string::npos)
      << output;
}

TEST_F(TwoNodes, HostnamesResolvingToLoopbackTrainLikeOneNodeWithGlooSocketIfname) {
  cluster_up(2);
  TrainFixture two;
  const std::string output = train_on_both(two, "GLOO_SOCKET_IFNAME=eth0");
  expect_same_losses(two);
  EXPECT_NE(output.find("rank 0 on host node1: Gloo listens on 10.78.0.11 (eth0; chosen by GLOO_SOCKET_IFNAME=eth0)"),
            std::string::npos)
      << output;
}

TEST_F(TwoNodes, HostnamesResolvingToTheNodesAddressTrainLikeOneNode) {
  cluster_up(2, "--hosts-map-node");
  TrainFixture two;
  train_on_both(two, "");
  expect_same_losses(two);
}

TEST_F(TwoNodes, GlooSocketIfnameNamingLoopbackIsAnErrorOnTheRankNamingTheVariable) {
  cluster_up(2);
  TrainFixture two;
  std::string output;
  EXPECT_NE(run_command(both_nodes(two, args(), "GLOO_SOCKET_IFNAME=lo"), &output), 0) << output;
  EXPECT_NE(output.find("this rank would advertise the loopback address 127.0.0.1 (interface lo)"), std::string::npos)
      << output;
  EXPECT_NE(output.find("Set GLOO_SOCKET_IFNAME to the interface that reaches the other nodes"), std::string::npos)
      << output;
}

TEST_F(TwoNodes, ARankThatNeverComesEndsTheRendezvousAtTheTimeoutNamingIt) {
  cluster_up(2);
  TrainFixture two;
  std::string output;
  // Only node 1 starts: rank 0 hosts the store and waits for rank 1 for the 3 s timeout.
  const std::string command = as_node(launch_command(two, 1, {"--distributed.nccl_timeout_sec=3"}), 1, 29650);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(run_command(fmt::format("{} exec 1 timeout 60 {} 2>&1", kCluster, command), &output), 0) << output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3 + 10)) << output;  // + start-up
  EXPECT_NE(output.find("rank 0: rank(s) 1 of 2 did not reach the rendezvous at 10.78.0.11 within 3 s"),
            std::string::npos)
      << output;
}

TEST_F(TwoNodes, APeerKilledMidRunIsNamedByTheSurvivorWhichEndsWithinTheTimeout) {
  cluster_up(2);
  TrainFixture two;
  std::string output;
  // Rank 1 (node 2) is SIGKILLed once rank 0 reports the step-5 checkpoint.
  const std::vector<std::string> overrides = with(args(), {"--train.max_steps=2000", "--checkpoint.interval=5"});
  signal_after_checkpoint(both_nodes(two, overrides, ""), "kforge launch: rank 1 is pid %d", SIGKILL, output);
  EXPECT_EQ(output.find("no signal was sent"), std::string::npos) << output;
  EXPECT_NE(output.find("node1 exited 1, node2 exited 137"), std::string::npos) << output;
  const std::string rank0 = read_file(two.root / "logs" / "rank_0.log");
  EXPECT_NE(rank0.find("The peer it lost: rank 1 on host node2 (10.78.0.12, eth0)"), std::string::npos) << rank0;
  // Rank 0 failed within the timeout of the kill, which came after its "checkpoint saved:" line (same clock and day).
  const double saved = stamp_before(rank0, "checkpoint saved:"), failed = stamp_before(rank0, "training failed:");
  ASSERT_GT(saved, 0) << rank0;
  ASSERT_GT(failed, 0) << rank0;
  EXPECT_LT(failed - saved, kTimeoutSec) << rank0;
}

}  // namespace
}  // namespace kforge::test
