// The step loop: micro-batches -> step body -> no-token and NaN policies -> optimizer/scheduler -> metrics ->
// hooks -> eval -> checkpoint -> shutdown check; then the final checkpoint.
#include <ATen/ATen.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "checkpoint/fault_points.h"
#include "data/batch.h"
#include "data/data_error.h"
#include "dist/device.h"
#include "dist/group.h"
#include "dist/health_check.h"
#include "kforge/sdk/error.h"
#include "log/log.h"
#include "metrics/memory.h"
#include "metrics/process_age.h"
#include "metrics/status_line.h"
#include "parallel/token_weights.h"
#include "profiling/step_profiler.h"
#include "profiling/user_scope.h"
#include "resilience/fault_point.h"
#include "resilience/shutdown.h"
#include "train/context_shard.h"
#include "train/evaluator.h"
#include "train/plugin_manifest.h"
#include "train/run_log.h"
#include "train/task_evaluation.h"
#include "train/trainer.h"

namespace kforge::train {

std::vector<data::Batch> Trainer::next_micro_batches(int64_t& trained) {
  // Rows carry their sources (and the step computes their losses) only for a step whose metrics are logged.
  std::vector<data::Batch> batches =
      data_.feed->micro_batches(progress_.step, tracker_->is_log_step(progress_.step + 1));
  if (groups_.context) {  // this rank's positions of every sequence
    for (data::Batch& batch : batches) {
      batch = context_shard(std::move(batch), groups_.context->rank(), groups_.context->size());
    }
  }
  trained = 0;
  for (const data::Batch& batch : batches) trained += parallel::trained_tokens(batch.labels);
  for (data::Batch& batch : batches) batch = data::on_device(std::move(batch), groups_.device);  // all queued at once
  return batches;
}

sdk::MetricList Trainer::evaluate_now() {
  return evaluate_source(
      *model_.module, *data_.eval_source, job_.eval.steps, groups_.runtime->dp(), [this](const data::Batch& batch) {
        if (!groups_.context) return model_.parallel->eval_loss(*this, batch);
        // The loss of the whole sequences, from every cp rank's over its positions.
        const data::Batch mine = context_shard(batch, groups_.context->rank(), groups_.context->size());
        return context_mean(groups_.runtime->mesh().group("cp"), model_.parallel->eval_loss(*this, mine),
                            parallel::trained_tokens(mine.labels));
      });
}

TrainingResult Trainer::train() {
  auto& log = log::get();
  const auto& train = job_.train;
  const int64_t tokens_per_step =
      train.batch_size * train.seq_len * train.grad_accum_steps * groups_.runtime->dp().size();
  const resilience::ShutdownHandlers shutdown_handlers(train.shutdown_timeout_sec);
  if (leader()) {
    append_run_event(job_.metrics.run_dir,
                     run_start_event(progress_.step, saves_.resumed_from, groups_.runtime->world_size(),
                                     plugin_manifest(registry_, /*hashes=*/false)));
  }
  // Every way out of here ends the run for the metric backends and the run log; an exception is a
  // failed run.
  struct EndOfRun {
    Trainer& trainer;
    std::optional<Outcome> outcome;
    ~EndOfRun() { trainer.record_run_end(outcome); }
  } end_of_run{*this, std::nullopt};
  if (any_rank(resilience::shutdown_requested())) {  // a signal while plugins, data or the checkpoint loaded
    log.warn("shutdown requested (signal {}) before step {}: nothing trained, nothing to save; exiting",
             resilience::shutdown_signal(), progress_.step + 1);
    end_of_run.outcome = Outcome::Preempted;
    return {Outcome::Preempted, progress_.step, progress_.tokens_seen, saves_.resumed_from};
  }
  for (auto& hook : hooks_) hook->on_train_begin(progress_.step);
  if (saves_.resumed_from < 0 && job_.checkpoint.window && job_.checkpoint.should_save(0)) save_checkpoint();

  Outcome outcome = Outcome::Completed;
  bool stop_requested = false;
  metrics::StatusLine status(progress_.step, train.max_steps);
  log.info("training from step {} to {} ({} tokens per step)", progress_.step, train.max_steps, tokens_per_step);
  const auto& prof = job_.profiling;
  profiling::StepProfiler profiler(prof.enable, prof.start_step, prof.end_step, prof.trace_dir,
                                   groups_.runtime->rank());
  // Logged as time/startup_sec in the first line this process logs; a /proc that cannot be read only loses the metric.
  std::optional<double> startup_sec;
  try {
    startup_sec = metrics::start_up_seconds();
    log.info("start-up took {:.2f} s (process or launcher start to step {})", *startup_sec, progress_.step + 1);
  } catch (const sdk::Error& e) {
    log.warn("no time/startup_sec metric: {}", e.what());
  }
  const auto train_keys = job_.view("train");
  dist::HealthCheck health(*groups_.runtime, train_keys.get_int("nccl_health_check_interval"),
                           std::chrono::milliseconds(std::llround(
                               1000 * train_keys.get_float("nccl_health_check_timeout_sec"))));
  while (progress_.step < train.max_steps) {
    profiler.before_step(progress_.step);
    dist::take_collective_seconds();  // the collectives before this step (checks, saves, eval) are not its own
    tracker_->start_step();
    int64_t local_trained = 0;
    const std::vector<data::Batch> batches = next_micro_batches(local_trained);
    if (batches.empty()) {  // a shutdown signal while the step's data was read (BatchFeed::micro_batches)
      log.warn("shutdown requested (signal {}) while step {}'s data was read: saving step {} and exiting; rerun the "
               "same command to resume", resilience::shutdown_signal(), progress_.step + 1, progress_.step);
      outcome = Outcome::Preempted;
      break;
    }
    model_.module->set_step(progress_.step, train.max_steps);
    const double lr_factor = optim_.scheduler->factor(progress_.step);
    optim_.optimizer->set_lr_factor(lr_factor * data_.feed->lr_scale(progress_.step));  // a mixture phase's lr_scale
    const double lr = optim_.optimizer->lr();
    const StepResult local = options_.step_fn(*this, batches);
    const bool overflow = take_overflow();  // fp16: agreed over the ranks already
    const parallel::AgreedStep agreed = agree(local, local_trained);
    const StepResult& result = agreed.result;
    // Every rank agrees on a skip: no optimizer, scheduler or step count advance, the data moves on.
    if (agreed.trained_tokens == 0 || overflow) {
      model_.parallel->zero_grad();
      ++progress_.total_skips;
      sdk::MetricList skip_metrics{{"train/skipped_steps", static_cast<double>(progress_.total_skips)}};
      if (agreed.trained_tokens == 0) {
        ++progress_.consecutive_skips;
        log.warn("step {}: no label of the global batch trains (all -100): skipped without an optimizer step, the "
                 "data moves on ({} skipped in all; {} in a row, stopping at {})",
                 progress_.step + 1, progress_.total_skips, progress_.consecutive_skips, kMaxConsecutiveSkippedSteps);
      } else {
        const float scale = fp16_.scaler->scale();
        fp16_.scaler->update(/*found_inf=*/true);
        ++fp16_.consecutive_overflows;
        log.warn("step {}: fp16 gradients overflowed at loss scale {}: skipped without an optimizer or scheduler "
                 "step, the data moves on; the scale is now {} ({} steps skipped in all; {} overflows in a row, "
                 "stopping at {})",
                 progress_.step + 1, scale, fp16_.scaler->scale(), progress_.total_skips, fp16_.consecutive_overflows,
                 kMaxConsecutiveSkippedSteps);
        skip_metrics.push_back({"train/loss_scale", static_cast<double>(fp16_.scaler->scale())});
      }
      tracker_->log(progress_.step + 1, skip_metrics);
      if (progress_.consecutive_skips >= kMaxConsecutiveSkippedSteps) {
        throw data::DataError(fmt::format(
            "{} steps in a row before step {} trained no token (every label of the global batch is -100, e.g. every "
            "clip or image of the batches failed to load): the training data trains nothing; check [data] and the "
            "warnings above",
            progress_.consecutive_skips, progress_.step + 1));
      }
      if (fp16_.consecutive_overflows >= kMaxConsecutiveSkippedSteps) {
        log.error("{} fp16 overflows in a row (loss scale now {}): the gradients are not finite at any scale; "
                  "stopping without a checkpoint (the last good one is in {})",
                  fp16_.consecutive_overflows, fp16_.scaler->scale(), job_.checkpoint.dir);
        outcome = Outcome::TooManyNans;
        break;
      }
      if (any_rank(resilience::shutdown_requested())) {  // skipped steps end on a signal as trained ones do
        log.warn("step {}: shutdown requested (signal {}) while skipping steps: saving and exiting; rerun the same "
                 "command to resume",
                 progress_.step, resilience::shutdown_signal());
        outcome = Outcome::Preempted;
        break;
      }
      continue;
    }
    progress_.consecutive_skips = 0;
    fp16_.consecutive_overflows = 0;
    if (fp16_.scaler) fp16_.scaler->update(/*found_inf=*/false);
    const bool finite = std::isfinite(result.loss) && std::isfinite(result.grad_norm);
    if (finite) {
      const profiling::UserScope scope("optimizer");
      // A zero gradient for every parameter that trains and got none this step: the optimizer updates it (AdamW:
      // momentum and decay) as it does on several ranks, where the sync counts a gradient a rank did not reach as
      // zero, and from the first step on, so a resumed run needs no record of which parameters had one. A custom step
      // body need not sync.
      parallel::fill_missing_grads(parameters());
      optim_.optimizer->step();
    }
    model_.parallel->zero_grad();
    ++progress_.step;
    resilience::fault_point(checkpoint::kFaultPointStepEnd);
    health.after_step(progress_.step);
    if (const auto trace = profiler.after_step(progress_.step)) log.info("profiling: wrote {}", trace->string());
    if (optim_.freeze.changes_at(progress_.step)) apply_freeze();
    progress_.tokens_seen += tokens_per_step;
    if (!finite) {
      ++progress_.consecutive_nans;
      ++progress_.total_nans;
      log.warn("step {}: loss {} / grad norm {} is not finite: optimizer step skipped ({} in a row; stopping at {})",
               progress_.step, result.loss, result.grad_norm, progress_.consecutive_nans, train.nan_max_consecutive);
      // Every skip is logged, at whatever step, so the metrics record each one.
      tracker_->log(progress_.step,
                    {{"train/nan_skipped", 1.0}, {"train/nan_total", static_cast<double>(progress_.total_nans)}});
      if (progress_.consecutive_nans >= train.nan_max_consecutive) {
        log.error("{} consecutive non-finite losses: stopping without a checkpoint (the last good one is in {})",
                  progress_.consecutive_nans, job_.checkpoint.dir);
        outcome = Outcome::TooManyNans;
        break;
      }
      continue;
    }
    progress_.consecutive_nans = 0;
    dist::synchronize(groups_.device);  // the clock below times the step's device work too (the optimizer's is queued)
    sdk::MetricList step_extra;
    // The seconds this rank's step spent in collectives (waiting for them, or for a slower rank).
    const double collective_sec = dist::take_collective_seconds();
    if (groups_.runtime->world_size() > 1) step_extra.push_back({"dist/collective_seconds", collective_sec});
    if (fp16_.scaler) step_extra.push_back({"train/loss_scale", static_cast<double>(fp16_.scaler->scale())});
    if (startup_sec && tracker_->is_log_step(progress_.step)) {
      step_extra.push_back({"time/startup_sec", *startup_sec});
      startup_sec.reset();
    }
    tracker_->end_step(
        {progress_.step, result.loss, result.grad_norm, lr, agreed.trained_tokens, std::move(step_extra)});
    const bool logged = tracker_->is_log_step(progress_.step);
    if (logged) {
      if (const sdk::MetricList model_metrics = model_.module->step_metrics(); !model_metrics.empty()) {
        tracker_->log(progress_.step, model_metrics);
      }
      if (const sdk::MetricList data_metrics = data_.feed->step_metrics(batches, local.row_losses);
          !data_metrics.empty()) {
        tracker_->log(progress_.step, data_metrics);
      }
    }
    // ep/exchange_seconds, tp/exchange_seconds, pp/bubble.
    model_.parallel->log_step_metrics(logged,
                                      [&](const sdk::MetricList& metrics) { tracker_->log(progress_.step, metrics); });
    if (leader()) status.update(progress_.step, result.loss);
    const sdk::StepEvent event{progress_.step, result.loss, result.grad_norm, lr, progress_.tokens_seen,
                               model_.module.get()};
    for (auto& hook : hooks_) {
      try {
        hook->on_step_end(event);
      } catch (const sdk::StopTraining& stop) {
        log.info("step {}: a hook asked to stop: {}", progress_.step, stop.what());
        stop_requested = true;
      }
    }
    const bool eval_tasks = job_.eval.enabled && !job_.view("eval").get_string_list("tasks").empty();
    if ((data_.eval_source || eval_tasks) && progress_.step % job_.eval.interval == 0) {
      optim_.optimizer->use_eval_weights();
      sdk::MetricList metrics = data_.eval_source ? evaluate_now() : sdk::MetricList{};
      if (eval_tasks) {  // [eval] tasks: eval/<task>/<metric>
        const sdk::MetricList scores = evaluate_tasks(
            job_, *model_.module, [this](const at::Tensor& t) { return forward(t); }, groups_.runtime->dp());
        metrics.insert(metrics.end(), scores.begin(), scores.end());
      }
      optim_.optimizer->use_train_weights();
      tracker_->log(progress_.step, metrics);
      for (auto& hook : hooks_) hook->on_eval_end(progress_.step, metrics);
    }
    if (job_.checkpoint.should_save(progress_.step)) save_checkpoint();
    if (saves_.writer) report_saves(saves_.writer->committed());  // and fails the run if a background save failed
    if (any_rank(resilience::shutdown_requested())) {  // a signal may reach the ranks a step apart
      log.warn("step {}: shutdown requested (signal {}): saving and exiting; rerun the same command to resume",
               progress_.step, resilience::shutdown_signal());
      outcome = Outcome::Preempted;
      break;
    }
    if (any_rank(stop_requested)) {
      outcome = Outcome::StoppedByHook;
      break;
    }
  }
  status.clear();
  if (outcome != Outcome::TooManyNans && saves_.last_step != progress_.step) save_checkpoint();
  if (saves_.writer) {  // SIGTERM, a hook's stop and the end of training all wait for the last write
    saves_.writer->drain();
    report_saves(saves_.writer->committed());
  }
  for (auto& hook : hooks_) hook->on_train_end(progress_.step, progress_.tokens_seen);
  tracker_->flush();
  end_of_run.outcome = outcome;
  log.info("peak resident memory of this rank: {:.3f} GiB", metrics::peak_rss_gib());
  return {outcome, progress_.step, progress_.tokens_seen, saves_.resumed_from};
}

parallel::AgreedStep Trainer::agree(StepResult local, int64_t trained_tokens) const {
  return parallel::average_step_result(groups_.runtime->mesh().group("dp_cp"), std::move(local), trained_tokens);
}

bool Trainer::any_rank(bool flag) const { return parallel::any_in_group(groups_.runtime->world(), flag); }

}  // namespace kforge::train
