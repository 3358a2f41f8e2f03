// kforge list-plugins: every component of every plugin found, and every refused file with its reason.
// Each listing is stored in the listing cache, from which the kforge front-end serves repeats.
#include <fmt/format.h>

#include <algorithm>
#include <cxxopts.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <vector>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "config/schema.h"
#include "kforge/sdk/kinds.h"
#include "listing/listing_cache.h"
#include "listing/loaded_libraries.h"
#include "plugins/capability_names.h"
#include "plugins/declared_core_keys.h"
#include "plugins/host.h"
#include "plugins/plugin_file.h"

namespace kforge::cli {
namespace {

std::string section_of(const std::string& kind) {
  const sdk::KindInfo* info = sdk::find_kind(kind);
  return info != nullptr ? info->section : "";
}

// One documented key, from the core schema or from a plugin's metadata.
struct KeyDoc {
  std::string name, type, default_value, doc;
};

// The core schema keys the component declares it reads; a refused file's may not resolve.
std::vector<KeyDoc> core_keys(const plugins::ComponentMeta& c) {
  std::vector<KeyDoc> out;
  try {
    for (const config::KeySpec& k : plugins::declared_core_keys(c)) {
      out.push_back(
          {k.name, config::key_type_name(k.type), k.default_value.is_null() ? "" : k.default_value.to_toml(), k.doc});
    }
  } catch (const std::exception&) {
    for (const std::string& name : c.core_keys) out.push_back({name, "", "", "not in the core schema"});
  }
  return out;
}

// A declared type as the core schema's keys name theirs ("int_dict" is a "dict"); a refused file's may not parse.
std::string type_name(const std::string& declared) {
  try {
    return config::key_type_name(config::parse_key_type(declared).first);
  } catch (const std::exception&) {
    return declared;
  }
}

std::vector<KeyDoc> plugin_keys(const plugins::ComponentMeta& c) {
  std::vector<KeyDoc> out;
  for (const auto& k : c.keys) out.push_back({k.name, type_name(k.type), k.default_value, k.doc});
  return out;
}

nlohmann::json keys_json(const std::vector<KeyDoc>& keys) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : keys) out.push_back({{"name", k.name}, {"type", k.type}, {"default", k.default_value}, {"doc", k.doc}});
  return out;
}

nlohmann::json to_json(const plugins::PluginSet& set) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : set.files()) {
    nlohmann::json file{{"file", f.path.string()},      {"plugin", f.name},
                        {"version", f.version},         {"status", f.ok ? "ok" : "refused"},
                        {"sdk_version", f.sdk_version}, {"torch_version", f.torch_version},
                        {"abi_version", f.abi_version}, {"components", nlohmann::json::array()}};
    if (!f.ok) file["error"] = f.error;
    for (const auto& c : f.components) {
      file["components"].push_back({{"kind", c.kind},
                                    {"name", c.name},
                                    {"version", c.version},
                                    {"summary", c.summary},
                                    {"section", section_of(c.kind)},
                                    {"config_keys", keys_json(plugin_keys(c))},
                                    {"core_keys", keys_json(core_keys(c))},
                                    {"capabilities", plugins::capability_names(c.capabilities)},
                                    {"enabled_by", c.enabled_by},
                                    {"hook_points", c.hook_points}});
    }
    out.push_back(file);
  }
  return out;
}

// The KIND column: the longest kind name and a space; detail lines are indented past it.
constexpr size_t kind_width() {
  size_t width = 0;
  for (const sdk::KindInfo& k : sdk::kKinds) width = std::max(width, std::string_view(k.name).size());
  return width;
}
constexpr size_t kKind = kind_width(), kIndent = kKind + 2;

void print_table(std::ostream& out, const plugins::PluginSet& set, bool verbose) {
  out << fmt::format("{:<{}} {:<22} {:<8} {:<28} {}\n", "KIND", kKind, "NAME", "VERSION", "FILE", "SUMMARY");
  for (const auto& f : set.files()) {
    if (!f.ok) continue;
    for (const auto& c : f.components) {
      out << fmt::format("{:<{}} {:<22} {:<8} {:<28} {}\n", c.kind, kKind, c.name, c.version,
                         f.path.filename().string(), c.summary);
      if (!verbose) continue;
      if (c.capabilities != 0) {
        out << fmt::format("{:>{}}capabilities: {}\n", "", kIndent,
                           fmt::join(plugins::capability_names(c.capabilities), ", "));
      }
      if (!c.enabled_by.empty()) {
        out << fmt::format("{:>{}}enabled by: [{}] {} = true\n", "", kIndent, section_of(c.kind), c.enabled_by);
      }
      if (!c.hook_points.empty()) {
        out << fmt::format("{:>{}}hook points (kforge extract): {}\n", "", kIndent, fmt::join(c.hook_points, ", "));
      }
      std::vector<KeyDoc> keys = core_keys(c);
      for (KeyDoc& k : plugin_keys(c)) keys.push_back(std::move(k));
      for (const KeyDoc& k : keys) {
        out << fmt::format("{:>{}}[{}] {} ({}, default {}): {}\n", "", kIndent, section_of(c.kind), k.name, k.type,
                           k.default_value.empty() ? "unset" : k.default_value, k.doc);
      }
    }
  }
  for (const auto& f : set.files()) {
    if (f.ok) continue;
    out << fmt::format("{:<{}} {:<22} {:<8} {:<28} REFUSED: {}\n", "-", kKind, f.name.empty() ? "-" : f.name,
                       f.version.empty() ? "-" : f.version, f.path.filename().string(), f.error);
  }
  if (verbose) {
    out << "\nPlugin files:\n";
    for (const auto& f : set.files()) {
      out << fmt::format("  {} ({} {}, sdk {}, LibTorch {}, {})\n", f.path.string(),
                               f.name.empty() ? "?" : f.name, f.version.empty() ? "?" : f.version,
                               f.sdk_version.empty() ? "?" : f.sdk_version,
                               f.torch_version.empty() ? "?" : f.torch_version, f.ok ? "ok" : "refused");
    }
  }
}

}  // namespace

cxxopts::Options list_plugins_options() {
  cxxopts::Options options("kforge list-plugins",
                           "List the components of every plugin found (kind, name, version, file, summary),\n"
                           "and every refused plugin file with the reason.");
  add_plugin_dir_option(options);
  add_allow_unsafe_plugin_dir_option(options);
  options.add_options()("json", "machine-readable output")(
      "v,verbose", "also list each component's config keys, enabling key and hook points")("h,help", "this help");
  return options;
}

int cmd_list_plugins(int argc, char** argv) {
  cxxopts::Options options = list_plugins_options();
  const std::vector<std::string> arguments(argv + 1, argv + argc);  // the cache key
  const ParsedOptions parsed = parse_options(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  const std::vector<std::string> dirs = plugin_dirs_given(args);
  // Fingerprinted before any plugin is opened: a file changed while loading invalidates the entry.
  const std::filesystem::path exe = listing::current_executable();
  const std::string inputs = listing::fingerprint(exe, plugins::plugin_dirs(dirs));
  std::unique_ptr<plugins::PluginHost> host;
  try {
    host = plugins::load_plugins(dirs, unsafe_plugins_allowed(args));
  } catch (const std::exception& e) {
    std::cerr << "kforge list-plugins: " << e.what() << "\n";
    return kExitUsage;
  }
  std::ostringstream out;
  if (args.count("json")) {
    out << to_json(host->set).dump(2) << "\n";
  } else {
    print_table(out, host->set, args.count("verbose") > 0);
  }
  std::cout << out.str() << std::flush;
  if (!listing::disabled()) {
    const std::vector<std::string> libraries = listing::loaded_libraries();
    listing::store({listing::key(exe, arguments), dirs, libraries, inputs + listing::fingerprint(libraries),
                      out.str()});
  }
  return kExitOk;
}

}  // namespace kforge::cli
