// scripts/slurm/multi_node.sbatch on a real Slurm cluster (Debian's slurmctld, slurmd and munge, started by
// `scripts/cluster.sh up 2 --slurm`; issue 55): 2 nodes x 2 tasks with HSDP (replicas across the nodes, shards within),
// each hostname resolving to loopback as Debian's /etc/hosts makes it; the losses equal 4 ranks on one node bit for
// bit, and a second job resumes from the checkpoint the first left on the shared directory.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

const std::string kSource = KFORGE_SOURCE_DIR;
const std::string kSlurmConf = "/run/kforge-cluster/slurm/slurm.conf";  // cluster.sh's default KFORGE_CLUSTER_DIR

std::vector<std::string> hsdp(int64_t max_steps) {
  return {fmt::format("--train.max_steps={}", max_steps), "--scheduler.name=constant",
          "--distributed.dp_replicate=2", "--distributed.dp_shard=2", "--distributed.nccl_timeout_sec=30"};
}

// Submits multi_node.sbatch for `fx` on 2 nodes x 2 tasks and waits for the job (at most 4 minutes); returns the
// exit status of `sbatch --wait` and puts the job's output into *output.
int sbatch(const TrainFixture& fx, const std::vector<std::string>& overrides, const std::string& name,
           std::string* output) {
  const std::string config = (fx.root / "job.toml").string(), out = (fx.root / (name + ".out")).string();
  std::ofstream(config) << fx.toml;
  std::string command = fmt::format(
      "cd {} && SLURM_CONF={} KFORGE_BIN={} timeout 240 sbatch --wait --quiet --nodes=2 --ntasks-per-node=2 "
      "--cpus-per-task=1 --output={} scripts/slurm/multi_node.sbatch {}",
      kSource, kSlurmConf, KFORGE_BIN, out, config);
  for (const std::string& o : overrides) command += " " + o;
  std::string submitted;
  const int status = run_command(command + " 2>&1", &submitted);
  *output = submitted + read_file(out);
  return status;
}

class Slurm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    one = new TrainFixture();
    launch(*one, 4, hsdp(10));
  }
  static void TearDownTestSuite() {
    delete one;
    run_command(kSource + "/scripts/cluster.sh down");
  }
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "the cluster tests build network namespaces and start Slurm: run them as root";
    std::string output;
    ASSERT_EQ(run_command(kSource + "/scripts/cluster.sh up 2 --slurm 2>&1", &output), 0) << output;
  }
  static inline TrainFixture* one = nullptr;
};

TEST_F(Slurm, HsdpOnTwoNodesOfTwoTasksMatchesFourRanksOnOneNodeAndResumesFromTheSharedDirectory) {
  TrainFixture two;
  std::string output;
  ASSERT_EQ(sbatch(two, hsdp(5), "first", &output), 0) << output;
  EXPECT_NE(output.find("rank 0 of 4 (local 0 of 2, from SLURM), rendezvous at node1:"), std::string::npos) << output;
  // node1's name resolves to 127.0.1.1 on node1: rank 0 listens on its only network interface instead.
  EXPECT_NE(output.find("rank 0 on host node1: Gloo listens on 10.78.0.11 (eth0; chosen by being this host's only "
                        "network interface: MASTER_ADDR node1 resolves to loopback here)"),
            std::string::npos)
      << output;
  ASSERT_EQ(sbatch(two, hsdp(10), "second", &output), 0) << output;
  EXPECT_NE(output.find("resumed from step 5"), std::string::npos) << output;  // the first job's checkpoint
  const auto a = metric(two, "train/loss"), b = metric(*one, "train/loss");
  ASSERT_EQ(b.size(), 10u);
  for (const auto& [step, loss] : b) {
    ASSERT_TRUE(a.count(step)) << "step " << step << "\n" << output;
    EXPECT_EQ(a.at(step), loss) << "step " << step;
  }
}

}  // namespace
}  // namespace kforge::test
