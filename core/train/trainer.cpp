// Trainer construction (the build phases, in data-path order) and resume.
#include "train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "config/rules.h"
#include "kforge/sdk/error.h"
#include "log/log.h"
#include "metrics/peak_flops.h"

namespace kforge::train {
namespace {

// The process layout a launcher asked for (torchrun's WORLD_SIZE, else SLURM's SLURM_NTASKS).
int requested_world_size() {
  for (const char* var : {"WORLD_SIZE", "SLURM_NTASKS"}) {
    if (const char* v = std::getenv(var)) return std::max(1, std::atoi(v));
  }
  return 1;
}

int thread_count(int64_t configured) {
  if (configured > 0) return static_cast<int>(configured);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

Trainer::Trainer(const config::JobConfig& job, const plugins::Registry& registry, TrainingOptions options)
    : job_(job), registry_(registry), options_(std::move(options)), components_(registry, job) {
  auto& log = log::get();
  const auto& train = job_.train;

  // Mesh: a single process (the distributed runtime adds process groups here). Several processes
  // sharing one checkpoint directory without process groups would corrupt each other's work.
  if (const int world = requested_world_size(); world > 1) {
    throw sdk::ConfigError(fmt::format("the launcher asks for {} processes (WORLD_SIZE / SLURM_NTASKS), but this "
                                       "kforge trains in a single process: launch one process per job",
                                       world));
  }
  config::check_world(job_.tree, 1);
  at::set_num_threads(thread_count(train.num_threads));

  if (train.mixed_precision != "fp32") {
    log.warn("[train] mixed_precision = \"{}\": this build trains in fp32 on the CPU; set \"fp32\" to silence this",
             train.mixed_precision);
  }

  // Model.
  at::manual_seed(static_cast<uint64_t>(train.seed));
  model_ = components_.model();
  model_->train();
  for (const auto& item : model_->named_parameters(/*recurse=*/true)) {
    if (item.value().requires_grad()) params_.push_back({item.key(), item.value()});
  }
  int64_t n_params = 0;
  for (const auto& p : params_) n_params += p.tensor.numel();
  log.info("model '{}': {} trainable parameters in {} tensors, {} blocks, {:.3f} GFLOP/token at seq_len {}",
           job_.view("model").get_string("model_type"), n_params, params_.size(), model_->blocks().size(),
           model_->flops_per_token(train.seq_len) / 1e9, train.seq_len);

  optimizer_ = components_.optimizer(params_);
  scheduler_ = components_.scheduler();
  loss_ = components_.loss();

  // Data.
  if (job_.data.dataset_path.empty()) {
    throw sdk::ConfigError(
        "[data] dataset_path is not set: point it at a directory of tokenised shards (make one with "
        "`kforge prepare-data --input FILE.txt --output DIR --train-tokenizer --vocab-size 8000`)");
  }
  train_data_ = components_.dataset(job_.data.dataset_path, job_.data.file_pattern);
  log.info("train data: {}", train_data_->describe());
  sampler_ = std::make_unique<data::BatchSampler>(train_data_->size(), train.batch_size, train.effective_data_seed(),
                                                  /*rank=*/0, /*world=*/1, /*shuffle=*/true);
  if (job_.eval.enabled) {
    eval_data_ = components_.dataset(job_.eval.dataset_path, job_.eval.file_pattern);
    log.info("eval data: {}", eval_data_->describe());
  }

  // Hooks, metrics, checkpoints.
  for (auto& hook : components_.hooks()) hooks_.push_back(std::move(hook));
  for (auto& hook : options_.hooks) hooks_.push_back(hook);
  if (!options_.step_fn) options_.step_fn = standard_step;
  double peak = job_.metrics.peak_tflops;
  if (peak <= 0) {
    peak = metrics::measure_cpu_gemm_tflops();
    log.info("MFU peak: measured fp32 GEMM {:.1f} GFLOP/s on {} threads (set [metrics] peak_tflops to fix it)",
             peak * 1e3, at::get_num_threads());
  }
  const sdk::RunInfo run{job_.metrics.run_dir, /*rank=*/0, static_cast<bool>(::isatty(STDOUT_FILENO))};
  tracker_ = std::make_unique<metrics::MetricsTracker>(components_.metric_backends(run), job_.metrics.log_interval,
                                                       model_->flops_per_token(train.seq_len), peak);
  checkpoints_ = std::make_unique<checkpoint::CheckpointManager>(
      job_.checkpoint.dir, job_.checkpoint.keep_last_n,
      [this](int64_t step) { return job_.checkpoint.is_milestone(step); });
  resume();
}

Trainer::~Trainer() = default;

void Trainer::resume() {
  auto& log = log::get();
  std::optional<checkpoint::Snapshot> snapshot =
      checkpoints_->load_newest([&](const std::string& message) { log.error("{}", message); });
  if (!snapshot && job_.checkpoint.load_path) {
    log.info("no checkpoint in {}; starting from checkpoint.load_path {}", job_.checkpoint.dir, *job_.checkpoint.load_path);
    snapshot = checkpoint::CheckpointManager::load(*job_.checkpoint.load_path);
  }
  if (!snapshot) {
    log.info("no checkpoint in {}: starting from scratch", job_.checkpoint.dir);
    return;
  }
  restore(*snapshot);
  resumed_from_ = step_;
  log.info("resumed from step {} ({} tokens seen)", step_, tokens_seen_);
}

TrainingResult run_training(const config::JobConfig& job, const plugins::Registry& registry, TrainingOptions options) {
  Trainer trainer(job, registry, std::move(options));
  return trainer.train();
}

}  // namespace kforge::train
