#include "dist/setup_check.h"

#include <fmt/format.h>

#include <sstream>

#include "kforge/sdk/error.h"

namespace kforge::dist {
namespace {

std::string describe(const nlohmann::json& plugin) {
  return fmt::format("'{}' {} ({}, hash {})", plugin.value("name", "?"), plugin.value("version", "?"),
                     plugin.value("file", "?"), plugin.value("hash", "?"));
}

// The first difference of `other` (rank r) from `reference` (rank 0), or "" when they agree.
std::string plugin_difference(const nlohmann::json& reference, const nlohmann::json& other, int r) {
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& p : other) by_name[p.value("name", "")] = p;
  for (const auto& p : reference) {
    const auto it = by_name.find(p.value("name", ""));
    if (it == by_name.end()) return fmt::format("rank {} did not load plugin {} that rank 0 loaded", r, describe(p));
    if (it->second != p) {
      return fmt::format("rank {} loaded plugin {} but rank 0 loaded {}", r, describe(it->second), describe(p));
    }
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    return fmt::format("rank {} loaded plugin {} that rank 0 did not", r, describe(by_name.begin()->second));
  }
  return "";
}

std::string config_difference(const std::string& reference, const std::string& other, int r) {
  std::istringstream a(reference), b(other);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la)), more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "";
    if (!more_a || !more_b || la != lb) {
      return fmt::format("rank {} resolved a different config: line {} is '{}' there but '{}' on rank 0", r, line,
                         more_b ? lb : "<end>", more_a ? la : "<end>");
    }
  }
}

}  // namespace

void check_same_setup(const Runtime& runtime, const nlohmann::json& plugins, const std::string& config_toml) {
  if (runtime.world_size() == 1) return;
  const nlohmann::json mine = {{"plugins", plugins}, {"config", config_toml}};
  const std::vector<std::string> all = runtime.all_gather_strings("setup", mine.dump());
  const nlohmann::json reference = nlohmann::json::parse(all[0]);
  for (int r = 1; r < runtime.world_size(); ++r) {
    const nlohmann::json other = nlohmann::json::parse(all[static_cast<size_t>(r)]);
    std::string difference = plugin_difference(reference.at("plugins"), other.at("plugins"), r);
    if (difference.empty()) difference = config_difference(reference.at("config"), other.at("config"), r);
    if (!difference.empty()) {
      throw sdk::Error(fmt::format("the ranks disagree before training: {}. Every rank must run the same kforge "
                                   "build, plugin directories and config (including --section.key overrides)",
                                   difference));
    }
  }
}

}  // namespace kforge::dist
