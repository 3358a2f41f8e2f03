// Evaluation: the mean loss and perplexity of a model over the first batches of an evaluation source.
#include "train/evaluator.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "data/batch.h"
#include "dist/device.h"
#include "feed/token_feed.h"
#include "parallel/token_weights.h"

namespace kforge::train {

namespace {

/// Every member's (loss, tokens) of the batches it scored, each batch k from member k mod size.
void gather_batches(std::vector<double>& losses, std::vector<int64_t>& tokens, const dist::Group& split) {
  at::Tensor mine = at::zeros({static_cast<int64_t>(losses.size()), 2}, at::kDouble);
  auto put = mine.accessor<double, 2>();
  for (size_t k = static_cast<size_t>(split.rank()); k < losses.size(); k += static_cast<size_t>(split.size())) {
    put[static_cast<int64_t>(k)][0] = losses[k];
    put[static_cast<int64_t>(k)][1] = static_cast<double>(tokens[k]);  // exact: below 2^53
  }
  std::vector<at::Tensor> all = split.all_gather(mine);
  for (size_t k = 0; k < losses.size(); ++k) {
    const auto got = all[k % static_cast<size_t>(split.size())].accessor<double, 2>();
    losses[k] = got[static_cast<int64_t>(k)][0];
    tokens[k] = static_cast<int64_t>(got[static_cast<int64_t>(k)][1]);
  }
}

}  // namespace

sdk::MetricList evaluate_source(sdk::Model& model, feed::BatchSource& source, int64_t steps, const dist::Group& group,
                                const std::function<double(const data::Batch&)>& batch_loss, const dist::Group& split) {
  source.rewind();
  at::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  std::vector<double> losses(static_cast<size_t>(steps));
  std::vector<int64_t> tokens(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    data::Batch read = source.next_batch();  // every member reads every batch: the next ones follow it
    if (k % split.size() != split.rank()) continue;
    const data::Batch batch = data::on_device(std::move(read), dist::parameter_device(model));
    losses[static_cast<size_t>(k)] = batch_loss(batch);
    tokens[static_cast<size_t>(k)] = parallel::trained_tokens(batch.labels);
  }
  model.train(was_training);
  if (split.size() > 1) gather_batches(losses, tokens, split);
  const std::vector<double> weights = parallel::token_weights(tokens, group);
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
                         const std::function<double(const data::Batch&)>& batch_loss, const dist::Group& split) {
  feed::TokenFeed windows(data, {batch_size, 1, vocab_size, eos_id, /*seed=*/0, /*shuffle=*/false}, group);
  return evaluate_source(
      model, windows, steps, group,
      [&](const data::Batch& batch) {
        if (batch_loss) return batch_loss(batch);
        model.set_documents(batch.doc_ids);
        const at::Tensor logits = forward ? forward(batch.input_ids) : model.forward(batch.input_ids);
        return loss.compute(logits, batch.labels).item<double>();
      },
      split);
}

sdk::MetricList evaluate_images(sdk::VisionLanguageModel& model, sdk::Loss& loss, feed::ImageTextFeed& data,
                                int64_t steps, const dist::Group& group,
                                const std::function<at::Tensor(const at::Tensor&)>& forward, const dist::Group& split) {
  return evaluate_source(
      model, data, steps, group,
      [&](const data::Batch& batch) {
        model.set_images(batch.pixel_values, batch.frame_mask, batch.frame_times);
        return loss.compute(forward(batch.input_ids), batch.labels).item<double>();
      },
      split);
}

}  // namespace kforge::train
