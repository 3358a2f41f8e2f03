#include "train/evaluator.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "data/batch.h"
#include "data/sampler.h"
#include "dist/device.h"
#include "train/token_weights.h"

namespace kforge::train {

namespace {

// A batch's loss (a mean over its trained tokens) and its trained tokens.
struct BatchLoss {
  double loss = 0;
  int64_t tokens = 0;
};

// {"eval/loss", "eval/perplexity"}: the token mean of `steps` batches' losses from `batch_loss` over the group's
// members (token_weights), computed without gradients in eval mode (the model's mode restored after).
sdk::MetricList mean_loss(sdk::Model& model, int64_t steps, const dist::Group& group,
                          const std::function<BatchLoss()>& batch_loss) {
  at::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<double> losses;
  std::vector<int64_t> tokens;
  for (int64_t k = 0; k < steps; ++k) {
    const BatchLoss b = batch_loss();
    losses.push_back(b.loss);
    tokens.push_back(b.tokens);
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

}  // namespace

sdk::MetricList evaluate(sdk::Model& model, sdk::Loss& loss, const sdk::Dataset& data, int64_t batch_size,
                         int64_t steps, int64_t vocab_size, const dist::Group& group,
                         const std::function<at::Tensor(const at::Tensor&)>& forward, int64_t eos_id,
                         const std::function<double(const data::Batch&)>& batch_loss) {
  data::BatchSampler sampler(data.size(), batch_size, /*seed=*/0, group.rank(), group.size(), /*shuffle=*/false);
  return mean_loss(model, steps, group, [&] {
    const data::Batch batch = data::on_device(data::make_batch(data, sampler.next_batch(), vocab_size, eos_id),
                                              dist::parameter_device(model));
    if (batch_loss) return BatchLoss{batch_loss(batch), trained_tokens(batch.labels)};
    model.set_documents(batch.doc_ids);
    const at::Tensor logits = forward ? forward(batch.input_ids) : model.forward(batch.input_ids);
    return BatchLoss{loss.compute(logits, batch.labels).item<double>(), trained_tokens(batch.labels)};
  });
}

sdk::MetricList evaluate_images(sdk::VisionLanguageModel& model, sdk::Loss& loss, ImageTextFeed& data, int64_t steps,
                                const dist::Group& group, const std::function<at::Tensor(const at::Tensor&)>& forward) {
  data.restore(0);
  return mean_loss(model, steps, group, [&] {
    const data::Batch batch = data::on_device(data.next_batch(), dist::parameter_device(model));
    model.set_images(batch.pixel_values, batch.frame_mask, batch.frame_times);
    return BatchLoss{loss.compute(forward(batch.input_ids), batch.labels).item<double>(), trained_tokens(batch.labels)};
  });
}

}  // namespace kforge::train
