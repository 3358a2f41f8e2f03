// make_catalog: the loaded components' declared keys, as the config layer resolves them.
#include "plugins/catalog.h"

#include "kforge/sdk/kinds.h"

namespace kforge::plugins {

config::Catalog make_catalog(const Registry& registry) {
  config::Catalog catalog;
  for (const sdk::KindInfo& kind : sdk::kKinds) {
    for (const Entry* e : registry.entries(kind.name)) {
      config::ComponentKeys c{e->meta.kind, e->meta.name,      e->plugin->version, e->plugin->path.filename().string(),
                              {},           e->meta.enabled_by};
      const std::string owner = e->meta.kind + " '" + e->meta.name + "'";
      for (const ConfigKeyMeta& k : e->meta.keys) {
        c.keys.push_back(config::plugin_key_spec(k.name, k.type, k.default_value, k.doc, owner));
      }
      catalog.push_back(std::move(c));
    }
  }
  return catalog;
}

}  // namespace kforge::plugins
