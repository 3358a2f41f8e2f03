// The schema's assembly (core_schema in document order), section lookups and the key type names.
#include "config/schema.h"

#include "config/schema_sections.h"
#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

std::vector<SectionSpec> build_schema() {
  std::vector<SectionSpec> schema;
  for (auto group : {schema_parts::model_sections, schema_parts::training_sections, schema_parts::data_sections,
                     schema_parts::runtime_sections, schema_parts::multimodal_sections}) {
    for (SectionSpec& section : group()) schema.push_back(std::move(section));
  }
  return schema;
}

}  // namespace

const KeySpec* SectionSpec::find(const std::string& key) const {
  for (const auto& k : keys) {
    if (k.name == key) return &k;
  }
  return nullptr;
}

std::vector<std::string> SectionSpec::key_names() const {
  std::vector<std::string> names;
  for (const auto& k : keys) names.push_back(k.name);
  return names;
}

const std::vector<SectionSpec>& core_schema() {
  static const std::vector<SectionSpec> schema = build_schema();
  return schema;
}

const char* key_type_name(KeyType type) {
  switch (type) {
    case KeyType::Bool:
      return "bool";
    case KeyType::Int:
      return "int";
    case KeyType::Float:
      return "float";
    case KeyType::String:
      return "string";
    case KeyType::IntList:
      return "int_list";
    case KeyType::FloatList:
      return "float_list";
    case KeyType::StringList:
      return "string_list";
    case KeyType::Table:
      return "table";
    case KeyType::TableList:
      return "table_list";
    case KeyType::Dict:
      return "dict";
  }
  return "?";
}

KeyType parse_key_type(const std::string& name) {
  for (KeyType t : {KeyType::Bool, KeyType::Int, KeyType::Float, KeyType::String, KeyType::IntList, KeyType::FloatList,
                    KeyType::StringList}) {
    if (name == key_type_name(t)) return t;
  }
  throw sdk::Error("unknown config key type '" + name +
                   "' (allowed: bool, int, float, string, int_list, float_list, string_list)");
}

}  // namespace kforge::config
