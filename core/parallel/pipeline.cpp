// Pipeline: a pipeline-parallel rank's step.
#include "parallel/pipeline.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/autograd.h>

#include <chrono>

#include "feed/mixture_feed.h"
#include "kforge/sdk/error.h"
#include "parallel/pipeline_order.h"
#include "parallel/precision.h"
#include "parallel/token_weights.h"
#include "profiling/user_scope.h"

namespace kforge::parallel {

Pipeline::Pipeline(StageModel& stage, const dist::Group& pp, std::unique_ptr<sdk::PipelineSchedule> schedule,
                   std::string name, int micro_batches)
    : stage_(stage),
      group_(pp),
      schedule_(std::move(schedule)),
      name_(std::move(name)),
      chunks_(schedule_->chunks()),
      link_(pp, pp.size() * schedule_->chunks()) {
  std::vector<std::vector<sdk::PipelinePass>> orders;
  for (int r = 0; r < pp.size(); ++r) orders.push_back(schedule_->order(pp.size(), r, micro_batches));
  planned_bubble_ = check_pipeline_orders(orders, chunks_, micro_batches, name_);
  order_ = orders[static_cast<size_t>(pp.rank())];
}

StepResult Pipeline::run(StepHost& trainer, const std::vector<data::Batch>& micro_batches) {
  const auto start = std::chrono::steady_clock::now();
  const int n = static_cast<int>(micro_batches.size());
  std::vector<int64_t> counts;
  for (const data::Batch& batch : micro_batches) counts.push_back(trained_tokens(batch.labels));
  const std::vector<double> weights = token_weights(counts, trainer.runtime().dp());
  const int ranks = group_.size(), stages = ranks * chunks_;
  const std::optional<at::ScalarType> autocast = autocast_dtype(trainer.job().train.mixed_precision);
  std::vector<at::Tensor> inputs(static_cast<size_t>(chunks_ * n)), outputs(inputs.size()), row_losses;
  const bool rows = micro_batches.front().sources.defined();
  if (rows) row_losses.resize(static_cast<size_t>(n));
  double loss_sum = 0;
  for (const sdk::PipelinePass& pass : order_) {
    const int v = pass.chunk * ranks + group_.rank(), m = pass.micro_batch;
    const size_t k = static_cast<size_t>(pass.chunk * n + m);
    const data::Batch& batch = micro_batches[static_cast<size_t>(m)];
    if (pass.forward) {
      const profiling::UserScope scope("forward");
      at::Tensor input = v > 0 ? link_.receive_input(v, m, batch.input_ids.sizes()) : at::Tensor();
      at::Tensor out;
      {
        const AutocastGuard guard(autocast);
        stage_.set_pass(pass.chunk, input);
        trainer.model().set_documents(batch.doc_ids);  // packed rows ([data] pack_sequences), else none
        out = trainer.forward(batch.input_ids);
        if (!trainer.model().auxiliary_losses().empty()) {
          throw sdk::Error("pipeline parallelism: the model returned auxiliary losses, which cannot cross stages");
        }
        if (v + 1 == stages) {
          at::Tensor loss = trainer.loss().compute(out, batch.labels);
          if (weights[static_cast<size_t>(m)] != 1.0) loss = loss * weights[static_cast<size_t>(m)];
          if (rows) {
            row_losses[static_cast<size_t>(m)] = feed::row_cross_entropy(out, batch.labels, trainer.vocab_group());
          }
          loss_sum += loss.item<double>();
          out = trainer.scale_loss(loss / static_cast<double>(n));
        }
      }
      if (v + 1 < stages) link_.send_output(v, m, out, batch.input_ids.sizes());
      inputs[k] = std::move(input);
      outputs[k] = std::move(out);
    } else {
      const profiling::UserScope scope("backward");
      if (v + 1 < stages) {
        const at::Tensor gradient = link_.receive_output_gradient(v, m, outputs[k]);
        torch::autograd::backward({outputs[k]}, {gradient});
      } else {
        outputs[k].backward();
      }
      if (v > 0) {
        const at::Tensor& g = inputs[k].grad();
        link_.send_input_gradient(v, m, g.defined() ? g : at::zeros_like(inputs[k]));
      }
      inputs[k] = outputs[k] = at::Tensor();
    }
  }
  link_.finish();
  busy_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The loss (and a mixture's row losses) are the last stage's: every stage logs and decides with them.
  at::Tensor shared = at::tensor({loss_sum / n}, at::kDouble);
  if (rows) {
    std::vector<at::Tensor> parts{shared};
    for (int m = 0; m < n; ++m) {
      const at::Tensor& r = row_losses[static_cast<size_t>(m)];
      parts.push_back(r.defined() ? r.to(at::kDouble).cpu()
                                  : at::zeros({micro_batches[m].input_ids.size(0)}, at::kDouble));
    }
    shared = at::cat(parts);
  }
  group_.broadcast(shared, ranks - 1);
  StepResult result;
  result.loss = shared[0].item<double>();
  for (int m = 0, offset = 1; rows && m < n; ++m) {
    const int64_t b = micro_batches[static_cast<size_t>(m)].input_ids.size(0);
    result.row_losses.push_back(shared.narrow(0, offset, b).clone());
    offset += static_cast<int>(b);
  }
  const profiling::UserScope scope("gradient sync and clip");
  trainer.sync_gradients();
  result.grad_norm = trainer.clip_gradients(trainer.job().train.grad_clip_norm);
  return result;
}

double Pipeline::evaluate(StepHost& trainer, const data::Batch& batch) {
  const int ranks = group_.size(), stages = ranks * chunks_;
  double loss = 0;
  for (int chunk = 0; chunk < chunks_; ++chunk) {  // in virtual stage order on every rank: never waits on itself
    const int v = chunk * ranks + group_.rank();
    stage_.set_pass(chunk, v > 0 ? link_.receive_input(v, 0, batch.input_ids.sizes()) : at::Tensor());
    trainer.model().set_documents(batch.doc_ids);
    const at::Tensor out = trainer.forward(batch.input_ids);
    if (v + 1 == stages) {
      loss = trainer.loss().compute(out, batch.labels).item<double>();
    } else {
      link_.send_output(v, 0, out, batch.input_ids.sizes());
    }
  }
  link_.finish();
  at::Tensor shared = at::tensor({loss}, at::kDouble);
  group_.broadcast(shared, ranks - 1);
  return shared.item<double>();
}

double Pipeline::take_idle_fraction() {
  const double waited = link_.take_wait_seconds();
  const double fraction = busy_seconds_ > 0 ? waited / busy_seconds_ : 0.0;
  busy_seconds_ = 0;
  return fraction;
}

}  // namespace kforge::parallel
