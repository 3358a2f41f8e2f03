// check_support: walks the resolved config against the support table.
#include "config/support_check.h"

#include <fmt/format.h>

#include "config/key_support.h"
#include "config/schema.h"
#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

bool given(const Value& v) { return !v.source.origin.empty(); }

struct Findings {
  std::vector<std::string> refusals, warnings;
};

// The keys of one table (`spec` names it in the support table; `path` is how the user spells it).
void check_table(const Value& table, const SectionSpec& spec, const std::string& path, Findings& out) {
  for (const auto& [key, value] : table.table) {
    const KeySpec* k = spec.find(key);
    if (k == nullptr) continue;
    const KeySupport s = k->owner.empty() ? key_support(spec.name, key) : KeySupport{k->support, k->why, Value::null()};
    const Value& inert = s.inert.is_null() ? k->default_value : s.inert;
    const bool asks = value.to_toml() != inert.to_toml();
    const std::string where = fmt::format("{}: [{}] {} = {}", value.source.describe(), path, key,
                                          value.is_null() ? "None" : value.to_toml_brief());
    if (s.support == Support::Refused && asks) {
      out.refusals.push_back(fmt::format("{}: not implemented in this kforge: {}. Remove it or set {}", where, s.why,
                                         inert.is_null() ? "None" : inert.to_toml()));
    } else if (s.support == Support::NoEffect && asks && given(value)) {
      out.warnings.push_back(fmt::format("{}: has no effect in this kforge: {}", where, s.why));
    } else if (k->sub != nullptr && s.support == Support::Honoured) {
      if (value.is_table()) check_table(value, *k->sub, path + "." + key, out);
      for (size_t i = 0; i < value.list.size(); ++i) {
        check_table(value.list[i], *k->sub, fmt::format("{}.{}[{}]", path, key, i), out);
      }
    }
  }
}

}  // namespace

std::vector<std::string> check_support(const Value& resolved, const std::vector<SectionSpec>& schema) {
  Findings found;
  for (const SectionSpec& spec : schema) {
    const Value* table = resolved.find(spec.name);
    if (table != nullptr) check_table(*table, spec, spec.name, found);
  }
  if (!found.refusals.empty()) {
    std::string message =
        "this config asks for what this kforge does not implement, so the run is refused (it would train or save "
        "something other than the config says):";
    for (const std::string& r : found.refusals) message += "\n  " + r;
    throw sdk::ConfigError(message);
  }
  return found.warnings;
}

}  // namespace kforge::config
