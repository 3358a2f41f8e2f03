// scripts/slurm/single_node.sbatch run as Slurm runs a batch script, with a stand-in srun
// (fake_srun.sh: SLURM_NTASKS tasks with their SLURM_* variables): the ranks meet from Slurm's
// variables and train, and the time-limit warning (SIGUSR1 to the batch shell) reaches every task,
// which saves and exits 75.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <sys/wait.h>

#include <csignal>
#include <fstream>

#include "checkpoint/checkpoint_manager.h"
#include "dist/free_port.h"
#include "launch_job.h"
#include "support/test_host.h"
#include "train/train_fixture.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

// `bash single_node.sbatch CONFIG overrides...` under a two-task, one-node Slurm allocation; the
// shell first prints its pid, which the script then runs as (exec), as Slurm's batch shell.
std::string sbatch_command(const TrainFixture& fx, const std::vector<std::string>& overrides) {
  const fs::path bin = fx.root / "slurm-bin";
  fs::create_directories(bin);
  fs::create_symlink(fs::path(KFORGE_SOURCE_DIR) / "tests/distributed/fake_srun.sh", bin / "srun");
  const fs::path config = fx.root / "job.toml";
  std::ofstream(config) << fx.toml;
  std::string command = fmt::format(
      "echo batch shell: pid $$; PATH={}:$PATH KFORGE={} SLURM_JOB_ID=4242 SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 SLURM_NNODES=1 "
      "SLURM_NODELIST=localhost SLURM_CPUS_PER_TASK=1 MASTER_PORT={} exec bash {}/scripts/slurm/single_node.sbatch {}",
      bin.string(), KFORGE_BIN, dist::free_local_port(), KFORGE_SOURCE_DIR, config.string());
  for (const auto& o : overrides) command += " " + o;
  return command;
}

TEST(SlurmScript, TwoTasksMeetThroughSlurmVariablesAndTrain) {
  TrainFixture fx;
  std::string output;
  ASSERT_EQ(run_command(sbatch_command(fx, {"--train.max_steps=4"}), &output), 0) << output;
  EXPECT_NE(output.find("rank 0 of 2 (local 0 of 2, from SLURM), rendezvous at localhost"), std::string::npos)
      << output;
  const auto meta = read_json(fx.checkpoint_dir / "step_4" / "metadata.json");
  EXPECT_EQ(meta["world_size"], 2);
}

TEST(SlurmScript, TimeLimitSignalToTheBatchShellMakesEveryTaskSaveAndExit75) {
  TrainFixture fx;
  std::string output;
  // What --signal=B:USR1@120 does before the time limit: SIGUSR1 to the batch shell.
  const int status =
      signal_after_checkpoint(sbatch_command(fx, {"--train.max_steps=100000", "--checkpoint.interval=3"}),
                              "batch shell: pid %d", SIGUSR1, output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 75) << output;
  EXPECT_NE(output.find("shutdown requested (signal 10)"), std::string::npos) << output;
  const auto snapshot = checkpoint::CheckpointManager(fx.checkpoint_dir, 0, nullptr).load_newest([](const std::string& m) {
    ADD_FAILURE() << m;
  });
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->train_state["data"].size(), 2u);
}

}  // namespace
}  // namespace kforge::test
