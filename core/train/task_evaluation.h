// [eval] tasks: the downstream tasks a training run scores every [eval] interval (eval_tasks/, as kforge eval --tasks).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "config/job_config.h"
#include "kforge/sdk/hook.h"
#include "kforge/sdk/model.h"

namespace kforge::train {

/// Refuses, as sdk::ConfigError naming the key: [eval] tasks without enabled = true, task_dir or [data]
/// tokenizer_path; in a vision-language run or with tensor or pipeline parallelism (a rank's forward then gives no
/// whole logits); a task that does not load.
void check_eval_tasks(const config::JobConfig& job);

/// {"eval/<task>/<metric>"} of [eval] tasks over the first task_limit documents (0: all), few-shot seed [eval] seed,
/// train.batch_size sequences per forward of at most the model's max_seq_len (else train.seq_len) tokens, through
/// `forward` (the trainer's: every rank runs every request, so that sharded forwards stay in step), without
/// gradients in eval mode (the model's mode is restored). Empty when [eval] tasks is empty.
sdk::MetricList evaluate_tasks(const config::JobConfig& job, sdk::Model& model,
                               const std::function<at::Tensor(const at::Tensor&)>& forward);

}  // namespace kforge::train
