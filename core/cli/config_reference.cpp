// config_reference_markdown: kforge's key declarations (schema, support table) and the plugins' (kforge_config_key
// lists, read keys) as Markdown tables, one per section and nested table.
#include "cli/config_reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "config/key_support.h"
#include "config/limits.h"
#include "config/resolver.h"
#include "config/schema.h"
#include "kforge/sdk/kinds.h"
#include "plugins/catalog.h"

namespace kforge::cli {
namespace {

// A component as the reference names it, with the keys it declares.
struct Declarer {
  std::string kind, name, plugin;
  const plugins::ComponentMeta* meta;

  std::string label() const { return fmt::format("{} `{}` ({})", kind, name, plugin); }
  bool operator<(const Declarer& o) const { return std::tie(kind, name, plugin) < std::tie(o.kind, o.name, o.plugin); }
};

std::string cell(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string code(const std::string& text) { return text.empty() ? "" : "`" + cell(text) + "`"; }

std::string type_of(const config::KeySpec& k) {
  std::string type = config::key_type_name(k.type);
  if (k.type == config::KeyType::Dict) type += fmt::format(" of {}", config::key_type_name(k.item));
  return k.nullable ? type + " or None" : type;
}

std::string number(double x) { return fmt::format("{}", x); }

std::string allowed_of(const config::KeySpec& k) {
  std::vector<std::string> parts;
  for (const std::string& c : k.choices) parts.push_back(code(c));
  if (k.min && k.max && !k.min_excluded && !k.max_excluded) {
    parts.push_back(fmt::format("{} to {}", number(*k.min), number(*k.max)));
  } else if (k.min && k.max) {
    parts.push_back(fmt::format("{}{}, {}{}", k.min_excluded ? '(' : '[', number(*k.min), number(*k.max),
                                k.max_excluded ? ')' : ']'));
  } else if (k.min) {
    parts.push_back((k.min_excluded ? "> " : ">= ") + number(*k.min));
  } else if (k.max) {
    parts.push_back((k.max_excluded ? "< " : "<= ") + number(*k.max));
  }
  if (k.max_magnitude != config::kMaxConfigNumber) parts.push_back(fmt::format("magnitude <= {}", number(k.max_magnitude)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string status_of(config::Support support, const std::string& why) {
  switch (support) {
    case config::Support::Honoured: return "honoured";
    case config::Support::Refused: return "refused: " + why;
    case config::Support::NoEffect: return "no effect: " + why;
    case config::Support::Unset: break;
  }
  return "undecided";
}

std::string default_of(const config::KeySpec& k) {
  if (k.default_value.is_null()) return k.required() ? "required" : "unset";
  return code(k.default_value.to_toml());
}

void table_head(std::string& out) {
  out += "| Key | Type | Default | Allowed | Status | Declared by | Read by | Description |\n";
  out += "|---|---|---|---|---|---|---|---|\n";
}

void row(std::string& out, const config::KeySpec& k, const std::string& status, const std::string& declared_by,
         const std::string& read_by) {
  out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", k.name, type_of(k), default_of(k), allowed_of(k),
                     cell(status), declared_by, read_by, cell(k.doc));
}

class Reference {
 public:
  explicit Reference(const plugins::PluginSet& set) {
    for (const plugins::PluginFile& f : set.files()) {
      if (!f.ok) continue;
      for (const plugins::ComponentMeta& c : f.components) declarers_.push_back({c.kind, c.name, f.name, &c});
    }
    std::sort(declarers_.begin(), declarers_.end());
  }

  std::string markdown() const {
    std::string out =
        "# Configuration reference\n\n"
        "Every section and key a kforge config takes: kforge's own and those of the plugins this reference was "
        "generated with (`kforge config reference --format markdown`). A key's status says what this kforge does "
        "with it: honoured, refused (a value other than the default refuses the run) or no effect (a value other "
        "than the default warns). \"Read by\" lists the components that declare they read a key kforge declares.\n";
    for (const config::SectionSpec& section : config::core_schema()) write_table(out, section, section.name, true);
    return out;
  }

 private:
  // The components of `section`'s kind that declare they read `key` (kforge_config_key without a type).
  std::string readers(const std::string& section, const std::string& key) const {
    std::vector<std::string> names;
    for (const Declarer& d : declarers_) {
      const sdk::KindInfo* kind = sdk::find_kind(d.kind);
      if (kind == nullptr || kind->section != section) continue;
      const auto& reads = d.meta->core_keys;
      if (std::find(reads.begin(), reads.end(), key) != reads.end()) names.push_back(d.label());
    }
    return fmt::format("{}", fmt::join(names, ", "));
  }

  void write_table(std::string& out, const config::SectionSpec& spec, const std::string& path, bool top) const {
    out += fmt::format("\n## [{}]\n\n", path);
    if (!spec.doc.empty()) out += spec.doc + (spec.optional ? " (optional section)" : "") + "\n\n";
    table_head(out);
    std::vector<const config::KeySpec*> nested;
    for (const config::KeySpec& k : spec.keys) {
      const config::KeySupport s = config::key_support(spec.name, k.name);
      row(out, k, status_of(s.support, s.why), "kforge", top ? readers(path, k.name) : "");
      if (k.sub != nullptr) nested.push_back(&k);
    }
    if (top) write_component_keys(out, path);
    for (const config::KeySpec* k : nested) write_table(out, *k->sub, path + "." + k->name, false);
  }

  // The keys the components of the section's kind declare as their own, each component's in declared order.
  void write_component_keys(std::string& out, const std::string& section) const {
    for (const Declarer& d : declarers_) {
      const sdk::KindInfo* kind = sdk::find_kind(d.kind);
      if (kind == nullptr || kind->section != section) continue;
      for (const plugins::ConfigKeyMeta& key : d.meta->keys) {
        const config::KeySpec k =
            config::declared_key_spec(plugins::declared_key(key), d.kind + " '" + d.name + "'");
        row(out, k, status_of(k.support, k.why), d.label(), "");
      }
    }
  }

  std::vector<Declarer> declarers_;
};

}  // namespace

std::string config_reference_markdown(const plugins::PluginSet& set) { return Reference(set).markdown(); }

}  // namespace kforge::cli
