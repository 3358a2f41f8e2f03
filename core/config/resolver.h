// Resolving a raw config tree against the schema: defaults, type coercion, unknown-key errors,
// and the keys that the selected component plugins declare.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "config/schema.h"
#include "config/value.h"

namespace kforge::config {

/// What one loaded component declares (from plugin metadata), for schema extension and errors.
struct ComponentKeys {
  std::string kind, name, version, file;
  std::vector<KeySpec> keys;
  std::string enabled_by;  ///< a bool core key of the kind's section that selects it ("": none)
  uint32_t capabilities = 0;  ///< KFORGE_CAP_* flags
  /// Its rules on a resolved config: config_json(tree, world_size) in, "" or a broken rule's JSON
  /// ({"section", "key", "message"}) out; empty: none.
  std::function<std::string(const std::string&)> rules;
  /// Its keys that are keys of its kind's section whenever it is loaded, selected or not (KFORGE_KEY_FLAG_IN_SECTION).
  std::vector<KeySpec> section_keys;
};

/// A key as a component declares it: a TOML literal default, the allowed values ("a|b" of a string key, "MIN..MAX"
/// of a number; "": any) and what this kforge does with it.
struct DeclaredKey {
  std::string name, type, default_value, doc, allowed;
  Support support = Support::Honoured;
  std::string reason;
};
using Catalog = std::vector<ComponentKeys>;

/// The TOML file (optional: empty path means defaults only) with the overrides applied.
Value read_raw_config(const std::filesystem::path& file, const std::vector<std::string>& overrides);

/// `raw` (a config tree built elsewhere: the Python module's dicts) with the overrides applied, as read_raw_config
/// applies them to its file's tree.
Value apply_overrides(Value raw, const std::vector<std::string>& overrides);

/// The schema in force for this raw config: core sections plus the keys of the components the config selects (a dict
/// key of the section's adds its default's entries to the section's default), with hints naming the selection that
/// takes each key of an unselected component of the selected one's plugin. Throws sdk::ConfigError when a selected
/// component is not in the catalog.
std::vector<SectionSpec> effective_schema(const Value& raw, const Catalog& catalog);

/// Fills defaults, coerces types and rejects unknown keys (with valid keys and a suggestion).
/// Throws sdk::ConfigError naming the source position, key, value and what is allowed.
Value resolve(const Value& raw, const std::vector<SectionSpec>& schema, const Catalog& catalog);

/// The components of the catalog that the raw config selects, kind by kind (kinds.h order). Throws
/// sdk::ConfigError when a selected component is not in the catalog.
std::vector<const ComponentKeys*> selected_components(const Value& raw, const Catalog& catalog);

/// Parses a component's declared key into a KeySpec of `owner` ("<kind> '<name>'"); throws sdk::Error naming the
/// key when its type, default, allowed values or status are malformed, or the default is not allowed.
KeySpec declared_key_spec(const DeclaredKey& key, const std::string& owner);

/// Parses a plugin's declared default (a TOML literal) into a KeySpec: declared_key_spec with any value allowed.
KeySpec plugin_key_spec(const std::string& name, const std::string& type, const std::string& default_literal,
                        const std::string& doc, const std::string& owner);

}  // namespace kforge::config
