// join_eval_ranks: the world group of a `kforge eval` launched on several processes.
#include "cli/eval_ranks.h"

#include "dist/rank_info.h"

namespace kforge::cli {

std::unique_ptr<dist::Runtime> join_eval_ranks(const config::JobConfig& job) {
  const dist::RankInfo info = dist::rank_info_from_env();
  if (!info.distributed()) return std::make_unique<dist::Runtime>();
  config::DistributedConfig data_parallel = job.distributed;  // its timeout_sec
  data_parallel.dp_shard = -1;
  data_parallel.dp_replicate = data_parallel.tp = data_parallel.pp = data_parallel.cp = data_parallel.ep = 1;
  return std::make_unique<dist::Runtime>(info, data_parallel);
}

}  // namespace kforge::cli
