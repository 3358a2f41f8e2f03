// Rank layout from the launcher's environment and the device mesh rules (KempnerForge's).
#include <gtest/gtest.h>

#include <cstdlib>

#include "dist/device_mesh.h"
#include "dist/rank_info.h"
#include "kforge/sdk/error.h"

namespace kforge::test {
namespace {

config::DistributedConfig dims(int64_t dp_shard, int64_t dp_replicate = 1, int64_t tp = 1, int64_t cp = 1) {
  return {dp_shard, dp_replicate, tp, /*pp=*/1, cp, /*ep=*/1, /*timeout_sec=*/60};
}

TEST(RankInfo, FirstSlurmHostKeepsZeroPadding) {
  EXPECT_EQ(dist::first_slurm_host("gpu[03-05,09],cpu1"), "gpu03");
  EXPECT_EQ(dist::first_slurm_host("node7,node8"), "node7");
  EXPECT_EQ(dist::first_slurm_host("login"), "login");
}

TEST(RankInfo, TorchrunVariablesWinOverSlurm) {
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("RANK", "3", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("LOCAL_WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "10.0.0.1", 1);
  ::setenv("MASTER_PORT", "12345", 1);
  ::setenv("SLURM_NTASKS", "8", 1);
  const dist::RankInfo info = dist::rank_info_from_env();
  EXPECT_EQ(info.source, "torchrun");
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.world_size, 4);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_FALSE(info.single_node());
  EXPECT_EQ(info.master_addr, "10.0.0.1");
  EXPECT_EQ(info.master_port, 12345);
  ::setenv("RANK", "4", 1);
  EXPECT_THROW(dist::rank_info_from_env(), sdk::ConfigError);
  for (const char* v : {"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(v);

  ::setenv("SLURM_PROCID", "5", 1);
  ::setenv("SLURM_LOCALID", "1", 1);
  ::setenv("SLURM_NTASKS_PER_NODE", "4(x2)", 1);
  ::setenv("SLURM_NODELIST", "gpu[12-13]", 1);
  const dist::RankInfo slurm = dist::rank_info_from_env();
  EXPECT_EQ(slurm.source, "SLURM");
  EXPECT_EQ(slurm.rank, 5);
  EXPECT_EQ(slurm.world_size, 8);
  EXPECT_EQ(slurm.local_world_size, 4);
  EXPECT_EQ(slurm.master_addr, "gpu12");
  for (const char* v : {"SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE", "SLURM_NODELIST"}) {
    ::unsetenv(v);
  }
  EXPECT_FALSE(dist::rank_info_from_env().distributed());
}

TEST(DeviceMesh, AutoDpShardTakesTheRestOfTheWorld) {
  const dist::MeshShape shape = dist::MeshShape::resolve(dims(-1, 2), 8);
  EXPECT_EQ(shape.size("dp_replicate"), 2);
  EXPECT_EQ(shape.size("dp_shard"), 4);
  EXPECT_EQ(shape.size("dp"), 8);
  EXPECT_EQ(shape.describe(), "pp=1 dp_replicate=2 dp_shard=4 cp=1 ep=1 tp=1");
}

TEST(DeviceMesh, ProductNotMatchingTheWorldNamesTheKeys) {
  try {
    dist::MeshShape::resolve(dims(3), 2);
    FAIL() << "expected a ConfigError";
  } catch (const sdk::ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("[distributed]"), std::string::npos) << m;
    EXPECT_NE(m.find("dp_shard=3"), std::string::npos) << m;
    EXPECT_NE(m.find("world size (2"), std::string::npos) << m;
  }
  EXPECT_THROW(dist::MeshShape::resolve(dims(-1, 3), 4), sdk::ConfigError);
  EXPECT_THROW(dist::MeshShape::resolve(dims(0), 1), sdk::ConfigError);
}

TEST(DeviceMesh, PeersVaryOnlyAlongTheNamedDims) {
  // 2 x 2 (dp_replicate x tp): row-major with tp fastest, as torch's init_device_mesh.
  const dist::MeshShape shape = dist::MeshShape::resolve(dims(1, 2, 2), 4);
  EXPECT_EQ(dist::DeviceMesh::peers(shape, 1, {"tp"}), (std::vector<int>{0, 1}));
  EXPECT_EQ(dist::DeviceMesh::peers(shape, 1, {"dp_replicate"}), (std::vector<int>{1, 3}));
  EXPECT_EQ(dist::DeviceMesh::peers(shape, 2, {"dp_replicate", "dp_shard"}), (std::vector<int>{0, 2}));
}

TEST(DeviceMesh, ContextParallelRanksShareTheGradientGroupsAndNotTheData) {
  // dp_shard x cp = 2 x 2: cp after dp_shard, as torchtitan; ranks 0 and 1 form a cp group.
  const dist::MeshShape shape = dist::MeshShape::resolve(dims(2, 1, 1, 2), 4);
  EXPECT_EQ(shape.describe(), "pp=1 dp_replicate=1 dp_shard=2 cp=2 ep=1 tp=1");
  EXPECT_EQ(dist::DeviceMesh::peers(shape, 2, {"cp"}), (std::vector<int>{2, 3}));
  EXPECT_EQ(dist::DeviceMesh::peers(shape, 1, {"dp_replicate", "dp_shard"}), (std::vector<int>{1, 3}));
  EXPECT_EQ(dist::DeviceMesh::peers(shape, 1, {"dp_shard", "cp"}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(shape.size("dp"), 2);
  EXPECT_EQ(shape.size("dp_cp"), 4);
  EXPECT_EQ(shape.size("dp_shard_cp"), 4);
}

}  // namespace
}  // namespace kforge::test
