#include "plugins/registry.h"

#include <fmt/format.h>

#include "cmdline/did_you_mean.h"
#include "kforge/sdk/error.h"

namespace kforge::plugins {

void Registry::register_all(PluginSet& set) {
  for (PluginFile& file : set.files()) {
    if (!file.ok) continue;
    current_ = &file;
    char err[2048] = {0};
    std::string failure;
    try {
      if (file.info->register_all(static_cast<sdk::Registrar*>(this), err, sizeof(err)) != 0) {
        failure = fmt::format("{}: register_all failed: {}. Fix the plugin's registration function.",
                              file.path.string(), err[0] != '\0' ? err : "(no message)");
      }
    } catch (const std::exception& e) {  // a plugin not built with KFORGE_PLUGIN may still throw
      failure = fmt::format("{}: register_all threw: {}", file.path.string(), e.what());
    }
    if (failure.empty()) {
      for (const ComponentMeta& c : file.components) {
        if (!find(c.kind, c.name)) {
          failure = fmt::format(
              "{}: declares {} '{}' in its metadata but register_all did not register it. Register "
              "it, or remove it from the component list.",
              file.path.string(), c.kind, c.name);
          break;
        }
      }
    }
    if (!failure.empty()) {
      file.refuse(failure);
      std::erase_if(entries_, [&](const auto& kv) { return kv.second.plugin == &file; });
    }
  }
  current_ = nullptr;
}

void Registry::add(const char* kind, const std::string& name, AnyFactory factory) {
  if (current_ == nullptr) {
    throw sdk::Error(fmt::format("{} '{}' registered outside a plugin's register_all", kind, name));
  }
  const ComponentMeta* meta = nullptr;
  for (const ComponentMeta& c : current_->components) {
    if (c.kind == kind && c.name == name) meta = &c;
  }
  if (meta == nullptr) {
    throw sdk::Error(fmt::format(
        "registers {} '{}', which its component metadata does not declare; add it to the list "
        "passed to KFORGE_PLUGIN",
        kind, name));
  }
  auto key = std::make_pair(std::string(kind), name);
  if (auto it = entries_.find(key); it != entries_.end()) {
    throw sdk::Error(fmt::format("registers {} '{}' twice (already registered by {})", kind, name,
                                 it->second.plugin->path.string()));
  }
  entries_.emplace(key, Entry{*meta, current_, std::move(factory)});
}

const Entry* Registry::find(const std::string& kind, const std::string& name) const {
  auto it = entries_.find({kind, name});
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<const Entry*> Registry::entries(const std::string& kind) const {
  std::vector<const Entry*> out;
  for (const auto& [key, entry] : entries_) {
    if (key.first == kind) out.push_back(&entry);
  }
  return out;
}

const Entry& Registry::get(const std::string& kind, const std::string& name, const std::string& where) const {
  if (const Entry* e = find(kind, name)) return *e;
  std::vector<std::string> names;
  std::string known;
  for (const Entry* e : entries(kind)) {
    names.push_back(e->meta.name);
    known += fmt::format("{}{} ({} {})", known.empty() ? "" : ", ", e->meta.name,
                         e->plugin->path.filename().string(), e->plugin->version);
  }
  throw sdk::ConfigError(fmt::format("{} = \"{}\": no {} '{}' in the loaded plugins. Known: {}.{}", where, name, kind,
                                     name, known.empty() ? "(none)" : known, cmdline::did_you_mean(name, names)));
}

}  // namespace kforge::plugins
