// declared_core_keys: resolves a component's declared core keys and enabling key against the core schema.
#include "plugins/declared_core_keys.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cmdline/did_you_mean.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"

namespace kforge::plugins {

namespace {

const sdk::KindInfo& kind_of(const ComponentMeta& c) {
  const sdk::KindInfo* kind = sdk::find_kind(c.kind);
  if (kind == nullptr) throw sdk::Error(fmt::format("{} '{}': unknown kind '{}'", c.kind, c.name, c.kind));
  return *kind;
}

const config::SectionSpec& core_section_of(const sdk::KindInfo& kind) {
  for (const config::SectionSpec& s : config::core_schema()) {
    if (s.name == kind.section) return s;
  }
  throw sdk::Error(fmt::format("the core schema has no [{}] section", kind.section));
}

}  // namespace

std::vector<config::KeySpec> declared_core_keys(const ComponentMeta& c) {
  const sdk::KindInfo* kind = &kind_of(c);
  const config::SectionSpec& section = core_section_of(*kind);
  std::vector<config::KeySpec> out;
  for (const std::string& name : c.core_keys) {
    const config::KeySpec* key = section.find(name);
    if (key == nullptr) {
      throw sdk::Error(fmt::format("{} '{}' declares core key '{}', which [{}] does not have.{}", c.kind, c.name, name,
                                   kind->section, cmdline::did_you_mean(name, section.key_names())));
    }
    out.push_back(*key);
  }
  return out;
}

void check_enabled_by(const ComponentMeta& c) {
  if (c.enabled_by.empty()) return;
  const sdk::KindInfo& kind = kind_of(c);
  if (!kind.multiple) {
    throw sdk::Error(
        fmt::format("{} '{}' declares enabled_by(\"{}\"), but a config selects exactly one {} ([{}] {}), "
                    "so no key can add it.",
                    c.kind, c.name, c.enabled_by, c.kind, kind.section, kind.selector));
  }
  const config::SectionSpec& section = core_section_of(kind);
  std::vector<std::string> enablers;
  for (const config::KeySpec& k : section.keys) {
    if (k.selects_component) enablers.push_back(k.name);
  }
  const config::KeySpec* key = section.find(c.enabled_by);
  if (key == nullptr || !key->selects_component) {
    throw sdk::Error(
        fmt::format("{} '{}' declares enabled_by(\"{}\"), which is not an enabling key of [{}] (those "
                    "are: {}).",
                    c.kind, c.name, c.enabled_by, kind.section,
                    enablers.empty() ? "none" : fmt::format("{}", fmt::join(enablers, ", "))));
  }
}

}  // namespace kforge::plugins
