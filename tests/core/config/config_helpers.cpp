#include "config_helpers.h"

#include <gtest/gtest.h>

#include <fstream>

#include "config/rules.h"
#include "kforge/sdk/error.h"
#include "plugins/catalog.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

// The adapters and modality strategies of the built-in plugins, with their keys, capabilities and rules, and the
// components whose keys are keys of their section whenever they are loaded (Muon's, WSD's, ...: section_keys); the
// plugins stay loaded for the process.
const config::Catalog& builtin_declaring_parts() {
  static const std::unique_ptr<plugins::PluginHost> host = load_builtin_plugins();
  static const config::Catalog parts = [] {
    config::Catalog out;
    for (config::ComponentKeys& c : plugins::make_catalog(host->registry)) {
      if (c.kind == "adapter" || c.kind == "modality_strategy" || !c.section_keys.empty()) out.push_back(std::move(c));
    }
    return out;
  }();
  return parts;
}

}  // namespace

config::Catalog base_catalog(const config::Catalog& extra) {
  config::Catalog catalog = {
      {"model", "transformer", "1.0.0", "libkforge_models.so", {}},
      {"router", "softmax_topk", "1.0.0", "libkforge_models.so", {}},
      {"optimizer", "adamw", "1.0.0", "libkforge_optimizers.so", {}},
      {"scheduler", "cosine", "1.0.0", "libkforge_schedulers.so", {}},
      {"loss", "cross_entropy", "1.0.0", "libkforge_losses.so", {}},
      {"dataset", "memmap", "1.0.0", "libkforge_data.so", {}},
      {"metric_backend", "console", "1.0.0", "libkforge_metrics.so", {}},
      {"metric_backend", "jsonl", "1.0.0", "libkforge_metrics.so", {}},
  };
  for (const char* encoder : {"random", "siglip2", "clip"}) {
    catalog.push_back({"vision_encoder", encoder, "1.0.0", "libkforge_vision.so", {}});
  }
  // The adapters and KempnerForge's four [vlm] arches as libkforge_vision.so and libkforge_vlm.so declare them: their
  // keys, the capabilities the token budget reads and their rules; the optimizers and schedulers with [optimizer] and
  // [scheduler] keys (libkforge_optimizers.so's muon, schedule_free_adamw, wsd, rex).
  for (const config::ComponentKeys& c : builtin_declaring_parts()) catalog.push_back(c);
  catalog.push_back({"image_text_dataset", "image_text", "1.0.0", "libkforge_image_text_data.so", {}});
  catalog.push_back({"video_dataset", "webvid", "1.0.0", "libkforge_video.so", {}});
  catalog.push_back({"frame_sampler", "uniform", "1.0.0", "libkforge_video.so", {}});
  catalog.push_back({"time_embedding", "sinusoidal", "1.0.0", "libkforge_video.so", {}});
  for (const char* schedule : {"gpipe", "1f1b", "interleaved_1f1b"}) {
    catalog.push_back({"pipeline_schedule", schedule, "1.0.0", "libkforge_schedules.so", {}});
  }
  catalog.insert(catalog.end(), extra.begin(), extra.end());
  return catalog;
}

config::JobConfig load(const std::string& toml, const std::vector<std::string>& overrides,
                       const config::Catalog& catalog) {
  if (toml.empty()) return config::load_job_config("", overrides, catalog);  // a file must set something
  const auto path = temp_dir("cfg") / "cfg.toml";
  std::ofstream(path) << toml;
  return config::load_job_config(path, overrides, catalog);
}

std::string load_error(const std::string& toml, const std::vector<std::string>& overrides,
                       const config::Catalog& catalog) {
  try {
    load(toml, overrides, catalog);
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "config loaded without error:\n" << toml;
  return "";
}

std::string world_error(const std::string& toml, int world_size, const std::vector<std::string>& overrides) {
  const config::JobConfig job = load(toml, overrides);
  try {
    config::check_world(job, world_size);
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "check_world(" << world_size << ") passed for:\n" << toml;
  return "";
}

const config::Value& at(const config::JobConfig& job, const std::string& section, const std::string& key) {
  const config::Value* s = job.tree.find(section);
  if (s == nullptr) throw std::runtime_error("no section [" + section + "]");
  const config::Value* v = s->find(key);
  if (v == nullptr) throw std::runtime_error("no key [" + section + "] " + key);
  return *v;
}

bool same_tree(const config::Value& a, const config::Value& b, std::string* where) {
  auto differ = [&](const std::string& what) {
    if (where != nullptr) *where = what + ": " + a.to_toml() + " vs " + b.to_toml();
    return false;
  };
  if (a.type != b.type) return differ("type");
  switch (a.type) {
    case config::Value::Type::Null: return true;
    case config::Value::Type::Bool: return a.b == b.b || differ("bool");
    case config::Value::Type::Int: return a.i == b.i || differ("int");
    case config::Value::Type::Float: return a.f == b.f || differ("float");
    case config::Value::Type::String: return a.s == b.s || differ("string");
    case config::Value::Type::List:
      if (a.list.size() != b.list.size()) return differ("list size");
      for (size_t k = 0; k < a.list.size(); ++k) {
        if (!same_tree(a.list[k], b.list[k], where)) return false;
      }
      return true;
    case config::Value::Type::Table:
      if (a.table.size() != b.table.size()) return differ("table size");
      for (size_t k = 0; k < a.table.size(); ++k) {
        if (a.table[k].first != b.table[k].first) return differ("key " + a.table[k].first);
        if (!same_tree(a.table[k].second, b.table[k].second, where)) {
          if (where != nullptr) *where = a.table[k].first + "." + *where;
          return false;
        }
      }
      return true;
  }
  return false;
}

}  // namespace kforge::test
