// Resolving a raw config against the core schema and the keys of the components it selects (resolver.h).
#include "config/resolver.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "cmdline/did_you_mean.h"
#include "config/overrides.h"
#include "config/toml_reader.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"

namespace kforge::config {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

[[noreturn]] void fail(const Value& v, const std::string& where, const std::string& message) {
  throw sdk::ConfigError(
      fmt::format("{}: {} = {}: {}", v.source.describe(), where, v.is_null() ? "None" : v.to_toml_brief(), message));
}

std::string expected(const KeySpec& spec) {
  std::string what;
  switch (spec.type) {
    case KeyType::Bool: what = "a boolean (true or false)"; break;
    case KeyType::Int: what = "an integer"; break;
    case KeyType::Float: what = "a number"; break;
    case KeyType::String: what = "a string"; break;
    case KeyType::IntList: what = "a list of integers"; break;
    case KeyType::FloatList: what = "a list of numbers"; break;
    case KeyType::StringList: what = "a list of strings"; break;
    case KeyType::Table: what = "a table"; break;
    case KeyType::TableList: what = "an array of tables"; break;
    case KeyType::Dict: what = "a table of name = number"; break;
  }
  if (spec.nullable) what += " or None";
  return "expected " + what;
}

bool from_command_line(const Value& v) { return v.source.origin == "command line"; }

Value resolve_table(const Value* raw, const SectionSpec& spec, const std::string& path, const Catalog& catalog);

// A number of an Int or Float key: finite and within the key's bound, so that no later conversion
// (to int, to milliseconds, a product of two keys) overflows.
Value in_range(Value v, const KeySpec& spec, const std::string& where) {
  const double x = v.as_number();
  if (!std::isfinite(x)) fail(v, where, "must be a finite number (inf and nan are refused)");
  if (std::fabs(x) > spec.max_magnitude) {
    const auto bound = static_cast<int64_t>(spec.max_magnitude);
    fail(v, where, fmt::format("out of range: must be between -{} and {}", bound, bound));
  }
  const bool below = spec.min && (spec.min_excluded ? x <= *spec.min : x < *spec.min);
  const bool above = spec.max && (spec.max_excluded ? x >= *spec.max : x > *spec.max);
  if (below || above) {
    fail(v, where,
         spec.min && spec.max ? fmt::format("must be in {}{}, {}{}", spec.min_excluded ? '(' : '[', *spec.min,
                                            *spec.max, spec.max_excluded ? ')' : ']')
         : spec.min           ? fmt::format("must be {} {}", spec.min_excluded ? ">" : ">=", *spec.min)
                              : fmt::format("must be {} {}", spec.max_excluded ? "<" : "<=", *spec.max));
  }
  return v;
}

Value coerce_scalar(const Value& v, const KeySpec& spec, const std::string& where) {
  switch (spec.type) {
    case KeyType::Bool:
      if (v.type == Value::Type::Bool) return v;
      if (v.type == Value::Type::String && from_command_line(v)) {
        for (const char* t : {"1", "yes", "on"}) {
          if (v.s == t) return Value::boolean(true, v.source);
        }
        for (const char* f : {"0", "no", "off"}) {
          if (v.s == f) return Value::boolean(false, v.source);
        }
      }
      if (v.type == Value::Type::Int && from_command_line(v) && (v.i == 0 || v.i == 1)) {
        return Value::boolean(v.i == 1, v.source);
      }
      break;
    case KeyType::Int:
      if (v.type == Value::Type::Int) return in_range(v, spec, where);
      if (v.type == Value::Type::Float && std::floor(v.f) == v.f && std::fabs(v.f) < 9.2e18 && from_command_line(v)) {
        return in_range(Value::integer(static_cast<int64_t>(v.f), v.source), spec, where);
      }
      break;
    case KeyType::Float:
      if (v.type == Value::Type::Float) return in_range(v, spec, where);
      if (v.type == Value::Type::Int) return in_range(Value::floating(static_cast<double>(v.i), v.source), spec, where);
      break;
    case KeyType::String:
      if (v.type == Value::Type::String) {
        if (!spec.choices.empty() &&
            std::find(spec.choices.begin(), spec.choices.end(), v.s) == spec.choices.end()) {
          fail(v, where,
               fmt::format("allowed values are {}.{}", join(spec.choices), cmdline::did_you_mean(v.s, spec.choices)));
        }
        return v;
      }
      if (from_command_line(v) && (v.type == Value::Type::Int || v.type == Value::Type::Float ||
                                   v.type == Value::Type::Bool)) {
        return coerce_scalar(Value::string(v.s, v.source), spec, where);
      }
      break;
    default: break;
  }
  fail(v, where, expected(spec) + (spec.choices.empty() ? "" : " (one of " + join(spec.choices) + ")"));
}

Value coerce_list(const Value& v, const KeySpec& spec, const std::string& where) {
  KeySpec item = spec;
  item.nullable = false;
  item.type = spec.type == KeyType::IntList ? KeyType::Int
              : spec.type == KeyType::FloatList ? KeyType::Float
                                                : KeyType::String;
  if (v.type != Value::Type::List) {
    // A bare scalar for a list key means a one-element list (KempnerForge does the same).
    if (v.type == Value::Type::Table) fail(v, where, expected(spec));
    return Value::make_list({coerce_scalar(v, item, where)}, v.source);
  }
  Value out = Value::make_list({}, v.source);
  for (size_t k = 0; k < v.list.size(); ++k) {
    out.list.push_back(coerce_scalar(v.list[k], item, fmt::format("{}[{}]", where, k)));
  }
  return out;
}

// A table of name = value (anneal_weights, moma_experts_per_modality, module_patterns).
Value coerce_dict(const Value& v, const KeySpec& spec, const std::string& where) {
  if (!v.is_table()) fail(v, where, expected(spec));
  Value out = Value::make_table(v.source);
  KeySpec item{"", spec.item};
  item.max_magnitude = spec.max_magnitude;
  // By name: TOML tables have no order (toml++ iterates them sorted), so neither do dicts. The keys of
  // a table are unique, so each entry is appended without a lookup (linear time in a huge dict).
  std::vector<const std::pair<std::string, Value>*> entries;
  entries.reserve(v.table.size());
  for (const auto& entry : v.table) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  out.table.reserve(entries.size());
  for (const auto* entry : entries) {
    const auto& [k, child] = *entry;
    const std::string child_where = where + "." + k;
    if (spec.item == KeyType::StringList) {
      if (child.type != Value::Type::List) fail(child, child_where, expected(item));
      out.table.emplace_back(k, coerce_list(child, item, child_where));
    } else {
      out.table.emplace_back(k, coerce_scalar(child, item, child_where));
    }
  }
  return out;
}

// "[model] dim" for a section key, "[data.datasets[0]] path" for nested ones.
std::string key_where(const std::string& path, const std::string& key) { return "[" + path + "] " + key; }

// `path` is the table holding the key ("model", "data.datasets[0]"); nested tables extend it.
Value coerce(const Value& v, const KeySpec& spec, const std::string& path, const Catalog& catalog) {
  const std::string where = key_where(path, spec.name);
  if (v.is_null()) {
    if (spec.nullable) return v;
    fail(v, where, expected(spec));
  }
  switch (spec.type) {
    case KeyType::IntList:
    case KeyType::FloatList:
    case KeyType::StringList: return coerce_list(v, spec, where);
    case KeyType::Table:
      if (!v.is_table()) fail(v, where, expected(spec));
      return resolve_table(&v, *spec.sub, path + "." + spec.name, catalog);
    case KeyType::TableList: {
      if (v.type != Value::Type::List) fail(v, where, expected(spec));
      Value out = Value::make_list({}, v.source);
      for (size_t k = 0; k < v.list.size(); ++k) {
        const std::string item_path = fmt::format("{}.{}[{}]", path, spec.name, k);
        if (!v.list[k].is_table()) fail(v.list[k], "[" + item_path + "]", "expected a table");
        out.list.push_back(resolve_table(&v.list[k], *spec.sub, item_path, catalog));
      }
      return out;
    }
    case KeyType::Dict: return coerce_dict(v, spec, where);
    default: return coerce_scalar(v, spec, where);
  }
}

std::string unknown_key_message(const std::string& key, const SectionSpec& spec, const std::string& path,
                                const Catalog& catalog) {
  const std::string valid = join(spec.key_names());
  for (const auto& [name, why] : spec.hints) {
    if (name == key) return fmt::format("key '{}' is not valid in [{}]: {}. Valid keys: {}.", key, path, why, valid);
  }
  // A key that a component of this section's kind declares, but that component is not selected.
  for (const ComponentKeys& c : catalog) {
    const sdk::KindInfo* slot = sdk::find_kind(c.kind);
    if (slot == nullptr || path != slot->section) continue;
    for (const KeySpec& k : c.keys) {
      if (k.name != key) continue;
      const std::string how = slot->multiple
                                  ? fmt::format("add \"{}\" to [{}] {}", c.name, slot->section, slot->selector)
                                  : fmt::format("set [{}] {} = \"{}\"", slot->section, slot->selector, c.name);
      return fmt::format("unknown key '{}' in [{}]: it is accepted by {} '{}' ({}), which this config does not "
                         "select ({} to use it). Valid keys: {}.",
                         key, path, c.kind, c.name, c.file, how, valid);
    }
  }
  // A key of another section, e.g. [train] lr: it is [optimizer] lr.
  std::vector<const SectionSpec*> homes;
  for (const SectionSpec& other : core_schema()) {
    if (other.name != path && other.find(key) != nullptr) homes.push_back(&other);
  }
  if (!homes.empty()) {
    std::string where;
    for (const SectionSpec* home : homes) {
      where += fmt::format("{}[{}] ({}: {})", where.empty() ? "" : " or ", home->name, key, home->find(key)->doc);
    }
    return fmt::format("unknown key '{}' in [{}]: it belongs to {}. Move it there (on the command line, e.g. "
                       "--{}.{}=VALUE). Valid keys: {}.",
                       key, path, where, homes.front()->name, key, valid);
  }
  return fmt::format("unknown key '{}' in [{}]. Valid keys: {}.{}", key, path, valid,
                     cmdline::did_you_mean(key, spec.key_names()));
}

Value resolve_table(const Value* raw, const SectionSpec& spec, const std::string& path, const Catalog& catalog) {
  Value out = Value::make_table(raw != nullptr ? raw->source : Source{});
  if (raw != nullptr) {
    for (const auto& [key, value] : raw->table) {
      const KeySpec* k = spec.find(key);
      if (k == nullptr) {
        throw sdk::ConfigError(value.source.describe() + ": " + unknown_key_message(key, spec, path, catalog));
      }
      out.set(key, coerce(value, *k, path, catalog));
    }
  }
  for (const KeySpec& k : spec.keys) {
    if (k.required() && out.find(k.name) == nullptr) {
      throw sdk::ConfigError(fmt::format("{}: [{}] {} is required ({}) and has no default",
                                         raw != nullptr ? raw->source.describe() : "default", path, k.name, k.doc));
    }
  }
  // Defaults, in schema order, for keys not given.
  Value ordered = Value::make_table(out.source);
  for (const KeySpec& k : spec.keys) {
    Value* given = out.find(k.name);
    ordered.set(k.name, given != nullptr ? Value(std::move(*given)) : k.default_value);
  }
  return ordered;
}

// The components of `slot`'s kind that `section_value` (a raw or resolved table of the slot's
// section, or null) enables through their enabled_by key, in catalog order.
std::vector<std::string> enabled_names(const Value* section_value, const sdk::KindInfo& slot, const Catalog& catalog) {
  std::vector<std::string> names;
  if (!slot.multiple || section_value == nullptr || !section_value->is_table()) return names;
  for (const ComponentKeys& c : catalog) {
    if (c.kind != slot.name || c.enabled_by.empty()) continue;
    const Value* on = section_value->find(c.enabled_by);
    if (on != nullptr && on->type == Value::Type::Bool && on->b) names.push_back(c.name);
  }
  return names;
}

std::vector<std::string> selected_names(const Value& raw, const sdk::KindInfo& slot, const SectionSpec& section,
                                        const Catalog& catalog, const Value** where_value) {
  const Value* sec = raw.find(slot.section);
  const Value* v = sec != nullptr ? sec->find(slot.selector) : nullptr;
  const KeySpec* spec = section.find(slot.selector);
  *where_value = v;
  const Value& chosen = v != nullptr ? *v : spec->default_value;
  std::vector<std::string> names;
  // A selector whose default is "none" ([time_embedding] type) selects no component with it.
  const bool none_selects_nothing = spec->default_value.type == Value::Type::String && spec->default_value.s == "none";
  if (chosen.type == Value::Type::String && !(none_selects_nothing && chosen.s == "none")) names.push_back(chosen.s);
  for (const Value& item : chosen.list) {
    if (item.type == Value::Type::String) names.push_back(item.s);
  }
  for (std::string& name : enabled_names(sec, slot, catalog)) names.push_back(std::move(name));
  return names;
}

// Adds the components that their enabled_by keys select to the resolved selector lists, so the
// resolved config names every component that runs; an enabling key set true that no loaded
// component answers is an error.
void add_enabled_components(Value& resolved, const std::vector<SectionSpec>& schema, const Catalog& catalog) {
  for (const SectionSpec& spec : schema) {
    Value* section = resolved.find(spec.name);
    if (section == nullptr) continue;
    for (const KeySpec& key : spec.keys) {
      const Value* on = section->find(key.name);
      if (!key.selects_component || on == nullptr || on->type != Value::Type::Bool || !on->b) continue;
      const bool answered = std::any_of(catalog.begin(), catalog.end(), [&](const ComponentKeys& c) {
        const sdk::KindInfo* slot = sdk::find_kind(c.kind);
        return c.enabled_by == key.name && slot != nullptr && slot->section == spec.name;
      });
      if (!answered) {
        throw sdk::ConfigError(
            fmt::format("{}: [{}] {} = true, but no loaded plugin component is enabled by it (a component declares "
                        "enabled_by(\"{}\")); check --plugin-dir, or set it to false",
                        on->source.describe(), spec.name, key.name, key.name));
      }
    }
  }
  for (const sdk::KindInfo& slot : sdk::kKinds) {
    Value* section = resolved.find(slot.section);
    Value* list = section != nullptr ? section->find(slot.selector) : nullptr;
    if (list == nullptr || list->type != Value::Type::List) continue;
    for (const std::string& name : enabled_names(section, slot, catalog)) {
      const bool listed = std::any_of(list->list.begin(), list->list.end(), [&](const Value& item) {
        return item.type == Value::Type::String && item.s == name;
      });
      if (!listed) list->list.push_back(Value::string(name));
    }
  }
}

// Whether a config (raw tree) has section `spec`: it is not optional, given, or implied by a given one ([adapter]
// by [vlm]).
bool config_has_section(const Value& raw, const SectionSpec& spec) {
  return !spec.optional || raw.find(spec.name) != nullptr ||
         (!spec.implied_by.empty() && raw.find(spec.implied_by) != nullptr);
}

const SectionSpec* core_section(const std::string& name) {
  for (const SectionSpec& s : core_schema()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// Lays the command-line tree over the file's the way KempnerForge's loader does: sections and
// sub-sections ([checkpoint.dyn_ckpt_window]) merge key by key; every other value, dicts and
// lists (of tables) included, is replaced wholesale.
void overlay(Value& base, const Value& over, const SectionSpec* spec) {
  for (const auto& [key, value] : over.table) {
    Value* existing = base.find(key);
    const KeySpec* k = spec != nullptr ? spec->find(key) : nullptr;
    if (existing != nullptr && existing->is_table() && value.is_table() && k != nullptr && k->type == KeyType::Table) {
      overlay(*existing, value, k->sub);
    } else {
      base.set(key, value);
    }
  }
}

// Whether the raw config asks for pipeline parallelism ([distributed] pp > 1).
bool pipelined(const Value& raw) {
  const Value* d = raw.find("distributed");
  const Value* pp = d != nullptr && d->is_table() ? d->find("pp") : nullptr;
  return pp != nullptr && pp->type == Value::Type::Int && pp->i > 1;
}

KeySpec* find_key(SectionSpec& section, const std::string& name) {
  for (KeySpec& k : section.keys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

// Whether a component's `declared` key adds entries to the section's dict key `own` (abi.h): both dicts of one value
// type.
bool adds_entries(const KeySpec& own, const KeySpec& declared) {
  return own.type == KeyType::Dict && declared.type == KeyType::Dict && own.item == declared.item;
}

// `entries`' entries into the dict `dict` (an entry of the same name replaced), sorted by name as every dict is.
void add_entries(Value& dict, const Value& entries) {
  for (const auto& [name, value] : entries.table) dict.set(name, value);
  std::sort(dict.table.begin(), dict.table.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

// Hints for the keys of the components of `selected`'s kind and plugin that the config does not select: each
// belongs to the selection naming its component (a third party's component's key is named by its file instead).
void add_sibling_hints(SectionSpec& section, const sdk::KindInfo& slot, const ComponentKeys& selected,
                       const Catalog& catalog) {
  for (const ComponentKeys& c : catalog) {
    if (c.kind != selected.kind || c.file != selected.file || c.name == selected.name) continue;
    for (const KeySpec& k : c.keys) {
      if (section.find(k.name) != nullptr) continue;
      section.hints.emplace_back(
          k.name, fmt::format("it belongs to [{0}] {1} = \"{2}\", and this config has {1} = \"{3}\". Set {1} = "
                              "\"{2}\" or remove the key",
                              slot.section, slot.selector, c.name, selected.name));
    }
  }
}

}  // namespace

Value read_raw_config(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  return apply_overrides(file.empty() ? Value::make_table() : read_toml_file(file), overrides);
}

Value apply_overrides(Value raw, const std::vector<std::string>& overrides) {
  // Overrides build their own tree first (later ones win, nested keys merge), as KempnerForge's
  // _parse_cli_overrides does, then that tree is laid over the file.
  Value cli = Value::make_table();
  for (const auto& arg : overrides) apply_override(cli, arg);
  for (const auto& [section, value] : cli.table) {
    Value* existing = raw.find(section);
    if (existing != nullptr && existing->is_table() && value.is_table()) {
      overlay(*existing, value, core_section(section));
    } else {
      raw.set(section, value);
    }
  }
  return raw;
}

namespace {

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + separator.size();
  }
}

// One end of a declared range ("" for an open end).
std::optional<double> range_end(const std::string& text, const DeclaredKey& key, const std::string& owner) {
  if (text.empty()) return std::nullopt;
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(x)) {
    throw sdk::Error(fmt::format("{} declares key '{}' with allowed '{}', whose end '{}' is not a number", owner,
                                 key.name, key.allowed, text));
  }
  return x;
}

// The allowed values of a declared key into its spec: a string key's choices, a number key's range.
void apply_allowed(KeySpec& spec, const DeclaredKey& key, const std::string& owner) {
  if (key.allowed.empty()) return;
  if (spec.type == KeyType::String) {
    spec.choices = split(key.allowed, "|");
    return;
  }
  const std::vector<std::string> ends = split(key.allowed, "..");
  if ((spec.type != KeyType::Int && spec.type != KeyType::Float) || ends.size() != 2) {
    throw sdk::Error(fmt::format("{} declares key '{}' with allowed '{}': only a string key takes values (\"a|b\") "
                                 "and only an int or float key a range (\"MIN..MAX\", either end may be left out)",
                                 owner, key.name, key.allowed));
  }
  std::string low = ends[0], high = ends[1];
  spec.min_excluded = !low.empty() && low.back() == '<';
  spec.max_excluded = !high.empty() && high.front() == '<';
  if (spec.min_excluded) low.pop_back();
  if (spec.max_excluded) high.erase(0, 1);
  spec.min = range_end(low, key, owner);
  spec.max = range_end(high, key, owner);
}

}  // namespace

KeySpec declared_key_spec(const DeclaredKey& key, const std::string& owner) {
  const auto [type, item] = parse_key_type(key.type);
  KeySpec spec{key.name, type};
  spec.item = item;
  spec.doc = key.doc;
  spec.owner = owner;
  if (key.support == Support::Unset) {
    throw sdk::Error(fmt::format("{} declares key '{}' with an unknown status (allowed: KFORGE_KEY_HONOURED, "
                                 "KFORGE_KEY_REFUSED, KFORGE_KEY_NO_EFFECT)",
                                 owner, key.name));
  }
  spec.support = key.support;
  spec.why = key.reason;
  apply_allowed(spec, key, owner);
  Value def;
  try {
    def = key.default_value.empty() ? Value::null() : *read_toml_string("v = " + key.default_value, owner).find("v");
  } catch (const sdk::ConfigError& e) {
    throw sdk::Error(fmt::format("{} declares key '{}' with default '{}', which is not a TOML literal: {}", owner,
                                 key.name, key.default_value, e.what()));
  }
  def.source = Source{};
  spec.nullable = def.is_null();
  spec.default_value = def.is_null() ? def : coerce(def, spec, owner + " default", {});
  return spec;
}

KeySpec plugin_key_spec(const std::string& name, const std::string& type, const std::string& default_literal,
                        const std::string& doc, const std::string& owner) {
  return declared_key_spec(DeclaredKey{name, type, default_literal, doc}, owner);
}

std::vector<const ComponentKeys*> selected_components(const Value& raw, const Catalog& catalog) {
  std::vector<const ComponentKeys*> selected;
  for (const sdk::KindInfo& slot : sdk::kKinds) {
    const SectionSpec* section = core_section(slot.section);
    // A kind whose section the config does not have ([vision_encoder] in a text run) selects nothing.
    if (!config_has_section(raw, *section)) continue;
    const Value* where_value = nullptr;
    std::vector<std::string> done;
    for (const std::string& name : selected_names(raw, slot, *section, catalog, &where_value)) {
      if (std::find(done.begin(), done.end(), name) != done.end()) continue;  // listed twice
      done.push_back(name);
      const ComponentKeys* found = nullptr;
      std::vector<std::string> known_names;
      std::string known;
      for (const ComponentKeys& c : catalog) {
        if (c.kind != slot.name) continue;
        known_names.push_back(c.name);
        known += fmt::format("{}{} ({} {})", known.empty() ? "" : ", ", c.name, c.file, c.version);
        if (c.name == name) found = &c;
      }
      if (found == nullptr) {
        // Routers only matter for MoE models; a dense model may name one that is not loaded.
        if (std::string(slot.name) == "router") continue;
        // Pipeline schedules only matter with pipeline parallelism: without it, a plugin set with no schedule at all
        // may name one (the default).
        if (std::string(slot.name) == "pipeline_schedule" && !pipelined(raw) && known_names.empty()) continue;
        const std::string origin = where_value != nullptr ? where_value->source.describe() : "default";
        throw sdk::ConfigError(fmt::format("{}: [{}] {} = \"{}\": no {} '{}' in the loaded plugins. Known: {}.{}",
                                           origin, slot.section, slot.selector, name, slot.name, name,
                                           known.empty() ? "(none; check --plugin-dir)" : known,
                                           cmdline::did_you_mean(name, known_names)));
      }
      selected.push_back(found);
    }
  }
  return selected;
}

namespace {

// The section of `schema` that holds the keys of `kind`'s components.
SectionSpec& section_of_kind(std::vector<SectionSpec>& schema, const sdk::KindInfo& kind) {
  return *std::find_if(schema.begin(), schema.end(), [&](const SectionSpec& s) { return s.name == kind.section; });
}

// `keys` of `c` into its kind's section `section`: a dict key the section has gains their entries, any other key it
// has is a clash.
void add_component_keys(SectionSpec& section, const ComponentKeys& c, const std::vector<KeySpec>& keys) {
  for (const KeySpec& key : keys) {
    if (KeySpec* clash = find_key(section, key.name)) {
      if (!adds_entries(*clash, key)) {
        throw sdk::ConfigError(fmt::format("{} '{}' ({}) declares key '{}' in [{}], which {} already defines", c.kind,
                                           c.name, c.file, key.name, section.name,
                                           clash->owner.empty() ? "kforge" : clash->owner));
      }
      add_entries(clash->default_value, key.default_value);
      continue;
    }
    section.keys.push_back(key);
  }
}

}  // namespace

std::vector<SectionSpec> effective_schema(const Value& raw, const Catalog& catalog) {
  std::vector<SectionSpec> schema = core_schema();
  // The keys of the loaded components that are keys of their kind's section, selected or not (abi.h).
  for (const ComponentKeys& c : catalog) {
    add_component_keys(section_of_kind(schema, *sdk::find_kind(c.kind)), c, c.section_keys);
  }
  for (const ComponentKeys* found : selected_components(raw, catalog)) {
    const sdk::KindInfo& slot = *sdk::find_kind(found->kind);
    SectionSpec& section = section_of_kind(schema, slot);
    add_component_keys(section, *found, found->keys);
    if (!slot.multiple) add_sibling_hints(section, slot, *found, catalog);
  }
  return schema;
}

Value resolve(const Value& raw, const std::vector<SectionSpec>& schema, const Catalog& catalog) {
  std::vector<std::string> names;
  for (const SectionSpec& s : schema) names.push_back(s.name);
  for (const auto& [key, value] : raw.table) {
    if (std::find(names.begin(), names.end(), key) == names.end()) {
      throw sdk::ConfigError(fmt::format("{}: unknown section [{}]. Valid sections: {}.{}", value.source.describe(),
                                         key, join(names), cmdline::did_you_mean(key, names)));
    }
    if (!value.is_table()) {
      throw sdk::ConfigError(fmt::format("{}: '{}' must be a table ([{}] section), not a {}", value.source.describe(),
                                         key, key, type_name(value.type)));
    }
  }
  Value out = Value::make_table();
  for (const SectionSpec& spec : schema) {
    if (!config_has_section(raw, spec)) continue;
    out.set(spec.name, resolve_table(raw.find(spec.name), spec, spec.name, catalog));
  }
  add_enabled_components(out, schema, catalog);
  return out;
}

}  // namespace kforge::config
