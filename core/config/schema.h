// Schema: every config section and key kforge accepts, with type, default, choices and doc.
// The core sections carry KempnerForge's schema; component plugins add keys to their section.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/key_support.h"
#include "config/limits.h"
#include "config/value.h"

namespace kforge::config {

enum class KeyType { Bool, Int, Float, String, IntList, FloatList, StringList, Table, TableList, Dict };

struct SectionSpec;

struct KeySpec {
  std::string name;
  KeyType type = KeyType::String;
  Value default_value;               ///< Null: no default (nullable keys, optional tables)
  bool nullable = false;             ///< may be null ("None" on the command line)
  std::vector<std::string> choices;  ///< allowed string values (empty: any)
  std::string doc;
  const SectionSpec* sub = nullptr;  ///< schema of a Table / TableList element
  std::string owner;                 ///< "" for core keys, else "<kind> '<name>'" of a plugin
  KeyType item = KeyType::Float;     ///< value type of a Dict: Int, Float or StringList
  /// Int and Float keys, the items of their lists and the values of their dicts: the largest
  /// magnitude accepted (Float values must also be finite), so that no conversion of them overflows.
  double max_magnitude = kMaxConfigNumber;
  /// A Bool whose true value selects the components that declare enabled_by(name), as if they were
  /// listed in the section's selector list (e.g. [metrics] enable_tensorboard).
  bool selects_component = false;
  /// Int and Float keys a plugin declares with a range (kforge_config_key allowed "MIN..MAX"): its ends, each
  /// absent when open, and whether each excludes its value ("0<..": > 0).
  std::optional<double> min, max;
  bool min_excluded = false, max_excluded = false;
  /// A key a plugin declares: what this kforge does with it, and why for Refused / NoEffect (kforge's own keys
  /// have theirs in key_support()).
  Support support = Support::Honoured;
  std::string why;

  /// A key that must be given: no default and not nullable (e.g. a freeze stage's start_step).
  bool required() const { return default_value.is_null() && !nullable && type != KeyType::Table; }
};

struct SectionSpec {
  std::string name;
  std::vector<KeySpec> keys;
  bool optional = false;  ///< present only when the file or command line sets it
  std::string doc;
  /// Keys not valid in this variant of the section, each with the reason (shown instead of a
  /// plain "unknown key"), e.g. [vlm] keys of another arch of the selected arch's plugin.
  std::vector<std::pair<std::string, std::string>> hints;
  /// An optional section materialised with its defaults when this other section is present
  /// ([adapter] when [vlm] is set).
  std::string implied_by;

  const KeySpec* find(const std::string& key) const;
  std::vector<std::string> key_names() const;
};

/// The built-in schema (KempnerForge's sections plus kforge's additions), in document order.
const std::vector<SectionSpec>& core_schema();

/// Name of a key type as plugin metadata spells it ("int", "float_list", ...).
const char* key_type_name(KeyType type);
/// Parses a plugin metadata type name into the key's type and, for a dict ("int_dict", "string_list_dict"), its
/// values' type; throws sdk::Error for an unknown one.
std::pair<KeyType, KeyType> parse_key_type(const std::string& name);

}  // namespace kforge::config
