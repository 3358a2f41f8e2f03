// ParallelModel's defaults, and what its implementations share.
#include "parallel/parallel_model.h"

#include <ATen/ATen.h>

namespace kforge::parallel {

std::unique_ptr<sdk::Optimizer> ParallelModel::make_optimizer(const config::JobConfig& /*job*/,
                                                              const plugins::Components& components) const {
  return components.optimizer(parameters());
}

double ParallelModel::eval_loss(StepHost& trainer, const data::Batch& batch) {
  trainer.model().set_documents(batch.doc_ids);  // packed rows ([data] pack_sequences), else none
  trainer.set_images(batch);                     // a vision-language batch's images, else none
  return trainer.loss().compute(trainer.forward(batch.input_ids), batch.labels).item<double>();
}

void fill_missing_grads(const std::vector<sdk::NamedParameter>& params) {
  for (const auto& p : params) {
    at::Tensor tensor = p.tensor;
    if (tensor.requires_grad() && !tensor.grad().defined()) tensor.mutable_grad() = at::zeros_like(tensor);
  }
}

bool stage_leader(const dist::DeviceMesh& mesh) {
  for (const char* dim : {"dp_replicate", "dp_shard", "cp", "ep", "tp"}) {
    if (mesh.coordinate(dim) != 0) return false;
  }
  return true;
}

void save_buffers(const sdk::Model& model, checkpoint::Snapshot& s) {
  for (const auto& item : model.named_buffers(true)) s.model.emplace(item.key(), item.value().detach());
}

}  // namespace kforge::parallel
