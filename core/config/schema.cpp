// The schema's assembly (core_schema in document order), section lookups and the key type names.
#include "config/schema.h"

#include <utility>

#include "config/schema_sections.h"
#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

// Each key type with its plugin-metadata name.
constexpr std::pair<KeyType, const char*> kKeyTypeNames[] = {{KeyType::Bool, "bool"},
                                                             {KeyType::Int, "int"},
                                                             {KeyType::Float, "float"},
                                                             {KeyType::String, "string"},
                                                             {KeyType::IntList, "int_list"},
                                                             {KeyType::FloatList, "float_list"},
                                                             {KeyType::StringList, "string_list"},
                                                             {KeyType::Table, "table"},
                                                             {KeyType::TableList, "table_list"},
                                                             {KeyType::Dict, "dict"}};

// The types a plugin may declare (kforge_config_key.type): a dict's name says its values' type.
struct DeclarableType {
  const char* name;
  KeyType type, item;
};
constexpr DeclarableType kDeclarableTypes[] = {{"bool", KeyType::Bool, KeyType::Float},
                                               {"int", KeyType::Int, KeyType::Float},
                                               {"float", KeyType::Float, KeyType::Float},
                                               {"string", KeyType::String, KeyType::Float},
                                               {"int_list", KeyType::IntList, KeyType::Float},
                                               {"float_list", KeyType::FloatList, KeyType::Float},
                                               {"string_list", KeyType::StringList, KeyType::Float},
                                               {"int_dict", KeyType::Dict, KeyType::Int},
                                               {"string_list_dict", KeyType::Dict, KeyType::StringList}};

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
  for (const auto& [t, name] : kKeyTypeNames) {
    if (t == type) return name;
  }
  return "?";
}

std::pair<KeyType, KeyType> parse_key_type(const std::string& name) {
  std::string allowed;
  for (const DeclarableType& t : kDeclarableTypes) {
    if (name == t.name) return {t.type, t.item};
    allowed += (allowed.empty() ? "" : ", ") + std::string(t.name);
  }
  throw sdk::Error("unknown config key type '" + name + "' (allowed: " + allowed + ")");
}

}  // namespace kforge::config
