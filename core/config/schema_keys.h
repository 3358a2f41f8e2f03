// Schema key builders: one KeySpec constructor per key kind, shared by the schema_*.cpp section files.
// Internal to core/config.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/schema.h"

namespace kforge::config::schema_parts {

KeySpec bool_key(const char* name, bool def, const char* doc);
/// A bool (default false) whose true value selects the components declaring enabled_by(name).
KeySpec enabler_key(const char* name, const char* doc);
KeySpec int_key(const char* name, int64_t def, const char* doc);
KeySpec float_key(const char* name, double def, const char* doc);
KeySpec string_key(const char* name, const char* def, const char* doc, std::vector<std::string> choices = {});
KeySpec float_list_key(const char* name, const std::vector<double>& def, const char* doc);
KeySpec int_list_key(const char* name, const std::vector<int64_t>& def, const char* doc);
KeySpec string_list_key(const char* name, const std::vector<std::string>& def, const char* doc);

/// A nullable scalar key without a default ("None" on the command line).
KeySpec optional_key(KeyType type, const char* name, const char* doc);
/// A scalar key without a default that must be given.
KeySpec required_key(KeyType type, const char* name, const char* doc);

/// A table of name = float, empty by default.
KeySpec dict_key(const char* name, const char* doc);
/// A table of name = value with a typed value (Int, Float or StringList) and a default.
KeySpec typed_dict_key(const char* name, KeyType item, Value def, const char* doc);

/// An optional sub-table ([section.name]) with the schema `sub`, which must outlive the schema.
KeySpec table_key(const char* name, const SectionSpec* sub, const char* doc);
/// An array of tables ([[section.name]]) with the element schema `sub`, empty by default.
KeySpec table_list_key(const char* name, const SectionSpec* sub, const char* doc, Value def = Value::make_list({}));

/// `key` with a tighter magnitude bound than kMaxConfigNumber (e.g. kMaxTimeoutSec).
KeySpec bounded(KeySpec key, double max_magnitude);

/// A list value of strings (a default of a StringList or a dict item).
Value string_list_value(const std::vector<std::string>& items);

}  // namespace kforge::config::schema_parts
