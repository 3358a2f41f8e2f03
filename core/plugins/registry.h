// Registry: the host-owned (kind, name) -> factory map that plugins fill through register_all.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "kforge/sdk/kinds.h"
#include "kforge/sdk/registrar.h"
#include "plugins/plugin_set.h"

namespace kforge::plugins {

#define KFORGE_DETAIL_FACTORY_TYPE(id, Interface, section, selector, multiple) , sdk::Interface##Factory
/// The factory of any kind (std::monostate only leads the list the kind table expands into).
using AnyFactory = std::variant<std::monostate KFORGE_COMPONENT_KINDS(KFORGE_DETAIL_FACTORY_TYPE)>;
#undef KFORGE_DETAIL_FACTORY_TYPE

struct Entry {
  ComponentMeta meta;
  const PluginFile* plugin = nullptr;
  AnyFactory factory;
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

#define KFORGE_DETAIL_ADD(id, Interface, section, selector, multiple)                \
  void add_##id(const std::string& name, sdk::Interface##Factory factory) override { \
    add(sdk::kind::id, name, std::move(factory));                                    \
  }
  KFORGE_COMPONENT_KINDS(KFORGE_DETAIL_ADD)
#undef KFORGE_DETAIL_ADD

 private:
  void add(const char* kind, const std::string& name, AnyFactory factory);

  std::map<std::pair<std::string, std::string>, Entry> entries_;
  const PluginFile* current_ = nullptr;  // the file whose register_all is running
};

}  // namespace kforge::plugins
