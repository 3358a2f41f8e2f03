// The config catalog (component keys for schema extension) built from the registry's metadata.
#pragma once

#include "config/resolver.h"
#include "plugins/registry.h"

namespace kforge::plugins {

/// One ComponentKeys per registered component, with its declared keys parsed into KeySpecs.
config::Catalog make_catalog(const Registry& registry);

}  // namespace kforge::plugins
