// SIGTERM / SIGUSR1: the run saves at the next step boundary and reports preemption.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

TEST(Preemption, SigtermSavesAtTheStepBoundaryAndTheNextRunResumes) {
  TrainFixture fx;
  auto hook = std::make_shared<RecordingHook>();
  hook->signal_at = 3;
  hook->signal = SIGTERM;
  const auto result = fx.run({"--checkpoint.interval=1000"}, {hook});
  EXPECT_EQ(result.outcome, train::Outcome::Preempted);
  EXPECT_EQ(result.step, 3);
  EXPECT_EQ(std::filesystem::read_symlink(fx.checkpoint_dir / "latest"), std::filesystem::path("step_3"));
  const auto resumed = fx.run({"--checkpoint.interval=1000"}, {});
  EXPECT_EQ(resumed.resumed_from, 3);
  EXPECT_EQ(resumed.outcome, train::Outcome::Completed);
}

TEST(Preemption, SigusrOneAlsoRequestsAShutdown) {
  TrainFixture fx;
  auto hook = std::make_shared<RecordingHook>();
  hook->signal_at = 2;
  hook->signal = SIGUSR1;
  const auto result = fx.run({}, {hook});
  EXPECT_EQ(result.outcome, train::Outcome::Preempted);
  EXPECT_TRUE(std::filesystem::exists(fx.checkpoint_dir / "step_2"));
}

TEST(Preemption, CtrlCSavesLikeSigterm) {
  TrainFixture fx;
  auto hook = std::make_shared<RecordingHook>();
  hook->signal_at = 4;
  hook->signal = SIGINT;
  const auto result = fx.run({}, {hook});
  EXPECT_EQ(result.outcome, train::Outcome::Preempted);
  EXPECT_EQ(result.step, 4);
  EXPECT_TRUE(std::filesystem::exists(fx.checkpoint_dir / "step_4"));
}

// The kforge process itself: a SIGTERM sent once training has produced a metric line makes it
// save and exit with 75 (so a SLURM requeue resumes it).
TEST(Preemption, KforgeRunExitsWith75AfterSigterm) {
  TrainFixture fx;
  const auto config = fx.root / "run.toml";
  std::ofstream(config) << fx.toml;
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    execl(KFORGE_BIN, KFORGE_BIN, "run", config.c_str(), "--plugin-dir", KFORGE_PLUGIN_DIR, "--train.max_steps=2000",
          "--metrics.backends=[\"console\"]", "--checkpoint.interval=100000", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  FILE* stream = fdopen(out[0], "r");
  char line[512];
  bool saw_step = false;
  while (fgets(line, sizeof(line), stream) != nullptr) {
    if (std::string(line).find(" [step 2] ") != std::string::npos) {
      saw_step = true;
      kill(pid, SIGTERM);
      break;
    }
  }
  while (fgets(line, sizeof(line), stream) != nullptr) {
  }
  fclose(stream);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(saw_step) << "no ' [step 2] ' line on stdout: no SIGTERM was sent (the run stops by itself at step 2000)";
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 75);
  EXPECT_TRUE(std::filesystem::exists(fx.checkpoint_dir / "latest"));
}

}  // namespace
}  // namespace kforge::test
