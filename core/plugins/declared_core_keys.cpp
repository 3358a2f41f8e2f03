// declared_core_keys: resolves a component's declared core keys against the core schema.
#include "plugins/declared_core_keys.h"

#include <fmt/format.h>

#include "config/did_you_mean.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"

namespace kforge::plugins {

std::vector<const config::KeySpec*> declared_core_keys(const ComponentMeta& c) {
  const sdk::KindInfo* kind = sdk::find_kind(c.kind);
  if (kind == nullptr) throw sdk::Error(fmt::format("{} '{}': unknown kind '{}'", c.kind, c.name, c.kind));
  const config::SectionSpec* section = nullptr;
  for (const config::SectionSpec& s : config::core_schema()) {
    if (s.name == kind->section) section = &s;
  }
  if (section == nullptr) throw sdk::Error(fmt::format("the core schema has no [{}] section", kind->section));
  std::vector<const config::KeySpec*> out;
  for (const std::string& name : c.core_keys) {
    const config::KeySpec* key = section->find(name);
    if (key == nullptr) {
      throw sdk::Error(fmt::format("{} '{}' declares core key '{}', which [{}] does not have.{}", c.kind, c.name, name,
                                   kind->section, config::did_you_mean(name, section->key_names())));
    }
    out.push_back(key);
  }
  return out;
}

}  // namespace kforge::plugins
