// Fuzz target: a TOML config plus command-line overrides through load_job_config (core/config).
// Input: the TOML text; the lines after a line "#@overrides" are override arguments ("--a.b=v").
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "kforge/sdk/error.h"
#include "scratch_file.h"

namespace {

// The built-in plugins' components and keys, from `kforge list-plugins --json` (config_catalog.json).
kforge::config::Catalog fuzz_config_catalog() {
  std::ifstream in(KFORGE_FUZZ_CONFIG_CATALOG);
  kforge::config::Catalog catalog;
  for (const auto& plugin : nlohmann::json::parse(in)) {
    for (const auto& c : plugin.at("components")) {
      kforge::config::ComponentKeys component{c.at("kind"), c.at("name"), c.at("version"), plugin.at("plugin"), {}};
      for (const auto& key : c.at("config_keys")) {
        component.keys.push_back(kforge::config::plugin_key_spec(key.at("name"), key.at("type"), key.at("default"),
                                                                 key.at("doc"), component.name));
      }
      catalog.push_back(std::move(component));
    }
  }
  return catalog;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kforge::config::Catalog catalog = fuzz_config_catalog();
  static const std::filesystem::path file = kforge::fuzz::scratch_dir() / "fuzz.toml";
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string marker = "\n#@overrides\n";
  const size_t split = input.find(marker);
  std::vector<std::string> overrides;
  if (split != std::string::npos) {
    std::istringstream lines(input.substr(split + marker.size()));
    for (std::string line; std::getline(lines, line);) overrides.push_back(line);
  }
  kforge::fuzz::write_bytes(file, data, split == std::string::npos ? size : split + 1);
  try {
    kforge::config::load_job_config(file, overrides, catalog);
  } catch (const kforge::sdk::Error&) {
    // A refused config (ConfigError) is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
