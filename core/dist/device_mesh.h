// DeviceMesh: the ranks arranged over (pp, dp_replicate, dp_shard, cp, ep, tp), KempnerForge's order with cp where
// torchtitan puts it, with one process group per dimension (and ones over the data-parallel dims) created once.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>

#include "config/job_config.h"
#include "dist/group.h"

namespace kforge::dist {

inline constexpr std::array<const char*, 6> kMeshDims = {"pp", "dp_replicate", "dp_shard", "cp", "ep", "tp"};

/// The size of each mesh dimension, in kMeshDims order.
struct MeshShape {
  std::array<int, 6> sizes{1, 1, 1, 1, 1, 1};

  /// From [distributed] for `world_size` ranks: dp_shard = -1 takes the rest of the world. Throws
  /// sdk::ConfigError naming the keys when the product is not the world size.
  static MeshShape resolve(const config::DistributedConfig& d, int world_size);

  /// A dimension of kMeshDims, or "dp" (dp_replicate x dp_shard), "dp_cp" (dp x cp: the ranks that share the
  /// parameters' gradients) or "dp_shard_cp" (dp_shard x cp: the ranks FSDP shards over).
  int size(const std::string& dim) const;
  int world_size() const;
  /// "pp=1 dp_replicate=1 dp_shard=2 cp=1 ep=1 tp=1".
  std::string describe() const;
};

class DeviceMesh {
 public:
  /// A one-rank mesh.
  DeviceMesh() = default;
  /// Joins this rank's group along every dimension of size > 1 and the data-parallel groups ("dp" = dp_replicate x
  /// dp_shard, and with cp > 1 "dp_cp" and "dp_shard_cp", which are "dp" and "dp_shard" when cp = 1), running their
  /// collectives on `device`; collective over all ranks.
  DeviceMesh(const MeshShape& shape, int rank, const c10::intrusive_ptr<c10d::Store>& store,
             std::chrono::milliseconds timeout, const Endpoints& endpoints,
             c10::Device device = c10::Device(c10::DeviceType::CPU));

  const MeshShape& shape() const { return shape_; }
  /// This rank's coordinate along `dim`.
  int coordinate(const std::string& dim) const;
  /// The group along one dimension, or "dp", "dp_cp", "dp_shard_cp" (a group of one when that size is 1).
  const Group& group(const std::string& dim) const;

  /// Global ranks that share every coordinate except `dims` with `rank`, in order.
  static std::vector<int> peers(const MeshShape& shape, int rank, const std::vector<std::string>& dims);

 private:
  MeshShape shape_;
  std::array<int, 6> coords_{0, 0, 0, 0, 0, 0};
  std::map<std::string, std::unique_ptr<Group>> groups_;
};

}  // namespace kforge::dist
