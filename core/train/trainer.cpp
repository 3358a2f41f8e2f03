// Trainer construction (the build phases, in data-path order) and resume.
#include "train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>

#include "dist/device.h"
#include "dist/setup_check.h"
#include "env/bf16_probe.h"
#include "env/cpu_env.h"
#include "feed/image_text_feed.h"
#include "feed/mixture_feed.h"
#include "feed/stream_feed.h"
#include "feed/token_feed.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/error.h"
#include "log/log.h"
#include "metrics/mfu_peak.h"
#include "parallel/parallel_build.h"
#include "parallel/precision.h"
#include "train/plugin_manifest.h"
#include "train/preflight.h"
#include "train/run_log.h"
#include "train/vision_language_build.h"

namespace kforge::train {
namespace {

// The configured count, else this host's cores shared among its ranks.
int thread_count(int64_t configured, int local_ranks) {
  if (configured > 0) return static_cast<int>(configured);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency() / static_cast<unsigned>(local_ranks)));
}

}  // namespace

Trainer::Trainer(const config::JobConfig& job, const plugins::Registry& registry, TrainingOptions options)
    : job_(job), registry_(registry), options_(std::move(options)), components_(registry, job) {
  // The process group is joined by the preflight when rank 0 must tokenise a Hugging Face export first.
  Preflight checked = preflight(job_, components_, dist::rank_info_from_env().world_size,
                                [this]() -> const dist::Group& {
                                  join_process_groups();
                                  return groups_.runtime->world();
                                });
  join_process_groups();
  auto& log = log::get();
  if (leader()) {
    for (const std::string& warning : checked.warnings) log.warn("{}", warning);
  }
  const auto& train = job_.train;
  at::set_num_threads(thread_count(train.num_threads, groups_.runtime->info().local_world_size));

  if (const auto autocast = parallel::autocast_dtype(train.mixed_precision)) {  // refuses what kforge cannot train in
    if (*autocast == at::kHalf && groups_.device.is_cpu()) {
      log.info(
          "[train] mixed_precision = \"fp16\": the built-in projections round their operands and outputs to fp16 and "
          "sum in fp32 (LibTorch 1.13 has no fp16 CPU kernels), the other ops run in fp32; fp32 master weights, "
          "gradients and optimizer state");
    } else {
      log.info(
          "[train] mixed_precision = \"{}\": forward under {} autocast to {}, fp32 master weights, gradients "
          "and optimizer state",
          train.mixed_precision, groups_.device.is_cpu() ? "CPU" : "CUDA", c10::toString(*autocast));
    }
    if (*autocast == at::kHalf) {
      const LossScaleSettings scaling = loss_scale_settings(job_);
      fp16_.scaler.emplace(scaling);
      log.info("dynamic loss scaling: from {}, x{} on an overflow (the step is skipped), x{} after {} clean steps",
               scaling.init, scaling.backoff, scaling.growth, scaling.growth_interval);
    }
    if (train.mixed_precision == "fp8" && leader()) {
      log.warn(
          "[train] mixed_precision = \"fp8\": the float8 linears round their operands to float8 in fp32 tensors and "
          "multiply them in fp32: the numerics of torchao's Float8Linear, for correctness, not speed (slower than "
          "\"bf16\"; docs/how-to/precision.md)");
    }
    if (*autocast == at::kBFloat16 && groups_.device.is_cpu() && leader()) {
      if (const auto slow = env::bf16_warning(env::detect_cpu().native_bf16(), env::bf16_gemm_slowdown)) {
        log.warn("{}", *slow);
      }
    }
  }

  // Model.
  at::manual_seed(static_cast<uint64_t>(train.seed));
  std::optional<sdk::PixelFormat> pixels;  // a vision-language run's image format
  std::vector<std::string> encoder_params;
  if (job_.tree.find("vlm") != nullptr) {
    VisionLanguageBuild built = build_vision_language_model(job_, components_);
    model_.vlm = std::move(built.model);
    model_.module = model_.vlm;
    pixels = built.pixels;
    encoder_params = std::move(built.encoder_params);
    log.info("[vlm] arch = \"{}\": {} image tokens per image ({}x{} pixels per image)",
             job_.view("vlm").get_string("arch"), model_.vlm->visual_tokens(), pixels->image_size, pixels->image_size);
  } else {
    model_.module = components_.model();
  }
  if (groups_.context) {
    model_.module->set_context_parallel(*groups_.context);
    const int cp = groups_.context->size(), rank = groups_.context->rank();
    log.info("[distributed] cp = {}: every sequence is cut into {} chunks, rank {} of the cp group holds chunks {} and "
             "{}; attention passes keys and values around the ring; the cp ranks share the parameters and reduce their "
             "gradients with the data-parallel ranks",
             cp, 2 * cp, rank, rank, 2 * cp - 1 - rank);
  }
  model_.module->train();
  model_.module->to(groups_.device);  // in place: every parameter and buffer keeps its identity
  parallel::PipelineStages stages;  // [distributed] pp > 1: model_.module becomes this rank's stage of the model
  if (groups_.runtime->mesh().shape().size("pp") > 1) {
    stages = parallel::split_into_stages(job_, components_, *groups_.runtime, model_.module);
    model_.module = stages.stage;
  }
  for (const auto& item : model_.module->named_parameters(/*recurse=*/true)) {
    if (item.value().requires_grad()) model_.params.push_back({item.key(), item.value()});
  }
  int64_t n_params = 0;
  for (const auto& p : model_.params) n_params += p.tensor.numel();
  log.info("model '{}': {} trainable parameters in {} tensors, {} blocks, {:.3f} GFLOP/token at seq_len {}",
           job_.view("model").get_string("model_type"), n_params, model_.params.size(), model_.module->blocks().size(),
           model_.module->flops_per_token(train.seq_len) / 1e9, train.seq_len);

  optim_.freeze = read_freeze_plan(job_);
  check_freeze_plan(model_.params, optim_.freeze);
  // KempnerForge keeps a frozen encoder out of FSDP; one a freeze stage trains is sharded like the rest.
  std::set<std::string> whole;
  const auto frozen = [&](const std::string& name) { return frozen_throughout(name, optim_.freeze); };
  if (!encoder_params.empty() && std::all_of(encoder_params.begin(), encoder_params.end(), frozen)) {
    whole.insert(encoder_params.begin(), encoder_params.end());
  }
  model_.parallel = parallel::build_parallel_model(job_, *groups_.runtime,
                                                   {*model_.module, model_.params, std::move(stages),
                                                    groups_.experts.get(), groups_.tensors.get(), std::move(whole)});
  checkpoint_activations();
  // The optimizer holds every parameter it may train (none is frozen yet) and skips those without a gradient.
  optim_.optimizer = model_.parallel->make_optimizer(job_, components_);
  optim_.scheduler = components_.scheduler();
  optim_.loss = components_.loss();

  open_data(checked, pixels);

  // Hooks, metrics, checkpoints.
  for (auto& hook : components_.hooks()) hooks_.push_back(std::move(hook));
  for (auto& hook : options_.hooks) hooks_.push_back(hook);
  if (parallel::OwnStepFn own = model_.parallel->own_step(static_cast<bool>(options_.step_fn))) {
    options_.step_fn = std::move(own);
  } else if (!options_.step_fn) {
    options_.step_fn = standard_step;
  }
  // Asynchronous saves run on the writer thread, with a process group of their own.
  const std::string async_mode = job_.view("checkpoint").get_string("async_mode");
  const bool async = async_mode != "disabled";
  const dist::Group& save_group =
      async ? groups_.runtime->checkpoint_writer_group() : groups_.runtime->checkpoint_group();
  saves_.checkpoints = std::make_unique<checkpoint::CheckpointManager>(
      job_.checkpoint.dir, job_.checkpoint.keep_last_n,
      [this](int64_t step) { return job_.checkpoint.is_milestone(step); },
      checkpoint::SaveGroup{groups_.runtime->rank(), groups_.runtime->world_size(),
                            [&save_group](const std::string& value) { return save_group.all_gather_strings(value); }});
  if (async) {
    const bool pinned = async_mode == "async_with_pinned_mem";
    if (pinned && groups_.device.is_cpu() && leader()) {
      log.warn(
          "[checkpoint] async_mode = \"async_with_pinned_mem\": pinned memory only speeds up copies from a GPU; "
          "in this CPU run it behaves as \"async\"");
    }
    saves_.writer = std::make_unique<checkpoint::AsyncWriter>(*saves_.checkpoints, pinned);
  }
  resume();
  // Metrics after resume(): the backends learn the step the run continues from.
  // Rank 0 reports metrics; with [metrics] per_rank every rank does, rank r > 0 under <run_dir>/rank_<r>.
  const bool per_rank = job_.view("metrics").get_bool("per_rank");
  const bool reports = leader() || per_rank;
  double peak_tflops = 0;
  if (reports) {
    const metrics::MfuPeak peak = metrics::mfu_peak(job_.metrics.peak_tflops, train.mixed_precision == "bf16");
    if (leader()) log.info("MFU peak per rank: {}", peak.derivation);
    peak_tflops = peak.tflops;
  }
  const int rank = groups_.runtime->rank();
  const std::string run_dir =
      leader() ? job_.metrics.run_dir
               : (std::filesystem::path(job_.metrics.run_dir) / fmt::format("rank_{}", rank)).string();
  const sdk::RunInfo run{run_dir, rank, static_cast<bool>(::isatty(STDOUT_FILENO)), progress_.step, "",
                         job_.to_toml(), per_rank};
  // The run ids in checkpoints are rank 0's: other ranks start new runs in stores that keep ids.
  std::vector<std::unique_ptr<sdk::MetricBackend>> backends;
  if (reports) {
    backends =
        components_.metric_backends(run, leader() ? saves_.resumed_metric_runs : std::map<std::string, std::string>{});
    for (auto& backend : options_.metric_backends) backends.push_back(std::move(backend));  // after: run ids by index
  }
  tracker_ = std::make_unique<metrics::MetricsTracker>(
      std::move(backends), job_.metrics.log_interval, model_.module->flops_per_token(train.seq_len),
      peak_tflops * groups_.runtime->world_size(), groups_.device.is_cpu());
  apply_freeze();
}

void Trainer::open_data(Preflight& checked, const std::optional<sdk::PixelFormat>& pixels) {
  // Opened by the preflight, except a vision-language run's.
  auto& log = log::get();
  const auto& train = job_.train;
  const dist::Group& dp = groups_.runtime->dp();
  const int64_t vocab_size = job_.view("model").get_int("vocab_size");
  data_.train = std::move(checked.train_data);
  if (pixels) {
    auto images =
        std::make_unique<feed::ImageTextFeed>(job_, components_, *pixels, dp, feed::ImageTextFeed::Split::Train,
                                              model_.vlm->visual_tokens(), groups_.runtime->world_size() == 1);
    log.info("train data: {}", images->describe());
    data_.feed = std::move(images);
    if (job_.eval.enabled) {
      auto eval =
          std::make_unique<feed::ImageTextFeed>(job_, components_, *pixels, dp, feed::ImageTextFeed::Split::Eval);
      log.info("eval data: {}", eval->describe());
      data_.eval_source = std::move(eval);
    }
  } else if (checked.mixture) {
    log.info("train data: {}", data_.train->describe());
    data_.feed = std::make_unique<feed::MixtureFeed>(job_, *checked.mixture, dp, vocab_size, checked.eos_id);
  } else if (job_.view("data").get_bool("hf_streaming")) {
    log.info("train data: {}, streamed (no token cache)", job_.data.hf->where);
    data_.feed = feed::open_stream_feed(job_, dp.rank(), dp.size(), vocab_size, checked.eos_id);
  } else {
    log.info("train data: {}", data_.train->describe());
    data_.feed = std::make_unique<feed::TokenFeed>(*data_.train,
                                              feed::TokenFeed::Shape{train.batch_size, train.grad_accum_steps,
                                                                     vocab_size, checked.eos_id,
                                                                     train.effective_data_seed(), /*shuffle=*/true},
                                              dp);
  }
  data_.eval = std::move(checked.eval_data);
  if (data_.eval) log.info("eval data: {}", data_.eval->describe());
  if (data_.eval && !data_.eval_source) {
    const feed::TokenFeed::Shape in_order{train.batch_size, 1, vocab_size, checked.eos_id, /*seed=*/0,
                                          /*shuffle=*/false};
    data_.eval_source = std::make_unique<feed::TokenFeed>(*data_.eval, in_order, dp);
  }
}

void Trainer::record_run_end(std::optional<Outcome> outcome) noexcept {
  const sdk::RunEnd how = !outcome                           ? sdk::RunEnd::failed
                          : *outcome == Outcome::Preempted   ? sdk::RunEnd::killed
                          : *outcome == Outcome::TooManyNans ? sdk::RunEnd::failed
                                                             : sdk::RunEnd::finished;
  tracker_->end(how);
  if (!leader()) return;
  const char* name = !outcome                             ? "failed"
                     : *outcome == Outcome::Completed     ? "finished"
                     : *outcome == Outcome::Preempted     ? "killed"
                     : *outcome == Outcome::StoppedByHook ? "stopped"
                                                          : "too_many_nans";
  try {
    append_run_event(job_.metrics.run_dir, run_end_event(progress_.step, name));
  } catch (const std::exception& e) {
    log::get().warn("{}", e.what());
  }
}

void Trainer::apply_freeze() {
  const std::vector<FreezeSpec> specs = effective_freeze(progress_.step, optim_.freeze);
  for (const auto& [module, flipped] : apply_freeze_specs(model_.params, specs, optim_.freeze.aliases)) {
    log::get().info("step {}: freeze '{}': requires_grad flipped on {} elements", progress_.step, module, flipped);
  }
}

void Trainer::set_images(const data::Batch& batch) {
  if (model_.vlm) return model_.vlm->set_images(batch.pixel_values, batch.frame_mask, batch.frame_times);
  if (batch.pixel_values.defined()) throw sdk::Error("a batch with images reached a text-only model; configure [vlm]");
}

Trainer::~Trainer() = default;

void Trainer::join_process_groups() {
  if (groups_.runtime) return;  // already joined
  const dist::RankInfo info = dist::rank_info_from_env();
  groups_.device = dist::choose_device(job_.train.device, info.local_rank, dist::probe_cuda());
  components_.set_device(groups_.device);
  if (groups_.device.is_cuda()) {
    dist::use_device(groups_.device);
    log::get().info("[train] device = \"{}\": rank {} trains on {}", job_.train.device, info.rank,
                    groups_.device.str());
  }
  groups_.runtime = info.distributed() ? std::make_unique<dist::Runtime>(info, job_.distributed, groups_.device)
                                : std::make_unique<dist::Runtime>();
  if (!info.distributed()) return;
  if (groups_.runtime->mesh().shape().size("ep") > 1) {
    groups_.experts = std::make_unique<dist::ExpertGroup>(groups_.runtime->mesh().group("ep"));
    components_.set_expert_parallel(groups_.experts.get());
  }
  if (groups_.runtime->mesh().shape().size("tp") > 1) {
    groups_.tensors = std::make_unique<dist::TensorGroup>(groups_.runtime->mesh().group("tp"));
    components_.set_tensor_parallel(groups_.tensors.get());
  }
  if (groups_.runtime->mesh().shape().size("cp") > 1) {
    groups_.context = std::make_unique<dist::ContextGroup>(groups_.runtime->mesh().group("cp"));
  }
  // One rank has no other to compare with: its plugin files are not read to hash them.
  dist::check_same_setup(*groups_.runtime, plugin_manifest(registry_, /*hashes=*/groups_.runtime->world_size() > 1),
                         job_.to_toml());
  const dist::MeshShape& shape = groups_.runtime->mesh().shape();
  log::get().info("rank {} of {} (local {} of {}, from {}), rendezvous at {}:{}; mesh {}; data parallel over {} ranks",
                  info.rank, info.world_size, info.local_rank, info.local_world_size, info.source, info.master_addr,
                  info.master_port, shape.describe(), shape.size("dp"));
}

void Trainer::checkpoint_activations() {
  const std::string value = job_.view("train").get_string("activation_checkpointing");
  const CheckpointMode mode = checkpoint_mode(value);
  if (mode == CheckpointMode::none) return;
  // Around the FSDP / DP block runner.
  model_.checkpointing = std::make_unique<ActivationCheckpointing>(*model_.module, mode);
  size_t modules = 0;
  for (const sdk::ModelBlock& block : model_.module->blocks()) modules += block.checkpointable.size();
  log::get().info(
      "[train] activation_checkpointing = \"{}\": {} run their forward without keeping activations "
      "and again in the backward",
      value,
      mode == CheckpointMode::full ? fmt::format("the {} blocks", model_.module->blocks().size())
                                   : fmt::format("the {} checkpointable modules", modules));
}

void Trainer::resume() {
  auto& log = log::get();
  std::optional<checkpoint::Snapshot> snapshot =
      saves_.checkpoints->load_newest([&](const std::string& message) { log.error("{}", message); });
  const bool own_run = snapshot.has_value();  // load_path starts another run's weights: new metric runs
  if (!snapshot && job_.checkpoint.load_path) {
    log.info("no checkpoint in {}; starting from checkpoint.load_path {}", job_.checkpoint.dir, *job_.checkpoint.load_path);
    snapshot = checkpoint::CheckpointManager::load(*job_.checkpoint.load_path);
  }
  if (!snapshot) {
    log.info("no checkpoint in {}: starting from scratch", job_.checkpoint.dir);
    return;
  }
  restore(*snapshot);
  if (!own_run) saves_.resumed_metric_runs.clear();
  saves_.resumed_from = progress_.step;
  log.info("resumed from step {} ({} tokens seen)", progress_.step, progress_.tokens_seen);
}

TrainingResult run_training(const config::JobConfig& job, const plugins::Registry& registry, TrainingOptions options) {
  Trainer trainer(job, registry, std::move(options));
  return trainer.train();
}

}  // namespace kforge::train
