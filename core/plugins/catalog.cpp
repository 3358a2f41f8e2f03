// make_catalog: the loaded components' declared keys and rules, as the config layer resolves them.
#include "plugins/catalog.h"

#include <array>

#include "kforge/sdk/kinds.h"

namespace kforge::plugins {
namespace {

// A component's rules as the config layer calls them: the resolved config's JSON in, a broken rule's JSON out.
std::function<std::string(const std::string&)> rules_of(const ComponentMeta& c) {
  if (c.validate == nullptr) return {};
  return [validate = c.validate](const std::string& config_json) {
    std::array<char, 16384> out{};
    return validate(config_json.c_str(), out.data(), out.size()) == 0 ? std::string() : std::string(out.data());
  };
}

}  // namespace

config::DeclaredKey declared_key(const ConfigKeyMeta& key) {
  const config::Support support = key.status == KFORGE_KEY_HONOURED    ? config::Support::Honoured
                                  : key.status == KFORGE_KEY_REFUSED   ? config::Support::Refused
                                  : key.status == KFORGE_KEY_NO_EFFECT ? config::Support::NoEffect
                                                                       : config::Support::Unset;
  return {key.name, key.type, key.default_value, key.doc, key.allowed, support, key.reason};
}

config::Catalog make_catalog(const Registry& registry) {
  config::Catalog catalog;
  for (const sdk::KindInfo& kind : sdk::kKinds) {
    for (const Entry* e : registry.entries(kind.name)) {
      config::ComponentKeys c{e->meta.kind, e->meta.name,      e->plugin->version, e->plugin->path.filename().string(),
                              {},           e->meta.enabled_by, e->meta.capabilities, rules_of(e->meta)};
      const std::string owner = e->meta.kind + " '" + e->meta.name + "'";
      for (const ConfigKeyMeta& k : e->meta.keys) {
        const bool in_section = (k.flags & KFORGE_KEY_FLAG_IN_SECTION) != 0;
        (in_section ? c.section_keys : c.keys).push_back(config::declared_key_spec(declared_key(k), owner));
      }
      catalog.push_back(std::move(c));
    }
  }
  return catalog;
}

}  // namespace kforge::plugins
