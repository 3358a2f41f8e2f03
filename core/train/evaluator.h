// Evaluation: mean loss and perplexity of a model over the first batches of a dataset (text, or image-text).
#pragma once

#include <cstdint>
#include <functional>

#include "data/batch.h"
#include "dist/group.h"
#include "feed/batch_feed.h"
#include "feed/image_text_feed.h"
#include "kforge/sdk/dataset.h"
#include "kforge/sdk/hook.h"
#include "kforge/sdk/loss.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/vision_language_model.h"

namespace kforge::train {

/// {"eval/loss", "eval/perplexity" = exp(min(loss, 20))} over `steps` batches of `source` from its start (rewound
/// first), each moved to the model's device and scored by `batch_loss` (its mean loss over the trained tokens), without
/// gradients, in eval mode; the model's training mode is restored afterwards. Collective over `group`: each member
/// scores its share and the loss is the token mean over all members' batches (token_weights). Members of `split`
/// (`kforge eval` under `kforge launch`: each reads the same batches) share the `steps` batches instead: batch k is
/// scored by member k mod size, the per-batch losses and token counts are gathered and summed in batch order, so every
/// member returns, bit for bit, what one process scoring them all does.
sdk::MetricList evaluate_source(sdk::Model& model, feed::BatchSource& source, int64_t steps, const dist::Group& group,
                                const std::function<double(const data::Batch&)>& batch_loss,
                                const dist::Group& split = dist::Group());

/// evaluate_source() over `steps` batches of `batch_size` windows of `data` taken in order (wrapping around), each
/// member of `group` its rank-strided share (a TokenFeed).
/// `forward` replaces model.forward (the trainer's, which gathers FSDP shards) when given. A token id at or past
/// `vocab_size` is refused naming where it is (data::make_batch). With `eos_id` >= 0 ([data] pack_sequences)
/// the windows are split into documents there, and the model is given them (sdk::Model::set_documents). `batch_loss`
/// replaces the forward and the loss when given (pipeline parallelism: the last stage's loss, on every stage).
/// `split`: as for evaluate_source().
sdk::MetricList evaluate(sdk::Model& model, sdk::Loss& loss, const sdk::Dataset& data, int64_t batch_size,
                         int64_t steps, int64_t vocab_size, const dist::Group& group = dist::Group(),
                         const std::function<at::Tensor(const at::Tensor&)>& forward = nullptr, int64_t eos_id = -1,
                         const std::function<double(const data::Batch&)>& batch_loss = nullptr,
                         const dist::Group& split = dist::Group());

/// evaluate_source() for a vision-language model over `steps` batches of image-text data, each batch's images set on
/// the model before `forward` (the trainer's). `split`: as for evaluate_source().
sdk::MetricList evaluate_images(sdk::VisionLanguageModel& model, sdk::Loss& loss, feed::ImageTextFeed& data,
                                int64_t steps, const dist::Group& group,
                                const std::function<at::Tensor(const at::Tensor&)>& forward,
                                const dist::Group& split = dist::Group());

}  // namespace kforge::train
