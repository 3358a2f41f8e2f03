// Import of a KempnerForge checkpoint: DCP items and train_state.pt mapped onto a kforge Snapshot.
#include "interop/dcp_import.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "checkpoint/checkpoint_manager.h"
#include "checkpoint/durable_file.h"
#include "checkpoint/mapped_file.h"
#include "config/job_config.h"
#include "interop/dcp_reader.h"
#include "interop/torch_save.h"
#include "kforge/sdk/error.h"
#include "plugins/catalog.h"
#include "plugins/components.h"
#include "train/plugin_manifest.h"

namespace kforge::interop {
namespace fs = std::filesystem;
namespace {

using Kind = PickleValue::Kind;

bool has_metadata(const fs::path& dir) { return fs::exists(dir / ".metadata"); }

// The DCP directories of a step: the step itself, or its pp<N> stage directories (KempnerForge's pipeline runs).
std::vector<fs::path> dcp_dirs(const fs::path& step) {
  if (has_metadata(step)) return {step};
  std::vector<fs::path> stages;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(step, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("pp", 0) == 0 && has_metadata(entry.path())) stages.push_back(entry.path());
  }
  std::sort(stages.begin(), stages.end());
  return stages;
}

// `dir`, or the step its `latest` link points at (a KempnerForge checkpoint.dir).
fs::path step_directory(const fs::path& dir) {
  if (!dcp_dirs(dir).empty()) return dir;
  std::error_code ec;
  const fs::path latest = fs::canonical(dir / "latest", ec);
  if (!ec && !dcp_dirs(latest).empty()) return latest;
  throw sdk::ConfigError(fmt::format(
      "{}: no .metadata (a torch.distributed.checkpoint step directory, or its pp* stages) and no `latest` leading to "
      "one; give a KempnerForge step_N directory or its checkpoint.dir",
      dir.string()));
}

std::optional<int64_t> integer_entry(const PickleValue* dict, const char* key, const std::string& origin) {
  const PickleValue* v = dict ? dict->get(key) : nullptr;
  if (v == nullptr) return std::nullopt;
  if (v->kind != Kind::integer) {
    throw sdk::Error(fmt::format("{}: '{}' is a {}, not an integer", origin, key, v->describe()));
  }
  return v->integer;
}

class Importer {
 public:
  Importer(const fs::path& step, const plugins::Registry& registry, const DcpImportOptions& options)
      : step_(step),
        registry_(registry),
        options_(options),
        reader_(dcp_dirs(step)),
        job_(config::load_job_config(options.config, options.overrides, plugins::make_catalog(registry))) {}

  checkpoint::Snapshot snapshot() {
    checkpoint::Snapshot s;
    s.train_state = {{"nan", {{"consecutive", 0}, {"total", 0}}}, {"imported_from", fs::absolute(step_).string()}};
    take_model(s);
    take_optimizer(s);
    take_train_state(s);
    for (const auto& [key, item] : reader_.items()) {
      if (used_.count(key) || key.rfind("optimizer.", 0) == 0) continue;  // the optimizer lines cover these
      not_carried.push_back(fmt::format("'{}': kforge's checkpoint has no place for it", key));
    }
    s.config_toml = job_.to_toml();
    s.plugins = train::plugin_manifest(registry_, /*hashes=*/false);
    return s;
  }

  std::vector<std::string> carried, not_carried;

 private:
  void take_model(checkpoint::Snapshot& s) {
    const std::shared_ptr<sdk::Model> model = plugins::Components(registry_, job_).model();
    std::vector<std::pair<std::string, at::Tensor>> wanted;
    for (const auto& item : model->named_parameters(true)) wanted.emplace_back(item.key(), item.value());
    const size_t parameters = wanted.size();
    for (const auto& item : model->named_buffers(true)) wanted.emplace_back(item.key(), item.value());
    std::set<at::ScalarType> cast_from;
    for (size_t i = 0; i < wanted.size(); ++i) {
      const auto& [name, like] = wanted[i];
      const std::string key = "model." + name;
      if (!reader_.items().count(key)) {
        if (i < parameters) {
          throw sdk::ConfigError(fmt::format(
              "{}: no tensor '{}' for the parameter '{}' of the model {} describes; convert with the config the "
              "KempnerForge run trained with",
              step_.string(), key, name, options_.config.string()));
        }
        not_carried.push_back(fmt::format("buffer '{}': not in the checkpoint; kforge's initial value is kept", name));
        s.model.emplace(name, like.detach().clone());
        continue;
      }
      const at::Tensor t = reader_.tensor(key);
      if (!t.sizes().equals(like.sizes())) {
        throw sdk::ConfigError(fmt::format("{}: '{}' has shape {}, the model {} describes needs {}", step_.string(),
                                           key, c10::str(t.sizes()), options_.config.string(), c10::str(like.sizes())));
      }
      if (t.scalar_type() != like.scalar_type()) cast_from.insert(t.scalar_type());
      s.model.emplace(name, t.to(like.scalar_type()).contiguous());
      used_.insert(key);
      if (i < parameters) parameters_.push_back(name);
    }
    std::vector<std::string> extra;
    for (const auto& [key, item] : reader_.items()) {
      if (key.rfind("model.", 0) == 0 && !used_.count(key)) extra.push_back(key);
    }
    if (!extra.empty()) {
      throw sdk::ConfigError(fmt::format("{}: {} model tensors have no counterpart in the model {} describes, e.g. "
                                         "'{}'; convert with the config the KempnerForge run trained with",
                                         step_.string(), extra.size(), options_.config.string(), extra[0]));
    }
    carried.push_back(fmt::format("model: {} tensors{}", s.model.size(),
                                  cast_from.empty() ? "" : fmt::format(" (cast to the model's dtype from {})",
                                                                       c10::toString(*cast_from.begin()))));
  }

  // AdamW's moments and step per parameter, FQN-keyed as get_optimizer_state_dict writes them (KempnerForge PR #115).
  void take_optimizer(checkpoint::Snapshot& s) {
    const std::string optimizer = job_.view("optimizer").get_string("name");
    const std::string prefix = "optimizer.state.";
    std::set<std::string> slots;
    bool any = false;
    for (const auto& [key, item] : reader_.items()) {
      if (key.rfind(prefix, 0) != 0) continue;
      any = true;
      slots.insert(key.substr(key.rfind('.') + 1));
    }
    const auto weights_only = [&](const std::string& why) {
      s.optimizer.clear();
      s.train_state["weights_only"] = true;
      not_carried.push_back("optimizer state: " + why + "; the optimizer starts fresh");
    };
    if (!any) return weights_only("the checkpoint holds none");
    if (optimizer != "adamw") {
      return weights_only(fmt::format("kforge carries AdamW's state only, and the config's optimizer is '{}'", optimizer));
    }
    std::vector<std::string> missing;
    for (const std::string& name : parameters_) {
      const at::Tensor& like = s.model.at(name);
      for (const char* slot : {"exp_avg", "exp_avg_sq", "step"}) {
        const std::string key = prefix + name + "." + slot;
        if (!reader_.items().count(key)) {
          missing.push_back(key);
          continue;
        }
        at::Tensor t = reader_.tensor(key);
        if (std::string(slot) == "step") {
          if (t.numel() != 1) {
            throw sdk::Error(fmt::format("{}: '{}' has shape {}; a step count is one number", step_.string(), key,
                                         c10::str(t.sizes())));
          }
          t = t.to(at::kLong).reshape({});
        } else if (!t.sizes().equals(like.sizes())) {
          throw sdk::Error(fmt::format("{}: '{}' has shape {}, its parameter {}", step_.string(), key,
                                       c10::str(t.sizes()), c10::str(like.sizes())));
        } else {
          t = t.to(like.scalar_type()).contiguous();
        }
        s.optimizer.emplace(name + "." + slot, t);
      }
    }
    if (!missing.empty()) {
      const bool by_index = reader_.items().count(prefix + "0.exp_avg") > 0;
      return weights_only(by_index ? "it is keyed by parameter index (a checkpoint from before KempnerForge's PR "
                                     "#115, which KempnerForge itself resumes with a fresh optimizer)"
                                   : fmt::format("{} entries are missing, e.g. '{}'", missing.size(), missing[0]));
    }
    for (const std::string& slot : slots) {
      if (slot != "exp_avg" && slot != "exp_avg_sq" && slot != "step") {
        not_carried.push_back(fmt::format("optimizer state '{}' (e.g. amsgrad's): kforge's AdamW keeps none", slot));
      }
    }
    carried.push_back(fmt::format("optimizer: AdamW exp_avg, exp_avg_sq and step of {} parameters",
                                  s.optimizer.size() / 3));
    not_carried.push_back(
        "optimizer param_groups (lr, betas, eps, weight_decay): kforge takes them from the config");
  }

  void take_train_state(checkpoint::Snapshot& s) {
    const fs::path path = step_ / "train_state.pt";
    int64_t epoch = 0, batches = 0, replicas = 1;
    if (!fs::exists(path)) {
      not_carried.push_back(fmt::format("{} is absent: step 0, and the data order starts afresh", path.string()));
    } else {
      const checkpoint::MappedFile file(path);
      const TorchSaved saved(file.bytes(), path.string());
      const PickleValue& root = saved.root();
      if (root.kind != Kind::dict) throw sdk::Error(fmt::format("{}: holds a {}, not a dict", path.string(), root.describe()));
      s.step = integer_entry(&root, "step", path.string()).value_or(0);
      s.tokens_seen = integer_entry(&root, "tokens_seen", path.string()).value_or(0);
      carried.push_back(fmt::format("step {}, {} tokens seen", s.step, s.tokens_seen));
      for (size_t i = 0; i + 1 < root.items.size(); i += 2) {
        const PickleValue* key = root.items[i];
        const PickleValue& value = *root.items[i + 1];
        const std::string name = key->kind == Kind::string ? key->text : key->describe();
        if (name == "step" || name == "tokens_seen") continue;
        if (name == "scheduler") {
          take_scheduler(s, value, path.string());
        } else if (name == "dataloader") {
          const std::string where = path.string() + " dataloader";
          epoch = integer_entry(&value, "epoch", where).value_or(0);
          batches = integer_entry(&value, "batches_yielded", where).value_or(0);
          const PickleValue* sampler = value.get("sampler");
          replicas = integer_entry(sampler, "num_replicas", where + " sampler").value_or(1);
          const std::optional<int64_t> seed = integer_entry(sampler, "seed", where + " sampler");
          if (seed && *seed != job_.train.effective_data_seed()) {
            not_carried.push_back(fmt::format("the sampler's seed {}: this config's data seed is {}, so the data "
                                              "order differs from the KempnerForge run's",
                                              *seed, job_.train.effective_data_seed()));
          }
          carried.push_back(fmt::format("data position: epoch {}, {} batches of {} on each of {} ranks", epoch,
                                        batches, job_.train.batch_size, replicas));
        } else if (name == "rng") {
          take_rng(s, saved, value);
        } else if (name == "phase_idx") {
          carried.push_back("data phase: re-derived from the step, as KempnerForge does on resume");
        } else {
          not_carried.push_back(fmt::format("train_state '{}': kforge keeps no such state", name));
        }
      }
    }
    if (!job_.data.datasets.empty()) {
      not_carried.push_back("the mixture's sample order: kforge's mixture sampler differs; it starts afresh");
    }
    // One position for all the sampler's replicas: the ranks together took batches * batch_size * replicas samples of
    // the epoch's order, which any number of kforge ranks continues after.
    s.train_state["data"] = nlohmann::json::array({{{"rank", 0}, {"epoch", epoch}, {"batches_yielded", batches}}});
    s.train_state["data_parallel_size"] = 1;
    s.train_state["batch_size"] = job_.train.batch_size * replicas;
    if (!s.train_state.contains("scheduler")) {
      s.train_state["scheduler"] = {{"name", job_.view("scheduler").get_string("name")}, {"next_step", s.step}};
    }
  }

  void take_scheduler(checkpoint::Snapshot& s, const PickleValue& value, const std::string& origin) {
    const std::optional<int64_t> last = integer_entry(&value, "last_epoch", origin + " scheduler");
    s.train_state["scheduler"] = {{"name", job_.view("scheduler").get_string("name")}, {"next_step", s.step}};
    if (last && *last == s.step) {
      carried.push_back(fmt::format("scheduler: step {} of '{}' (LambdaLR last_epoch {})", s.step,
                                    job_.view("scheduler").get_string("name"), *last));
    } else {
      not_carried.push_back(fmt::format("scheduler position {}: kforge's learning rate follows the step, {}",
                                        last ? std::to_string(*last) : "(none)", s.step));
    }
  }

  // torch's generators carry over (kforge's CPU generator is torch's, of the same state size); Python's and NumPy's
  // do not: kforge draws from neither.
  void take_rng(checkpoint::Snapshot& s, const TorchSaved& saved, const PickleValue& rng) {
    for (size_t i = 0; i + 1 < rng.items.size(); i += 2) {
      const std::string name = rng.items[i]->kind == Kind::string ? rng.items[i]->text : rng.items[i]->describe();
      const PickleValue& value = *rng.items[i + 1];
      if (name == "torch_cpu" || name == "torch_cuda") {
        const at::Tensor state = saved.tensor(value, "rng." + name);
        const bool cpu = name == "torch_cpu";
        const bool fits = state.scalar_type() == at::kByte &&
                          (cpu ? state.numel() == 5056 || state.numel() == 5048 : state.numel() == 16);
        if (!fits) {
          not_carried.push_back(fmt::format("rng.{}: {} bytes, not a state this LibTorch's generator takes", name,
                                            state.numel()));
          continue;
        }
        (cpu ? s.rng : s.rng_cuda) = state;
        carried.push_back(fmt::format("rng.{}: torch's {} generator state", name, cpu ? "CPU" : "CUDA"));
      } else {
        not_carried.push_back(fmt::format("rng.{}: kforge draws from no {} generator", name,
                                          name == "numpy" ? "NumPy" : name == "python" ? "Python" : "such"));
      }
    }
  }

  fs::path step_;
  const plugins::Registry& registry_;
  const DcpImportOptions& options_;
  DcpReader reader_;
  config::JobConfig job_;
  std::set<std::string> used_;          ///< the model items taken
  std::vector<std::string> parameters_;  ///< the model's parameters (which have optimizer state), by FQN
};

}  // namespace

DcpImportResult import_dcp(const fs::path& dir, const fs::path& out, const plugins::Registry& registry,
                           const DcpImportOptions& options) {
  std::error_code ec;
  if (fs::exists(out) && !fs::is_empty(out, ec)) {
    throw sdk::ConfigError(
        fmt::format("{}: exists and is not empty; choose a new directory for the checkpoint", out.string()));
  }
  const fs::path step = step_directory(dir);
  options.progress(fmt::format("reading {}", step.string()));
  Importer importer(step, registry, options);
  const checkpoint::Snapshot s = importer.snapshot();
  checkpoint::make_directories(out);
  DcpImportResult result;
  result.step_dir = checkpoint::CheckpointManager(out, 0, [](int64_t) { return false; }).save(s);
  result.carried = std::move(importer.carried);
  result.not_carried = std::move(importer.not_carried);
  return result;
}

}  // namespace kforge::interop
