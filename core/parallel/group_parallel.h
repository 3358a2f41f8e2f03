// GroupParallel: expert or tensor parallelism over the model inside: some parameters split over a process group (ep,
// tp; GroupSharding), counted once per rank in the gradient norm, trimmed from and cut out of checkpoints.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "parallel/group_sharding.h"
#include "parallel/parallel_wrapper.h"

namespace kforge::parallel {

class GroupParallel final : public ParallelWrapper {
 public:
  /// `sharding` over `inner`; `metric` names the seconds `take_seconds` gives (the group's exchanges since its last
  /// call) on a logged step.
  GroupParallel(std::unique_ptr<ParallelModel> inner, GroupSharding sharding, std::string metric,
                std::function<double()> take_seconds);

  double clip_scoped(double max_norm, const NormScope& scope) override;
  void log_step_metrics(bool logged, const MetricSink& sink) override;
  void save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const override;
  std::optional<checkpoint::Snapshot> localise(const checkpoint::Snapshot& whole) const override;

 private:
  GroupSharding sharding_;
  std::string metric_;
  std::function<double()> take_seconds_;
};

}  // namespace kforge::parallel
