// kforge list-plugins: every component of every plugin found, and every refused file with its reason.
#include <cxxopts.hpp>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/plugin_host.h"
#include "config/schema.h"

namespace kforge::cli {
namespace {

std::string section_of(const std::string& kind) {
  for (const auto& slot : config::component_slots()) {
    if (kind == slot.kind) return slot.section;
  }
  return "";
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
      nlohmann::json keys = nlohmann::json::array();
      for (const auto& k : c.keys) {
        keys.push_back({{"name", k.name}, {"type", k.type}, {"default", k.default_value}, {"doc", k.doc}});
      }
      file["components"].push_back({{"kind", c.kind},
                                    {"name", c.name},
                                    {"version", c.version},
                                    {"summary", c.summary},
                                    {"section", section_of(c.kind)},
                                    {"config_keys", keys}});
    }
    out.push_back(file);
  }
  return out;
}

void print_table(const plugins::PluginSet& set, bool verbose) {
  std::cout << fmt::format("{:<15} {:<22} {:<8} {:<28} {}\n", "KIND", "NAME", "VERSION", "FILE", "SUMMARY");
  for (const auto& f : set.files()) {
    if (!f.ok) continue;
    for (const auto& c : f.components) {
      std::cout << fmt::format("{:<15} {:<22} {:<8} {:<28} {}\n", c.kind, c.name, c.version,
                               f.path.filename().string(), c.summary);
      if (verbose) {
        for (const auto& k : c.keys) {
          std::cout << fmt::format("{:>17}[{}] {} ({}, default {}): {}\n", "", section_of(c.kind), k.name, k.type,
                                   k.default_value.empty() ? "unset" : k.default_value, k.doc);
        }
      }
    }
  }
  for (const auto& f : set.files()) {
    if (f.ok) continue;
    std::cout << fmt::format("{:<15} {:<22} {:<8} {:<28} REFUSED: {}\n", "-", f.name.empty() ? "-" : f.name,
                             f.version.empty() ? "-" : f.version, f.path.filename().string(), f.error);
  }
  if (verbose) {
    std::cout << "\nPlugin files:\n";
    for (const auto& f : set.files()) {
      std::cout << fmt::format("  {} ({} {}, sdk {}, LibTorch {}, {})\n", f.path.string(),
                               f.name.empty() ? "?" : f.name, f.version.empty() ? "?" : f.version,
                               f.sdk_version.empty() ? "?" : f.sdk_version,
                               f.torch_version.empty() ? "?" : f.torch_version, f.ok ? "ok" : "refused");
    }
  }
}

}  // namespace

int cmd_list_plugins(int argc, char** argv) {
  cxxopts::Options options("kforge list-plugins",
                           "List the components of every plugin found (kind, name, version, file, summary),\n"
                           "and every refused plugin file with the reason.");
  options.add_options()("plugin-dir", "extra plugin directory (repeatable)",
                        cxxopts::value<std::vector<std::string>>())(
      "json", "machine-readable output")("v,verbose", "also list each component's config keys")("h,help", "this help");
  cxxopts::ParseResult args;
  try {
    args = options.parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kforge list-plugins: " << e.what() << "\n\n" << options.help();
    return kExitUsage;
  }
  if (args.count("help")) {
    std::cout << options.help();
    return kExitOk;
  }
  std::unique_ptr<PluginHost> host;
  try {
    host = load_plugins(args.count("plugin-dir") ? args["plugin-dir"].as<std::vector<std::string>>()
                                                 : std::vector<std::string>{});
  } catch (const std::exception& e) {
    std::cerr << "kforge list-plugins: " << e.what() << "\n";
    return kExitUsage;
  }
  if (args.count("json")) {
    std::cout << to_json(host->set).dump(2) << "\n";
  } else {
    print_table(host->set, args.count("verbose") > 0);
  }
  return kExitOk;
}

}  // namespace kforge::cli
