// GroupParallel: a group sharding's norm, metric and checkpoint view over the model inside.
#include "parallel/group_parallel.h"

namespace kforge::parallel {

GroupParallel::GroupParallel(std::unique_ptr<ParallelModel> inner, GroupSharding sharding, std::string metric,
                             std::function<double()> take_seconds)
    : ParallelWrapper(std::move(inner)),
      sharding_(std::move(sharding)),
      metric_(std::move(metric)),
      take_seconds_(std::move(take_seconds)) {}

double GroupParallel::clip_scoped(double max_norm, const NormScope& scope) {
  NormScope mine = scope;
  mine.shardings.insert(mine.shardings.begin(), &sharding_);  // inner wrappers first: ep before tp
  return inner_->clip_scoped(max_norm, mine);
}

void GroupParallel::log_step_metrics(bool logged, const MetricSink& sink) {
  inner_->log_step_metrics(logged, sink);
  const double seconds = take_seconds_();
  if (logged) sink({{metric_, seconds}});
}

void GroupParallel::save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const {
  inner_->save_slices(s, optimizer);
  sharding_.trim(s);  // group rank r > 0 writes its slices only
}

std::optional<checkpoint::Snapshot> GroupParallel::localise(const checkpoint::Snapshot& whole) const {
  return localise_within(sharding_.localise(whole));
}

}  // namespace kforge::parallel
