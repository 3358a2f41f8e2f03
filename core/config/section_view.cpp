#include "config/section_view.h"

#include <fmt/format.h>

#include "kforge/sdk/error.h"

namespace kforge::config {

SectionView::SectionView(std::string name, const Value& table) : name_(std::move(name)), table_(table) {}

bool SectionView::has(std::string_view key) const {
  const Value* v = table_.find(key);
  return v != nullptr && !v->is_null();
}

const Value& SectionView::get(std::string_view key, Value::Type type, const char* wanted) const {
  const Value* v = table_.find(key);
  if (v == nullptr || v->is_null()) {
    throw sdk::ConfigError(fmt::format("[{}] {} is not set (a component read a key it did not declare, or one "
                                       "whose value is None)",
                                       name_, key));
  }
  const bool number_ok = type == Value::Type::Float && v->type == Value::Type::Int;
  if (v->type != type && !number_ok) {
    throw sdk::ConfigError(
        fmt::format("[{}] {} = {} is a {}, read as {}", name_, key, v->to_toml_brief(), type_name(v->type), wanted));
  }
  return *v;
}

bool SectionView::get_bool(std::string_view key) const { return get(key, Value::Type::Bool, "bool").b; }
int64_t SectionView::get_int(std::string_view key) const { return get(key, Value::Type::Int, "int").i; }
double SectionView::get_float(std::string_view key) const { return get(key, Value::Type::Float, "float").as_number(); }
std::string SectionView::get_string(std::string_view key) const { return get(key, Value::Type::String, "string").s; }

std::vector<double> SectionView::get_float_list(std::string_view key) const {
  std::vector<double> out;
  for (const Value& v : get(key, Value::Type::List, "float_list").list) out.push_back(v.as_number());
  return out;
}
std::vector<int64_t> SectionView::get_int_list(std::string_view key) const {
  std::vector<int64_t> out;
  for (const Value& v : get(key, Value::Type::List, "int_list").list) out.push_back(v.i);
  return out;
}
std::vector<std::string> SectionView::get_string_list(std::string_view key) const {
  std::vector<std::string> out;
  for (const Value& v : get(key, Value::Type::List, "string_list").list) out.push_back(v.s);
  return out;
}

std::map<std::string, int64_t> SectionView::get_int_dict(std::string_view key) const {
  std::map<std::string, int64_t> out;
  for (const auto& [name, v] : get(key, Value::Type::Table, "int_dict").table) {
    if (v.type != Value::Type::Int) {
      throw sdk::ConfigError(
          fmt::format("[{}] {}.{} = {} is a {}, read as int", name_, key, name, v.to_toml_brief(), type_name(v.type)));
    }
    out[name] = v.i;
  }
  return out;
}

}  // namespace kforge::config
