// Trainer <-> checkpoint: what a snapshot holds and how a run is restored from one.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include <chrono>

#include "checkpoint/checksum.h"
#include "checkpoint/model_loading.h"
#include "kforge/sdk/error.h"
#include "log/log.h"
#include "train/plugin_manifest.h"
#include "train/trainer.h"

namespace kforge::train {
namespace {

bool excluded(const config::JobConfig& job, const std::string& what) {
  const auto& list = job.checkpoint.exclude_from_loading;
  return std::find(list.begin(), list.end(), what) != list.end();
}

}  // namespace

std::string Trainer::replica_checksum() const {
  uint64_t combined = 0;
  for (const auto& p : parameters()) {
    const at::Tensor t = p.tensor.detach().contiguous();
    combined = combined * 1099511628211ULL ^ checkpoint::checksum(t.data_ptr(), t.numel() * t.element_size());
  }
  return checkpoint::checksum_hex(combined);
}

checkpoint::Snapshot Trainer::snapshot() const {
  checkpoint::Snapshot s;
  s.step = progress_.step;
  s.tokens_seen = progress_.tokens_seen;
  model_.parallel->save_slices(s, *optim_.optimizer);
  model_.parallel->save_whole(s);  // after the slices: the wrappers trim those only
  s.rng = at::detail::getDefaultCPUGenerator().get_state();
  if (groups_.device.is_cuda()) s.rng_cuda = at::globalContext().defaultGenerator(groups_.device).get_state();
  const dist::Group& dp = groups_.runtime->dp();
  s.train_state = {{"step", progress_.step},
                   {"tokens_seen", progress_.tokens_seen},
                   {"data_parallel_size", dp.size()},
                   {"batch_size", job_.train.batch_size},
                   {"nan", {{"consecutive", progress_.consecutive_nans}, {"total", progress_.total_nans}}},
                   {"skipped_steps", progress_.total_skips},  // a save follows a trained step: none in a row
                   {"freeze", canonical_freeze_meta(effective_freeze(progress_.step, optim_.freeze))},
                   {"scheduler", {{"name", job_.view("scheduler").get_string("name")}, {"next_step", progress_.step}}}};
  if (fp16_.scaler) s.train_state["loss_scale"] = fp16_.scaler->state();
  nlohmann::json data_entry = {{"rank", dp.rank()}, {"replica_checksum", replica_checksum()}};
  // Skipped steps drew batches too.
  data_.feed->save_position(data_entry, s.train_state, /*steps_drawn=*/progress_.step + progress_.total_skips);
  s.train_state["data"] = nlohmann::json::array({data_entry});
  const std::vector<std::string> backends = job_.view("metrics").get_string_list("backends");
  const std::vector<std::string> run_ids = tracker_->run_ids();  // rank 0's are the ones committed
  for (size_t i = 0; i < run_ids.size() && i < backends.size(); ++i) {
    if (!run_ids[i].empty()) s.train_state["metric_runs"][backends[i]] = run_ids[i];
  }
  s.config_toml = job_.to_toml();
  s.plugins = plugin_manifest(registry_, /*hashes=*/false);
  return s;
}

void Trainer::restore(const checkpoint::Snapshot& whole) {
  // Pipeline, expert and tensor parallelism: this rank's part only.
  const std::optional<checkpoint::Snapshot> localised = model_.parallel->localise(whole);
  const checkpoint::Snapshot& s = localised ? *localised : whole;
  check_freeze_meta(s.train_state.value("freeze", nlohmann::json()),
                    canonical_freeze_meta(effective_freeze(s.step, optim_.freeze)),
                    job_.view("checkpoint").get_bool("ignore_freeze_mismatch"),
                    fmt::format("{} (step {})", job_.checkpoint.dir, s.step));
  if (!excluded(job_, "model")) model_.parallel->load_weights(s);
  if (s.train_state.value("weights_only", false)) {
    log::get().info("the checkpoint of step {} holds weights only ({}): the optimizer starts fresh", s.step,
                    s.train_state.value("imported_from", "no optimizer state was saved"));
  } else if (!excluded(job_, "optimizer")) {
    optim_.optimizer->load_state_dict(model_.parallel->optimizer_state(s.optimizer));
  }
  optim_.optimizer->use_train_weights();
  if (!excluded(job_, "train_state")) {
    progress_.step = s.step;
    progress_.tokens_seen = s.tokens_seen;
    const auto& ts = s.train_state;
    progress_.consecutive_nans = ts.at("nan").at("consecutive").get<int64_t>();
    progress_.total_nans = ts.at("nan").at("total").get<int64_t>();
    // Absent from checkpoints written before it was counted.
    progress_.total_skips = ts.value("skipped_steps", int64_t{0});
    saves_.resumed_metric_runs = ts.value("metric_runs", std::map<std::string, std::string>{});
    // fp16: the scale continues; a checkpoint of another precision has none, and the scale starts at loss_scale_init.
    if (fp16_.scaler && ts.contains("loss_scale")) fp16_.scaler->load_state(ts.at("loss_scale"));
    data_.feed->resume(ts, s.step);
    if (s.rng.defined()) {
      at::Generator generator = at::detail::getDefaultCPUGenerator();
      generator.set_state(s.rng);
    }
    // A CUDA run's device generator resumes too; a CPU checkpoint resumed on CUDA keeps the seeded one (and says so).
    if (groups_.device.is_cuda() && s.rng_cuda.defined()) {
      at::Generator generator = at::globalContext().defaultGenerator(groups_.device);
      generator.set_state(s.rng_cuda);
    } else if (groups_.device.is_cuda() && s.rng.defined()) {
      log::get().warn(
          "the checkpoint of step {} has no CUDA generator state (written by a CPU run): random draws on "
          "{} continue from the seed, not from the saved run",
          s.step, groups_.device.str());
    }
    saves_.last_step = progress_.step;
  }
}

void Trainer::save_checkpoint() {
  const auto start = std::chrono::steady_clock::now();
  optim_.optimizer->use_eval_weights();  // checkpoints hold the evaluation weights
  std::filesystem::path dir;
  if (saves_.writer) {
    saves_.writer->save(snapshot());
  } else {
    dir = saves_.checkpoints->save(snapshot());
  }
  optim_.optimizer->use_train_weights();
  saves_.last_step = progress_.step;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  log::get().info("checkpoint of step {}: the step loop stalled {:.1f} ms ({})", progress_.step, ms,
                  saves_.writer ? "staging copy; written in the background" : "written and committed");
  if (!saves_.writer) report_saves({{progress_.step, dir}});
}

void Trainer::report_saves(const std::vector<std::pair<int64_t, std::filesystem::path>>& saves) {
  for (const auto& [step, dir] : saves) {
    log::get().info("checkpoint saved: {}", dir.string());
    for (auto& hook : hooks_) hook->on_checkpoint_save(step, job_.checkpoint.dir);
  }
}

}  // namespace kforge::train
