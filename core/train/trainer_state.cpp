// Trainer <-> checkpoint: what a snapshot holds and how a run is restored from one.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <set>

#include "checkpoint/model_loading.h"
#include "kforge/sdk/kinds.h"
#include "train/trainer.h"

namespace kforge::train {
namespace {

bool excluded(const config::JobConfig& job, const std::string& what) {
  const auto& list = job.checkpoint.exclude_from_loading;
  return std::find(list.begin(), list.end(), what) != list.end();
}

nlohmann::json plugin_set(const plugins::Registry& registry) {
  std::set<const plugins::PluginFile*> files;
  for (const char* kind : {sdk::kind::model, sdk::kind::router, sdk::kind::optimizer, sdk::kind::scheduler,
                           sdk::kind::loss, sdk::kind::dataset, sdk::kind::hook, sdk::kind::metric_backend}) {
    for (const plugins::Entry* e : registry.entries(kind)) files.insert(e->plugin);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const plugins::PluginFile* f : files) {
    out.push_back({{"file", f->path.filename().string()}, {"name", f->name}, {"version", f->version}});
  }
  return out;
}

}  // namespace

checkpoint::Snapshot Trainer::snapshot() const {
  checkpoint::Snapshot s;
  s.step = step_;
  s.tokens_seen = tokens_seen_;
  for (const auto& item : model_->named_parameters(true)) s.model.emplace(item.key(), item.value().detach());
  for (const auto& item : model_->named_buffers(true)) s.model.emplace(item.key(), item.value().detach());
  s.optimizer = optimizer_->state_dict();
  s.rng = at::detail::getDefaultCPUGenerator().get_state();
  const auto position = sampler_->position();
  s.train_state = {{"step", step_},
                   {"tokens_seen", tokens_seen_},
                   {"data", {{{"rank", 0}, {"epoch", position.epoch}, {"batches_yielded", position.batches_yielded}}}},
                   {"nan", {{"consecutive", consecutive_nans_}, {"total", total_nans_}}},
                   {"scheduler", {{"name", job_.view("scheduler").get_string("name")}, {"next_step", step_}}}};
  s.config_toml = job_.to_toml();
  s.plugins = plugin_set(registry_);
  return s;
}

void Trainer::restore(const checkpoint::Snapshot& s) {
  if (!excluded(job_, "model")) checkpoint::load_model_weights(*model_, s);
  if (!excluded(job_, "optimizer")) optimizer_->load_state_dict(s.optimizer);
  optimizer_->use_train_weights();
  if (!excluded(job_, "train_state")) {
    step_ = s.step;
    tokens_seen_ = s.tokens_seen;
    const auto& ts = s.train_state;
    consecutive_nans_ = ts.at("nan").at("consecutive").get<int64_t>();
    total_nans_ = ts.at("nan").at("total").get<int64_t>();
    const auto& position = ts.at("data").at(0);
    sampler_->restore({position.at("epoch").get<int64_t>(), position.at("batches_yielded").get<int64_t>()});
    if (s.rng.defined()) {
      at::Generator generator = at::detail::getDefaultCPUGenerator();
      generator.set_state(s.rng);
    }
    last_saved_step_ = step_;
  }
}

void Trainer::save_checkpoint() {
  optimizer_->use_eval_weights();  // checkpoints hold the evaluation weights
  const auto dir = checkpoints_->save(snapshot());
  optimizer_->use_train_weights();
  last_saved_step_ = step_;
  log::get().info("checkpoint saved: {}", dir.string());
  for (auto& hook : hooks_) hook->on_checkpoint_save(step_, job_.checkpoint.dir);
}

}  // namespace kforge::train
