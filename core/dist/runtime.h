// Runtime: the process groups of one job: rendezvous over c10d's TCPStore, the world group, the
// checkpoint groups (step loop and asynchronous writer) and the device mesh. A single process gets
// groups of one.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "dist/device_mesh.h"
#include "dist/group.h"
#include "dist/rank_info.h"

namespace kforge::dist {

class Runtime {
 public:
  /// One process: no store, every group is a group of one.
  Runtime() = default;
  /// Rendezvous of `info.world_size` ranks at MASTER_ADDR:MASTER_PORT (rank 0 hosts the store),
  /// then the mesh from [distributed], whose groups run their collectives on `device` (the checkpoint groups, which
  /// carry only small CPU metadata, stay on the CPU). Throws sdk::ConfigError naming the keys on a bad mesh and
  /// sdk::Error naming the address when the rendezvous times out.
  Runtime(const RankInfo& info, const config::DistributedConfig& config,
          c10::Device device = c10::Device(c10::DeviceType::CPU));
  ~Runtime();

  const RankInfo& info() const { return info_; }
  int rank() const { return info_.rank; }
  int world_size() const { return info_.world_size; }
  const Group& world() const { return *world_; }
  /// Used only around checkpoint commits, so a barrier there never queues behind other traffic.
  const Group& checkpoint_group() const { return *checkpoint_; }
  /// Used only by the asynchronous checkpoint writer thread: its collectives never interleave
  /// with the step loop's (two threads on one group could order them differently on each rank).
  const Group& checkpoint_writer_group() const { return *checkpoint_writer_; }
  const DeviceMesh& mesh() const { return *mesh_; }
  /// The data-parallel group (dp_replicate x dp_shard).
  const Group& dp() const { return mesh_->group("dp"); }

  /// A new group of every rank on the CPU, named `name` (every rank creates it, at the same point), whose
  /// collectives fail after `timeout`, set by the config key `timeout_key`: e.g. a health check's, with a deadline
  /// shorter than nccl_timeout_sec.
  std::unique_ptr<Group> world_group(const std::string& name, std::chrono::milliseconds timeout,
                                     const std::string& timeout_key) const;
  /// Every rank's endpoint (rank, host, address, pid), in rank order; empty for one process.
  const std::vector<Peer>& peers() const;

  /// Every rank's `value` under `tag` (a tag is used once), in rank order, through the store.
  std::vector<std::string> all_gather_strings(const std::string& tag, const std::string& value) const;

 private:
  RankInfo info_;
  std::chrono::milliseconds timeout_{0};
  c10::intrusive_ptr<c10d::Store> store_;
  Endpoints endpoints_;  ///< where every rank's Gloo devices listen (empty for one process)
  std::unique_ptr<Group> world_ = std::make_unique<Group>();
  std::unique_ptr<Group> checkpoint_ = std::make_unique<Group>();
  std::unique_ptr<Group> checkpoint_writer_ = std::make_unique<Group>();
  std::unique_ptr<DeviceMesh> mesh_ = std::make_unique<DeviceMesh>();
};

}  // namespace kforge::dist
