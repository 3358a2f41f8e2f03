// Schema key builders: one KeySpec constructor per key kind.
#include "config/schema_keys.h"

#include <utility>

namespace kforge::config::schema_parts {

KeySpec bool_key(const char* name, bool def, const char* doc) {
  return {name, KeyType::Bool, Value::boolean(def), false, {}, doc};
}

KeySpec enabler_key(const char* name, const char* doc) {
  KeySpec k = bool_key(name, false, doc);
  k.selects_component = true;
  return k;
}

KeySpec int_key(const char* name, int64_t def, const char* doc) {
  return {name, KeyType::Int, Value::integer(def), false, {}, doc};
}

KeySpec float_key(const char* name, double def, const char* doc) {
  return {name, KeyType::Float, Value::floating(def), false, {}, doc};
}

KeySpec string_key(const char* name, const char* def, const char* doc, std::vector<std::string> choices) {
  return {name, KeyType::String, Value::string(def), false, std::move(choices), doc};
}

KeySpec float_list_key(const char* name, const std::vector<double>& def, const char* doc) {
  std::vector<Value> items;
  for (double d : def) items.push_back(Value::floating(d));
  return {name, KeyType::FloatList, Value::make_list(std::move(items)), false, {}, doc};
}

KeySpec int_list_key(const char* name, const std::vector<int64_t>& def, const char* doc) {
  std::vector<Value> items;
  for (int64_t i : def) items.push_back(Value::integer(i));
  return {name, KeyType::IntList, Value::make_list(std::move(items)), false, {}, doc};
}

KeySpec string_list_key(const char* name, const std::vector<std::string>& def, const char* doc) {
  return {name, KeyType::StringList, string_list_value(def), false, {}, doc};
}

KeySpec optional_key(KeyType type, const char* name, const char* doc) {
  return {name, type, Value::null(), true, {}, doc};
}

KeySpec required_key(KeyType type, const char* name, const char* doc) {
  return {name, type, Value::null(), false, {}, doc};
}

KeySpec dict_key(const char* name, const char* doc) {
  return {name, KeyType::Dict, Value::make_table(), false, {}, doc};
}

KeySpec typed_dict_key(const char* name, KeyType item, Value def, const char* doc) {
  KeySpec k{name, KeyType::Dict, std::move(def), false, {}, doc};
  k.item = item;
  return k;
}

KeySpec table_key(const char* name, const SectionSpec* sub, const char* doc) {
  KeySpec k{name, KeyType::Table, Value::null(), true, {}, doc};
  k.sub = sub;
  return k;
}

KeySpec table_list_key(const char* name, const SectionSpec* sub, const char* doc, Value def) {
  KeySpec k{name, KeyType::TableList, std::move(def), false, {}, doc};
  k.sub = sub;
  return k;
}

KeySpec bounded(KeySpec key, double max_magnitude) {
  key.max_magnitude = max_magnitude;
  return key;
}

Value string_list_value(const std::vector<std::string>& items) {
  std::vector<Value> out;
  for (const auto& s : items) out.push_back(Value::string(s));
  return Value::make_list(std::move(out));
}

}  // namespace kforge::config::schema_parts
