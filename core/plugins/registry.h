// Registry: the host-owned (kind, name) -> factory map that plugins fill through register_all.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "kforge/sdk/registrar.h"
#include "plugins/plugin_set.h"

namespace kforge::plugins {

struct Entry {
  ComponentMeta meta;
  const PluginFile* plugin = nullptr;
  std::variant<sdk::ModelFactory, sdk::OptimizerFactory, sdk::SchedulerFactory, sdk::LossFactory,
               sdk::RouterFactory, sdk::DatasetFactory, sdk::HookFactory, sdk::MetricBackendFactory>
      factory;
};

class Registry final : public sdk::Registrar {
 public:
  /// Calls register_all of every accepted file, in order. A file whose registration fails, or
  /// that registers something its metadata does not declare, is refused (with the reason) and
  /// its entries are dropped. `set` must outlive the registry.
  void register_all(PluginSet& set);

  /// The entry for (kind, name) or nullptr.
  const Entry* find(const std::string& kind, const std::string& name) const;
  /// All entries of a kind, sorted by name.
  std::vector<const Entry*> entries(const std::string& kind) const;
  /// The entry, or sdk::ConfigError naming `where` (e.g. "cfg.toml [optimizer] name"), the known
  /// names with their files, and a "did you mean" suggestion.
  const Entry& get(const std::string& kind, const std::string& name, const std::string& where) const;

  void add_model(const std::string& name, sdk::ModelFactory factory) override;
  void add_optimizer(const std::string& name, sdk::OptimizerFactory factory) override;
  void add_scheduler(const std::string& name, sdk::SchedulerFactory factory) override;
  void add_loss(const std::string& name, sdk::LossFactory factory) override;
  void add_router(const std::string& name, sdk::RouterFactory factory) override;
  void add_dataset(const std::string& name, sdk::DatasetFactory factory) override;
  void add_hook(const std::string& name, sdk::HookFactory factory) override;
  void add_metric_backend(const std::string& name, sdk::MetricBackendFactory factory) override;

 private:
  template <class Factory>
  void add(const char* kind, const std::string& name, Factory factory);

  std::map<std::pair<std::string, std::string>, Entry> entries_;
  const PluginFile* current_ = nullptr;  // the file whose register_all is running
};

}  // namespace kforge::plugins
