// scripts/slurm/*.sbatch run as Slurm runs a batch script, with a stand-in srun (fake_srun.sh:
// SLURM_NTASKS tasks with their SLURM_* variables) and scontrol (fake_scontrol.sh: records its
// calls): the ranks meet from Slurm's variables and train; the time-limit warning (SIGUSR1 to the
// batch shell) reaches every task, which saves and exits 75, and the job requeues itself; the
// scripts find kforge through KFORGE_BIN, PATH or the submit directory's build/bin/kforge.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "launch/free_port.h"
#include "support/launch_job.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

const char* const kScripts[] = {"single_node.sbatch", "multi_node.sbatch"};

// A directory `bin` with the stand-in srun and scontrol; scontrol's calls go to `scontrol_log`.
struct SlurmStandIns {
  fs::path bin, scontrol_log;

  explicit SlurmStandIns(const fs::path& root) : bin(root / "slurm-bin"), scontrol_log(root / "scontrol.log") {
    fs::create_directories(bin);
    fs::create_symlink(fs::path(KFORGE_SOURCE_DIR) / "tests/scripts/fake_srun.sh", bin / "srun");
    fs::create_symlink(fs::path(KFORGE_SOURCE_DIR) / "tests/scripts/fake_scontrol.sh", bin / "scontrol");
  }

  // `bash <script> ARGS` under a one-node Slurm allocation of `tasks` tasks (job 4242), after `env`
  // (VAR=value ...), with only the stand-ins and the system directories on PATH.
  std::string command(const std::string& script, int tasks, const std::string& env, const std::string& args) const {
    return fmt::format("env -u KFORGE_BIN PATH={}:/usr/bin:/bin FAKE_SCONTROL_LOG={} SLURM_JOB_ID=4242 SLURM_NTASKS={} "
                       "SLURM_NTASKS_PER_NODE={} SLURM_NNODES=1 SLURM_NODELIST=localhost SLURM_JOB_NODELIST=localhost "
                       "SLURM_CPUS_PER_TASK=1 {} bash {}/scripts/slurm/{} {}",
                       bin.string(), scontrol_log.string(), tasks, tasks, env, KFORGE_SOURCE_DIR, script, args);
  }

  std::string scontrol_calls() const { return fs::exists(scontrol_log) ? read_file(scontrol_log) : ""; }
};

// A stand-in kforge at `path` that prints how it was called and exits with `code`.
fs::path stand_in_kforge(const fs::path& path, int code) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << fmt::format("#!/bin/sh\necho \"kforge stand-in: $0 $*\"\nexit {}\n", code);
  fs::permissions(path, fs::perms::owner_exec, fs::perm_options::add);
  return path;
}

// `bash single_node.sbatch CONFIG overrides...` with the real kforge under a two-task, one-node
// allocation; the shell first prints its pid, which the script then runs as (exec), as Slurm's
// batch shell.
std::string sbatch_command(const TrainFixture& fx, const SlurmStandIns& slurm,
                           const std::vector<std::string>& overrides) {
  const fs::path config = fx.root / "job.toml";
  std::ofstream(config) << fx.toml;
  std::string args = config.string();
  for (const auto& o : overrides) args += " " + o;
  return "echo batch shell: pid $$; exec " +
         slurm.command("single_node.sbatch", 2,
                       fmt::format("KFORGE_BIN={} MASTER_PORT={}", KFORGE_BIN, launch::free_local_port()), args);
}

TEST(SlurmScript, TwoTasksMeetThroughSlurmVariablesAndTrain) {
  TrainFixture fx;
  const SlurmStandIns slurm(fx.root);
  std::string output;
  ASSERT_EQ(run_command(sbatch_command(fx, slurm, {"--train.max_steps=4"}), &output), 0) << output;
  EXPECT_NE(output.find("rank 0 of 2 (local 0 of 2, from SLURM), rendezvous at localhost"), std::string::npos)
      << output;
  const auto meta = read_json(fx.checkpoint_dir / "step_4" / "metadata.json");
  EXPECT_EQ(meta["world_size"], 2);
  EXPECT_EQ(slurm.scontrol_calls(), "");  // finished: nothing to requeue
}

TEST(SlurmScript, TimeLimitSignalMakesEveryTaskSaveAndTheJobRequeueItself) {
  TrainFixture fx;
  const SlurmStandIns slurm(fx.root);
  std::string output;
  // What --signal=B:USR1@120 does before the time limit: SIGUSR1 to the batch shell.
  const int status =
      signal_after_checkpoint(sbatch_command(fx, slurm, {"--train.max_steps=2000", "--checkpoint.interval=3"}),
                              "batch shell: pid %d", SIGUSR1, output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;  // the tasks exited 75; the script requeued the job
  EXPECT_NE(output.find("shutdown requested (signal 10)"), std::string::npos) << output;
  EXPECT_EQ(slurm.scontrol_calls(), "requeue 4242\n");
  const auto snapshot = checkpoint::CheckpointManager(fx.checkpoint_dir, 0, nullptr).load_newest([](const std::string& m) {
    ADD_FAILURE() << m;
  });
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->train_state["data"].size(), 2u);
}

TEST(SlurmScript, ExitCode75RequeuesTheJobAndExits0) {
  for (const char* script : kScripts) {
    const fs::path root = temp_dir("slurm_requeue");
    const SlurmStandIns slurm(root);
    const fs::path kforge = stand_in_kforge(root / "kforge-75", 75);
    std::string output;
    EXPECT_EQ(run_command(slurm.command(script, 2, "KFORGE_BIN=" + kforge.string(), "cfg.toml"), &output), 0)
        << script << "\n" << output;
    EXPECT_NE(output.find("kforge stand-in: " + kforge.string() + " run cfg.toml"), std::string::npos) << output;
    EXPECT_NE(slurm.scontrol_calls().find("requeue 4242\n"), std::string::npos) << script << slurm.scontrol_calls();
  }
}

// srun --kill-on-bad-exit kills the tasks still running when the first exits 75, and then exits
// 128+signal: after the time-limit warning, that too is a preemption and the job requeues.
TEST(SlurmScript, ATaskKilledAfterTheTimeLimitWarningStillRequeues) {
  for (const char* script : kScripts) {
    const fs::path root = temp_dir("slurm_killed_task");
    const SlurmStandIns slurm(root);
    // Killed (137) by the forwarded SIGUSR1, once it has said it is running.
    const fs::path kforge = root / "kforge-killed";
    std::ofstream(kforge) << "#!/bin/bash\ntrap 'kill \"$!\"; exit 137' USR1\necho 'checkpoint saved: stand-in'\n"
                             "while :; do sleep 60 >/dev/null 2>&1 & wait $!; done\n";
    fs::permissions(kforge, fs::perms::owner_exec, fs::perm_options::add);
    std::string output;
    const int status = signal_after_checkpoint(
        "echo batch shell: pid $$; exec " + slurm.command(script, 1, "KFORGE_BIN=" + kforge.string(), "cfg.toml"),
        "batch shell: pid %d", SIGUSR1, output);
    ASSERT_TRUE(WIFEXITED(status)) << output;
    EXPECT_EQ(WEXITSTATUS(status), 0) << script << "\n" << output;
    EXPECT_NE(slurm.scontrol_calls().find("requeue 4242\n"), std::string::npos) << script << slurm.scontrol_calls();
  }
}

TEST(SlurmScript, ExitCodes0And1DoNotRequeue) {
  for (const char* script : kScripts) {
    for (const int code : {0, 1}) {
      const fs::path root = temp_dir("slurm_no_requeue");
      const SlurmStandIns slurm(root);
      const fs::path kforge = stand_in_kforge(root / "kforge", code);
      std::string output;
      EXPECT_EQ(run_command(slurm.command(script, 2, "KFORGE_BIN=" + kforge.string(), "cfg.toml"), &output), code)
          << script << "\n" << output;
      EXPECT_EQ(slurm.scontrol_calls().find("requeue"), std::string::npos) << script << slurm.scontrol_calls();
    }
  }
}

TEST(SlurmScript, FailedRequeueExits75AndSaysToResubmit) {
  for (const char* script : kScripts) {
    const fs::path root = temp_dir("slurm_requeue_refused");
    const SlurmStandIns slurm(root);
    const fs::path kforge = stand_in_kforge(root / "kforge", 75);
    std::string output;
    EXPECT_EQ(run_command(slurm.command(script, 1, "FAKE_SCONTROL_REQUEUE_EXIT=1 KFORGE_BIN=" + kforge.string(),
                                        "cfg.toml"),
                          &output),
              75)
        << script << "\n" << output;
    EXPECT_NE(output.find("could not requeue job 4242: resubmit to resume"), std::string::npos) << output;
  }
}

TEST(SlurmScript, FindsKforgeOnPathElseUnderTheSubmitDirectory) {
  for (const char* script : kScripts) {
    const fs::path root = temp_dir("slurm_find_kforge");
    const SlurmStandIns slurm(root);
    std::string output;
    // Nowhere: a message naming the ways to provide it.
    EXPECT_EQ(run_command(slurm.command(script, 1, "SLURM_SUBMIT_DIR=" + root.string(), "cfg.toml"), &output), 2)
        << output;
    EXPECT_NE(output.find("set KFORGE_BIN=/path/to/build/bin/kforge, put kforge on PATH, or submit from the kforge "
                          "checkout"),
              std::string::npos)
        << output;
    // In the submit directory's build/bin.
    const fs::path built = stand_in_kforge(root / "build/bin/kforge", 0);
    ASSERT_EQ(run_command(slurm.command(script, 1, "SLURM_SUBMIT_DIR=" + root.string(), "cfg.toml"), &output), 0)
        << output;
    EXPECT_NE(output.find("kforge stand-in: " + built.string() + " run cfg.toml"), std::string::npos) << output;
    // On PATH, which comes first.
    const fs::path on_path = stand_in_kforge(slurm.bin / "kforge", 0);
    ASSERT_EQ(run_command(slurm.command(script, 1, "SLURM_SUBMIT_DIR=" + root.string(), "cfg.toml"), &output), 0)
        << output;
    EXPECT_NE(output.find("kforge stand-in: " + on_path.string() + " run cfg.toml"), std::string::npos) << output;
  }
}

}  // namespace
}  // namespace kforge::test
