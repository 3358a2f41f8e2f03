// ShardedParallel: the step, norm, optimizer and checkpoint view of a fully sharded model.
#include "parallel/sharded_parallel.h"

#include "kforge/sdk/abi.h"
#include "log/log.h"
#include "parallel/whole_matrix_optimizer.h"

namespace kforge::parallel {

ShardedParallel::ShardedParallel(sdk::Model& model, const dist::DeviceMesh& mesh,
                                 std::unique_ptr<FullyShardedModel> fsdp)
    : model_(model), mesh_(mesh), fsdp_(std::move(fsdp)) {}

double ShardedParallel::clip_scoped(double max_norm, const NormScope& scope) {
  if (scope.empty()) return fsdp_->clip_gradients(max_norm);
  return clip_sharded(fsdp_->shards(), mesh_.group("dp_shard_cp"), scope.shardings, max_norm, scope.stages);
}

std::unique_ptr<sdk::Optimizer> ShardedParallel::make_optimizer(const config::JobConfig& job,
                                                                const plugins::Components& components) const {
  if ((components.optimizer_capabilities() & KFORGE_CAP_NEEDS_WHOLE_MATRICES) == 0) {
    return ParallelModel::make_optimizer(job, components);
  }
  log::get().info(
      "[optimizer] name = \"{}\" updates whole matrices: each step gathers every parameter and its gradient over "
      "dp_shard and updates them whole on every rank, which keeps its rows; the optimizer state is whole on every rank",
      job.view("optimizer").get_string("name"));
  return std::make_unique<WholeMatrixOptimizer>(
      *fsdp_, [&](std::vector<sdk::NamedParameter> whole) { return components.optimizer(std::move(whole)); });
}

void ShardedParallel::save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const {
  if (mesh_.coordinate("dp_replicate") != 0) return;
  for (const auto& p : fsdp_->shards()) s.model.emplace(p.name, p.tensor.detach());
  s.optimizer = optimizer.state_dict();
  s.placements = fsdp_->placements(s.model, s.optimizer);
  if (mesh_.coordinate("dp_shard_cp") == 0) return;
  for (auto it = s.optimizer.begin(); it != s.optimizer.end();) {
    it = s.placements.count("optimizer/" + it->first) ? std::next(it) : s.optimizer.erase(it);
  }
}

void ShardedParallel::save_whole(checkpoint::Snapshot& s) const {
  if (!stage_leader(mesh_)) return;
  save_buffers(model_, s);
  for (const auto& p : fsdp_->whole()) s.model.emplace(p.name, p.tensor.detach());
}

}  // namespace kforge::parallel
