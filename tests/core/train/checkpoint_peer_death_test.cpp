// A rank killed in the middle of a save: the survivor's checkpoint collectives run on a process
// group, which notices the dead peer at once, so it fails with a clear error within seconds
// instead of waiting out distributed.nccl_timeout_sec (a gather through the store did).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

class PeerDeathDuringSave : public ::testing::TestWithParam<const char*> {};

TEST_P(PeerDeathDuringSave, TheSurvivorFailsWithAClearErrorWellBeforeTheCollectiveTimeout) {
  TrainFixture fx;
  // A long grace period, and no forced exit after the launcher's SIGTERM: rank 0 must end by itself.
  std::string command =
      launch_command(fx, 2,
                     {"--train.max_steps=20", "--distributed.nccl_timeout_sec=60", "--train.shutdown_timeout_sec=0",
                      fmt::format("--checkpoint.async_mode={}", GetParam())});
  const std::string grace = "--grace-sec 5";
  ASSERT_NE(command.find(grace), std::string::npos) << command;
  command.replace(command.find(grace), grace.size(), "--grace-sec 120");
  const auto start = std::chrono::steady_clock::now();
  std::string output;
  const int status = run_command("KFORGE_FAULT=checkpoint.shard_partial KFORGE_FAULT_RANK=1 " + command, &output);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(status, 128 + 9) << output;  // the launcher reports the killed rank 1 first
  EXPECT_LT(seconds, 20.0) << "the job took " << seconds << " s (collective timeout 60 s):\n" << output;
  const std::string rank0 = read_file(fx.root / "logs" / "rank_0.log");
  EXPECT_NE(rank0.find("training failed:"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("Another rank probably died"), std::string::npos) << rank0;
}

INSTANTIATE_TEST_SUITE_P(Modes, PeerDeathDuringSave, ::testing::Values("disabled", "async"));

}  // namespace
}  // namespace kforge::test
