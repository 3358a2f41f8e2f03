#include "train/evaluator.h"

#include <ATen/ATen.h>

#include <cmath>

#include "data/batch.h"
#include "data/sampler.h"

namespace kforge::train {

sdk::MetricList evaluate(sdk::Model& model, sdk::Loss& loss, const sdk::Dataset& data, int64_t batch_size,
                         int64_t steps, int64_t vocab_size, const dist::Group& group,
                         const std::function<at::Tensor(const at::Tensor&)>& forward, int64_t eos_id) {
  at::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  data::BatchSampler sampler(data.size(), batch_size, /*seed=*/0, group.rank(), group.size(), /*shuffle=*/false);
  double total = 0;
  for (int64_t k = 0; k < steps; ++k) {
    const data::Batch batch = data::make_batch(data, sampler.next_batch(), vocab_size, eos_id);
    model.set_documents(batch.doc_ids);
    const at::Tensor logits = forward ? forward(batch.input_ids) : model.forward(batch.input_ids);
    total += loss.compute(logits, batch.labels).item<double>();
  }
  model.train(was_training);
  at::Tensor sum = at::tensor({total}, at::kDouble);
  group.all_reduce(sum);
  const double mean = sum.item<double>() / static_cast<double>(steps * group.size());
  return {{"eval/loss", mean}, {"eval/perplexity", std::exp(std::min(mean, 20.0))}};
}

}  // namespace kforge::train
