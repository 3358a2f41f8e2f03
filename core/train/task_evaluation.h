// [eval] tasks: the downstream tasks a training run scores every [eval] interval (eval_tasks/, as kforge eval --tasks).
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "config/job_config.h"
#include "dist/group.h"
#include "kforge/sdk/hook.h"
#include "kforge/sdk/model.h"

namespace kforge::train {

/// Refuses, as sdk::ConfigError naming the key: [eval] tasks without enabled = true, task_dir or [data]
/// tokenizer_path; in a vision-language run or with tensor, pipeline or context parallelism (a rank's forward then
/// takes or gives no whole sequences); a task that does not load.
void check_eval_tasks(const config::JobConfig& job);

/// {"eval/<task>/<metric>"} of [eval] tasks over the first task_limit documents (0: all), few-shot seed [eval] seed,
/// train.batch_size sequences per forward of at most the model's max_seq_len (else train.seq_len) tokens, through
/// `forward` (the trainer's), without gradients in eval mode (the model's mode is restored). Empty when [eval] tasks
/// is empty. Collective over `ranks` (the data-parallel ranks): each scores its share of the requests and every one
/// returns what one process scoring them all does; they run as many forwards, in step (FSDP's and expert
/// parallelism's forwards are collective).
sdk::MetricList evaluate_tasks(const config::JobConfig& job, sdk::Model& model,
                               const std::function<at::Tensor(const at::Tensor&)>& forward,
                               const dist::Group& ranks = dist::Group());

}  // namespace kforge::train
