// A rank killed in the middle of a save: the survivor's checkpoint collectives run on a process
// group, which notices the dead peer at once (its connection closes), so it fails with a clear error
// naming that, instead of waiting out distributed.nccl_timeout_sec (a gather through the store did).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "core/train/train_fixture.h"
#include "support/launch_job.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

class PeerDeathDuringSave : public ::testing::TestWithParam<const char*> {};

// What ends rank 0 is the event itself, the dead peer's closed connection, not a timer running out: its error names the
// connection the peer closed (or reset) and no timeout. A survivor that waited out nccl_timeout_sec (60 s, within the
// launcher's 120 s grace) would fail naming a timeout instead, so the test reads the cause rather than timing the job.
TEST_P(PeerDeathDuringSave, TheSurvivorFailsWithAClearErrorWhenThePeersConnectionCloses) {
  TrainFixture fx;
  // A long grace period, and no forced exit after the launcher's SIGTERM: rank 0 must end by itself.
  std::string command =
      launch_command(fx, 2,
                     {"--train.max_steps=20", "--distributed.nccl_timeout_sec=60", "--train.shutdown_timeout_sec=0",
                      fmt::format("--checkpoint.async_mode={}", GetParam())});
  const std::string grace = "--grace-sec 5";
  ASSERT_NE(command.find(grace), std::string::npos) << command;
  command.replace(command.find(grace), grace.size(), "--grace-sec 120");
  std::string output;
  const int status = run_command("KFORGE_FAULT=checkpoint.shard_partial KFORGE_FAULT_RANK=1 " + command, &output);
  EXPECT_EQ(status, 128 + 9) << output;  // the launcher reports the killed rank 1 first
  const std::string rank0 = read_file(fx.root / "logs" / "rank_0.log");
  EXPECT_NE(rank0.find("training failed:"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("The peer it lost: rank 1 on host "), std::string::npos) << rank0;  // named, not guessed at
  // Gloo's words for the dead peer's socket: "Connection closed by peer" (end of stream) or "Connection reset by peer".
  EXPECT_NE(rank0.find(" by peer"), std::string::npos) << rank0;
  EXPECT_EQ(rank0.find("Timed out"), std::string::npos) << rank0;
}

INSTANTIATE_TEST_SUITE_P(Modes, PeerDeathDuringSave, ::testing::Values("disabled", "async"));

}  // namespace
}  // namespace kforge::test
