// PlainParallel: the step, norm and checkpoint view of a model held whole on every rank.
#include "parallel/plain_parallel.h"

#include "checkpoint/model_loading.h"
#include "parallel/gradient_norm.h"

namespace kforge::parallel {

PlainParallel::PlainParallel(sdk::Model& model, std::vector<sdk::NamedParameter> params, const dist::DeviceMesh& mesh,
                             const dist::Group& dp, std::unique_ptr<ReplicatedModel> replicated)
    : model_(model), params_(std::move(params)), mesh_(mesh), dp_(dp), replicated_(std::move(replicated)) {}

at::Tensor PlainParallel::forward(const at::Tensor& tokens) {
  return replicated_ ? replicated_->forward(tokens) : model_.forward(tokens);
}

void PlainParallel::sync_gradients() {
  fill_missing_grads(params_);
  if (replicated_) replicated_->sync();
}

void PlainParallel::zero_grad() {
  for (const auto& p : params_) p.tensor.mutable_grad().reset();
}

double PlainParallel::clip_scoped(double max_norm, const NormScope& scope) {
  if (scope.empty()) return clip_grad_norm(params_, max_norm);
  return clip_sharded(params_, mesh_.group("dp_shard"), scope.shardings, max_norm, scope.stages);
}

void PlainParallel::save_slices(checkpoint::Snapshot& s, const sdk::Optimizer& optimizer) const {
  if (dp_.rank() != 0) return;
  for (const auto& item : model_.named_parameters(true)) s.model.emplace(item.key(), item.value().detach());
  s.optimizer = optimizer.state_dict();
}

void PlainParallel::save_whole(checkpoint::Snapshot& s) const {
  if (stage_leader(mesh_)) save_buffers(model_, s);
}

void PlainParallel::load_weights(const checkpoint::Snapshot& s) { checkpoint::load_model_weights(model_, s); }

}  // namespace kforge::parallel
