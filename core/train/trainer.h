// Trainer: one training run, built top to bottom (config -> plugins -> mesh -> model -> data ->
// loop -> checkpoints/metrics) and then driven step by step by train().
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "checkpoint/async_writer.h"
#include "checkpoint/checkpoint_manager.h"
#include "config/job_config.h"
#include "dist/context_group.h"
#include "dist/expert_group.h"
#include "dist/runtime.h"
#include "dist/tensor_group.h"
#include "feed/batch_feed.h"
#include "kforge/sdk/hook.h"
#include "metrics/tracker.h"
#include "parallel/data_parallel.h"
#include "parallel/parallel_model.h"
#include "parallel/step_host.h"
#include "plugins/components.h"
#include "plugins/registry.h"
#include "train/activation_checkpoint.h"
#include "train/freeze.h"
#include "train/loss_scaler.h"
#include "train/step.h"

namespace kforge::train {

enum class Outcome {
  Completed,      ///< reached train.max_steps (final checkpoint written)
  Preempted,      ///< SIGTERM/SIGUSR1: checkpoint written, rerun to resume
  StoppedByHook,  ///< a hook threw sdk::StopTraining: checkpoint written
  TooManyNans,    ///< train.nan_max_consecutive non-finite losses in a row: no checkpoint
};

/// Steps in a row whose global batch trains no token before train() gives up on the data.
inline constexpr int64_t kMaxConsecutiveSkippedSteps = 100;

struct TrainingResult {
  Outcome outcome = Outcome::Completed;
  int64_t step = 0;         ///< optimizer steps completed
  int64_t tokens_seen = 0;
  int64_t resumed_from = -1;  ///< step of the checkpoint the run started from, or -1
};

/// Options of the library entry point.
struct TrainingOptions {
  StepFn step_fn;                                ///< default: standard_step
  std::vector<std::shared_ptr<sdk::Hook>> hooks;  ///< run after the config's train.hooks
  /// Logged to after the config's [metrics] backends, on the ranks that report (kforge.train's Python backends).
  std::vector<std::unique_ptr<sdk::MetricBackend>> metric_backends;
};

struct Preflight;

class Trainer final : public parallel::StepHost {
 public:
  /// Builds everything and resumes from the newest complete checkpoint (or checkpoint.load_path).
  /// `job` and `registry` must outlive the trainer.
  Trainer(const config::JobConfig& job, const plugins::Registry& registry, TrainingOptions options = {});
  ~Trainer();

  /// Runs the loop until max_steps, a shutdown signal, a hook's StopTraining or the NaN limit. A step whose global
  /// batch trains no token (every label -100) is skipped without advancing step(); kMaxConsecutiveSkippedSteps of
  /// them in a row throw data::DataError (the data trains nothing).
  TrainingResult train();

  // For step bodies and hooks.
  const config::JobConfig& job() const override { return job_; }
  sdk::Model& model() override { return *model_.module; }
  sdk::Loss& loss() override { return *optim_.loss; }
  sdk::Optimizer& optimizer() { return *optim_.optimizer; }
  /// What the optimizer updates: the model's parameters, or this rank's shards of them (FSDP).
  const std::vector<sdk::NamedParameter>& parameters() const { return model_.parallel->parameters(); }
  /// The model's forward (with FSDP: its root parameters gathered); step bodies call this.
  at::Tensor forward(const at::Tensor& tokens) override { return model_.parallel->forward(tokens); }
  /// The images of the next forward's rows (`batch`'s pixel_values, with its clips' frame_mask and frame_times) for a
  /// vision-language model; undefined pixels are a text batch's. Throws sdk::Error for images given to a text-only
  /// model.
  void set_images(const data::Batch& batch) override;
  int64_t step() const { return progress_.step; }
  /// The process groups and device mesh (groups of one in a single process).
  const dist::Runtime& runtime() const override { return *groups_.runtime; }
  /// Tensor parallelism: the group over whose ranks the model's logits are split by vocabulary; else null.
  const dist::Group* vocab_group() const override {
    return groups_.tensors ? &groups_.runtime->mesh().group("tp") : nullptr;
  }
  /// Where the model, optimizer state and batches live ([train] device).
  const c10::Device& device() const { return groups_.device; }

  /// Averages the parameters' gradients over the data-parallel ranks (a no-op on one rank). A
  /// step body calls it once, after the last micro-batch's backward and before clipping, so
  /// accumulation never syncs early (maybe_no_sync semantics). Plain data parallelism starts each
  /// block's all-reduce during the last backward (see ReplicatedModel) and finishes here; FSDP
  /// finishes the reduce-scatters and averages the shards over dp_replicate.
  void sync_gradients() override { model_.parallel->sync_gradients(); }
  /// Global-norm clipping of parameters()' gradients to `max_norm` (over all shards with FSDP);
  /// returns the norm before clipping. Under fp16 it first divides the gradients by the loss scale and agrees over
  /// all ranks whether any is not finite: then the step is skipped (the loop shrinks the scale) and it returns NaN
  /// without clipping. A step body calls it once, after sync_gradients().
  double clip_gradients(double max_norm) override;
  /// `loss` times the loss scale under [train] mixed_precision = "fp16" (loss_scaler.h), else `loss`: a step body
  /// calls backward() on this, so fp16 gradients keep their small values above float16's underflow.
  at::Tensor scale_loss(const at::Tensor& loss) const override;

 private:
  void join_process_groups();
  /// [train] activation_checkpointing: recomputes blocks or checkpointable modules in the backward.
  void checkpoint_activations();
  void resume();
  void restore(const checkpoint::Snapshot& snapshot);
  checkpoint::Snapshot snapshot() const;
  /// Checksum of parameters() (this rank's shards under FSDP): equal on every replica.
  std::string replica_checksum() const;
  /// Saves the current step (checkpoint.async_mode "disabled": here and now; otherwise staged and handed to
  /// the writer thread, reported by report_saves() once committed).
  void save_checkpoint();
  /// Logs and tells the hooks about committed saves (the writer's, when asynchronous).
  void report_saves(const std::vector<std::pair<int64_t, std::filesystem::path>>& saves);
  /// The step's micro-batches on the device (the feed's, moved; none on a shutdown signal while they were read); sets
  /// `trained` to their labels other than -100, counted on the host before the move.
  std::vector<data::Batch> next_micro_batches(int64_t& trained);
  /// Opens the training feed and the evaluation source ([eval] enabled), of images when `pixels` is set.
  void open_data(Preflight& checked, const std::optional<sdk::PixelFormat>& pixels);
  /// The evaluation metrics of the current weights.
  sdk::MetricList evaluate_now();
  void apply_freeze();
  /// Loss averaged over the data-parallel ranks (non-finite on every rank when it is on any) and this rank's
  /// `trained_tokens` summed over them, in one all-reduce.
  parallel::AgreedStep agree(StepResult local, int64_t trained_tokens) const;
  bool leader() const { return groups_.runtime->rank() == 0; }
  /// Whether `flag` is true on any rank of the job (collective).
  bool any_rank(bool flag) const;
  /// Under fp16: whether this step's gradients overflowed (on any rank), as clip_gradients() found; throws sdk::Error
  /// when the step body did not call it. False without loss scaling.
  bool take_overflow();
  /// Tells the metric backends how the run ended and appends the end to the run log (rank 0);
  /// no outcome: an error ended it. Never throws.
  void record_run_end(std::optional<Outcome> outcome) noexcept;

  /// Where the run trains: the device and the process groups, built first and destroyed last (the groups outlive the
  /// model).
  struct ProcessGroups {
    c10::Device device = c10::Device(c10::DeviceType::CPU);  ///< [train] device, decided with the process groups
    std::unique_ptr<dist::Runtime> runtime;
    std::unique_ptr<dist::ExpertGroup> experts;   ///< [distributed] ep > 1
    std::unique_ptr<dist::TensorGroup> tensors;   ///< [distributed] tp > 1
    std::unique_ptr<dist::ContextGroup> context;  ///< [distributed] cp > 1
  };
  /// The model as this rank trains it.
  struct TrainedModel {
    std::shared_ptr<sdk::Model> module;                ///< the model, or this rank's pipeline stage of it
    std::shared_ptr<sdk::VisionLanguageModel> vlm;     ///< module, in a vision-language run ([vlm])
    std::vector<sdk::NamedParameter> params;           ///< its trainable parameters
    std::unique_ptr<parallel::ParallelModel> parallel;  ///< how module is spread over the ranks
    std::unique_ptr<ActivationCheckpointing> checkpointing;  ///< [train] activation_checkpointing != "none"
  };
  /// What the steps minimise and how the parameters move.
  struct Optimization {
    std::unique_ptr<sdk::Optimizer> optimizer;
    FreezePlan freeze;  ///< [train]/[vlm] freeze and freeze_schedule
    std::unique_ptr<sdk::Scheduler> scheduler;
    std::unique_ptr<sdk::Loss> loss;
  };
  /// The run's data.
  struct Data {
    std::unique_ptr<sdk::Dataset> train, eval;      ///< what the feeds read (a vision-language run: none)
    std::unique_ptr<feed::BatchFeed> feed;          ///< the training batches
    std::unique_ptr<feed::BatchSource> eval_source;  ///< [eval] enabled: the evaluation batches, else null
  };
  /// Checkpoints written and the one resumed from.
  struct Saves {
    std::unique_ptr<checkpoint::CheckpointManager> checkpoints;
    std::unique_ptr<checkpoint::AsyncWriter> writer;  ///< checkpoint.async_mode != "disabled"; drained first
    int64_t last_step = -1;                           ///< the step last saved
    int64_t resumed_from = -1;
    std::map<std::string, std::string> resumed_metric_runs;  ///< metric backend name -> its run id, on a resume
  };
  /// [train] mixed_precision = "fp16": the dynamic loss scale and its overflows.
  struct LossScaling {
    std::optional<LossScaler> scaler;
    std::optional<bool> overflow;       ///< this step's agreed overflow, once clip_gradients() unscaled
    int64_t consecutive_overflows = 0;  ///< steps in a row whose gradients overflowed
  };
  /// How far the run got, and the steps it did not train.
  struct Progress {
    int64_t step = 0;
    int64_t tokens_seen = 0;
    int64_t consecutive_nans = 0;
    int64_t total_nans = 0;
    int64_t consecutive_skips = 0;  ///< steps in a row whose global batch trained no token (labels all -100)
    int64_t total_skips = 0;        ///< those and fp16 overflows, resumes included (train_state.skipped_steps)
  };

  const config::JobConfig& job_;
  const plugins::Registry& registry_;
  TrainingOptions options_;
  ProcessGroups groups_;
  plugins::Components components_;
  TrainedModel model_;
  Optimization optim_;
  Data data_;
  std::vector<std::shared_ptr<sdk::Hook>> hooks_;
  std::unique_ptr<metrics::MetricsTracker> tracker_;
  Saves saves_;
  LossScaling fp16_;
  Progress progress_;
};

/// The library entry point (KempnerForge's run_training(config, step_fn, hooks)).
TrainingResult run_training(const config::JobConfig& job, const plugins::Registry& registry,
                            TrainingOptions options = {});

}  // namespace kforge::train
