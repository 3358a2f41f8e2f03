// Evaluation: the mean loss and perplexity of a model over the first batches of an evaluation source.
#include "train/evaluator.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "data/batch.h"
#include "dist/device.h"
#include "feed/token_feed.h"
#include "train/token_weights.h"

namespace kforge::train {

sdk::MetricList evaluate_source(sdk::Model& model, feed::BatchSource& source, int64_t steps, const dist::Group& group,
                                const std::function<double(const data::Batch&)>& batch_loss) {
  source.rewind();
  at::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<double> losses;
  std::vector<int64_t> tokens;
  for (int64_t k = 0; k < steps; ++k) {
    const data::Batch batch = data::on_device(source.next_batch(), dist::parameter_device(model));
    losses.push_back(batch_loss(batch));
    tokens.push_back(trained_tokens(batch.labels));
  }
  model.train(was_training);
  const std::vector<double> weights = token_weights(tokens, group);
  double total = 0;
  for (size_t k = 0; k < losses.size(); ++k) total += weights[k] * losses[k];  // exact with a weight of 1
  at::Tensor sum = at::tensor({total}, at::kDouble);
  group.all_reduce(sum);
  const double mean = sum.item<double>() / static_cast<double>(steps * group.size());
  return {{"eval/loss", mean}, {"eval/perplexity", std::exp(std::min(mean, 20.0))}};
}

sdk::MetricList evaluate(sdk::Model& model, sdk::Loss& loss, const sdk::Dataset& data, int64_t batch_size,
                         int64_t steps, int64_t vocab_size, const dist::Group& group,
                         const std::function<at::Tensor(const at::Tensor&)>& forward, int64_t eos_id,
                         const std::function<double(const data::Batch&)>& batch_loss) {
  feed::TokenFeed windows(data, {batch_size, 1, vocab_size, eos_id, /*seed=*/0, /*shuffle=*/false}, group);
  return evaluate_source(model, windows, steps, group, [&](const data::Batch& batch) {
    if (batch_loss) return batch_loss(batch);
    model.set_documents(batch.doc_ids);
    const at::Tensor logits = forward ? forward(batch.input_ids) : model.forward(batch.input_ids);
    return loss.compute(logits, batch.labels).item<double>();
  });
}

sdk::MetricList evaluate_images(sdk::VisionLanguageModel& model, sdk::Loss& loss, feed::ImageTextFeed& data,
                                int64_t steps, const dist::Group& group,
                                const std::function<at::Tensor(const at::Tensor&)>& forward) {
  return evaluate_source(model, data, steps, group, [&](const data::Batch& batch) {
    model.set_images(batch.pixel_values, batch.frame_mask, batch.frame_times);
    return loss.compute(forward(batch.input_ids), batch.labels).item<double>();
  });
}

}  // namespace kforge::train
