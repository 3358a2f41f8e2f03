// ParallelWrapper: a ParallelModel that composes over another (expert, tensor or pipeline parallelism over the data
// parallelism inside it): everything is the inner model's unless the wrapper changes it.
#pragma once

#include <memory>

#include "parallel/parallel_model.h"

namespace kforge::parallel {

class ParallelWrapper : public ParallelModel {
 public:
  explicit ParallelWrapper(std::unique_ptr<ParallelModel> inner) : inner_(std::move(inner)) {}

  const std::vector<sdk::NamedParameter>& parameters() const override { return inner_->parameters(); }
  at::Tensor forward(const at::Tensor& tokens) override { return inner_->forward(tokens); }
  void sync_gradients() override { inner_->sync_gradients(); }
  void zero_grad() override { inner_->zero_grad(); }
  double clip_scoped(double max_norm, const NormScope& scope) override { return inner_->clip_scoped(max_norm, scope); }
  std::unique_ptr<sdk::Optimizer> make_optimizer(const config::JobConfig& job,
                                                 const plugins::Components& components) const override {
    return inner_->make_optimizer(job, components);
  }
  OwnStepFn own_step(bool custom) const override { return inner_->own_step(custom); }
  double eval_loss(StepHost& trainer, const data::Batch& batch) override { return inner_->eval_loss(trainer, batch); }
  void log_step_metrics(bool logged, const MetricSink& sink) override { inner_->log_step_metrics(logged, sink); }
  void save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const override {
    inner_->save_slices(s, optimizer);
  }
  void save_whole(checkpoint::Snapshot& s) const override { inner_->save_whole(s); }
  std::optional<checkpoint::Snapshot> localise(const checkpoint::Snapshot& whole) const override {
    return inner_->localise(whole);
  }
  void load_weights(const checkpoint::Snapshot& s) override { inner_->load_weights(s); }
  checkpoint::TensorMap optimizer_state(const checkpoint::TensorMap& state) const override {
    return inner_->optimizer_state(state);
  }

 protected:
  /// The inner model's localise() of `mine`, this wrapper's part of a loaded snapshot: the part this rank holds.
  checkpoint::Snapshot localise_within(checkpoint::Snapshot mine) const {
    std::optional<checkpoint::Snapshot> inner = inner_->localise(mine);
    return inner ? std::move(*inner) : std::move(mine);
  }

  std::unique_ptr<ParallelModel> inner_;
};

}  // namespace kforge::parallel
