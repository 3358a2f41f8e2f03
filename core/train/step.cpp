#include "train/step.h"

#include <ATen/ATen.h>

#include "train/trainer.h"

namespace kforge::train {

double clip_grad_norm(const std::vector<sdk::NamedParameter>& params, double max_norm) {
  std::vector<at::Tensor> norms;
  for (const auto& p : params) {
    if (p.tensor.grad().defined()) norms.push_back(at::norm(p.tensor.grad(), 2));
  }
  if (norms.empty()) return 0.0;
  const at::Tensor total = at::norm(at::stack(norms), 2);
  const at::Tensor coef = at::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (const auto& p : params) {
    if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(coef);
  }
  return total.item<double>();
}

StepResult standard_step(Trainer& trainer, const std::vector<data::Batch>& micro_batches) {
  const double n = static_cast<double>(micro_batches.size());
  double loss_sum = 0;
  for (const data::Batch& batch : micro_batches) {
    at::Tensor logits = trainer.model().forward(batch.input_ids);
    at::Tensor loss = trainer.loss().compute(logits, batch.labels);
    for (const auto& [name, aux] : trainer.model().auxiliary_losses()) loss = loss + aux;
    (loss / n).backward();
    loss_sum += loss.item<double>();
  }
  const double norm = clip_grad_norm(trainer.parameters(), trainer.job().train.grad_clip_norm);
  return {loss_sum / n, norm};
}

}  // namespace kforge::train
