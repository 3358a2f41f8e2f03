// The config catalog (component keys for schema extension) built from the registry's metadata.
#pragma once

#include "config/resolver.h"
#include "plugins/plugin_file.h"
#include "plugins/registry.h"

namespace kforge::plugins {

/// One ComponentKeys per registered component, with its declared keys parsed into KeySpecs.
config::Catalog make_catalog(const Registry& registry);

/// A key as a plugin declares it (kforge_config_key), in the config layer's terms.
config::DeclaredKey declared_key(const ConfigKeyMeta& key);

}  // namespace kforge::plugins
