// The resolved config a validation hook reads (config_rules.h), parsed from the host's JSON.
#include "kforge/sdk/config_rules.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace kforge::sdk {

namespace detail {
struct ConfigTree {
  nlohmann::json json;
};
}  // namespace detail

namespace {

std::string toml_of(const nlohmann::json& v) {
  if (v.is_null()) return "None";
  if (v.is_string()) return v.dump();
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) out += (out.empty() ? "" : ", ") + toml_of(item);
    return "[" + out + "]";
  }
  if (v.is_object()) {
    std::string out;
    for (const auto& [k, item] : v.items()) out += (out.empty() ? "" : ", ") + k + " = " + toml_of(item);
    return "{ " + out + " }";
  }
  return v.dump();
}

}  // namespace

RuleError::RuleError(std::string section, std::string key, const std::string& message)
    : Error(message), section_(std::move(section)), key_(std::move(key)) {}
RuleError::~RuleError() = default;

RuleSection::RuleSection(std::shared_ptr<const detail::ConfigTree> tree, std::string name)
    : tree_(std::move(tree)), name_(std::move(name)) {}

namespace {

const nlohmann::json& value_of(const detail::ConfigTree& tree, const std::string& section, const std::string& key) {
  const nlohmann::json& table = tree.json.at("config").at(section);
  const auto it = table.find(key);
  if (it == table.end()) throw Error("the resolved config has no [" + section + "] " + key);
  return *it;
}

template <class T>
T typed(const detail::ConfigTree& tree, const std::string& section, const std::string& key) {
  try {
    return value_of(tree, section, key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw Error("[" + section + "] " + key + " is not of the type the rule reads: " + e.what());
  }
}

}  // namespace

bool RuleSection::null(const std::string& key) const { return value_of(*tree_, name_, key).is_null(); }
bool RuleSection::b(const std::string& key) const { return typed<bool>(*tree_, name_, key); }
int64_t RuleSection::i(const std::string& key) const { return typed<int64_t>(*tree_, name_, key); }
double RuleSection::f(const std::string& key) const { return typed<double>(*tree_, name_, key); }
std::string RuleSection::s(const std::string& key) const { return typed<std::string>(*tree_, name_, key); }
std::vector<std::string> RuleSection::strings(const std::string& key) const {
  return typed<std::vector<std::string>>(*tree_, name_, key);
}
std::map<std::string, int64_t> RuleSection::int_dict(const std::string& key) const {
  return typed<std::map<std::string, int64_t>>(*tree_, name_, key);
}
std::string RuleSection::toml(const std::string& key) const { return toml_of(value_of(*tree_, name_, key)); }

void RuleSection::require(bool ok, const std::string& key, const std::string& message) const {
  if (!ok) throw RuleError(name_, key, message);
}
void RuleSection::positive(const std::string& key) const { require(f(key) > 0, key, "must be > 0"); }
void RuleSection::non_negative(const std::string& key) const { require(f(key) >= 0, key, "must be >= 0"); }
void RuleSection::fail(const std::string& message) const { throw RuleError(name_, "", message); }

ResolvedConfig::ResolvedConfig(const std::string& json) {
  auto tree = std::make_shared<detail::ConfigTree>();
  try {
    tree->json = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("the host's resolved config is not JSON: ") + e.what());
  }
  if (!tree->json.contains("config") || !tree->json.at("config").is_object()) {
    throw Error("the host's resolved config has no \"config\" object");
  }
  tree_ = std::move(tree);
}

int64_t ResolvedConfig::world_size() const { return tree_->json.value("world_size", int64_t{0}); }

bool ResolvedConfig::has(const std::string& section) const { return tree_->json.at("config").contains(section); }

RuleSection ResolvedConfig::section(const std::string& name) const {
  if (!has(name)) throw Error("the resolved config has no [" + name + "] section");
  return RuleSection(tree_, name);
}

namespace detail {

int run_rules(const char* config_json, char* out, size_t out_len, void (*rules)(const ResolvedConfig&)) noexcept {
  nlohmann::json error;
  try {
    rules(ResolvedConfig(config_json != nullptr ? config_json : ""));
    return 0;
  } catch (const RuleError& e) {
    error = {{"section", e.section()}, {"key", e.key()}, {"message", e.what()}};
  } catch (const std::exception& e) {
    error = {{"section", ""}, {"key", ""}, {"message", e.what()}};
  } catch (...) {
    error = {{"section", ""}, {"key", ""}, {"message", "unknown exception"}};
  }
  if (out != nullptr && out_len > 0) {
    try {
      std::snprintf(out, out_len, "%s", error.dump().c_str());
    } catch (...) {
      std::snprintf(out, out_len, "%s", "{}");
    }
  }
  return 1;
}

}  // namespace detail
}  // namespace kforge::sdk
