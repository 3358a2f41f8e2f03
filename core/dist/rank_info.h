// RankInfo: this process's place in the job, read from torchrun's or SLURM's environment.
#pragma once

#include <string>

namespace kforge::dist {

struct RankInfo {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source = "single process";  ///< "torchrun", "SLURM" or "single process"

  bool distributed() const { return world_size > 1; }
  /// All ranks on this host (no other node takes part).
  bool single_node() const { return local_world_size == world_size; }
};

/// torchrun's RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; else
/// SLURM's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE and the first host of
/// SLURM_NODELIST (MASTER_ADDR/MASTER_PORT still win when set); else one process. Throws
/// sdk::ConfigError naming the variable when a value is malformed or inconsistent.
RankInfo rank_info_from_env();

/// The first host name of a SLURM node list: "gpu[03-05,09],cpu1" -> "gpu03".
std::string first_slurm_host(const std::string& nodelist);

}  // namespace kforge::dist
