// datasets_cache: builder, config, version and fingerprint directories of the `datasets` cache walked for a split's
// Arrow files.
#include "data/datasets_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> subdirectories(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    const std::string name = it->path().filename().string();
    // In-progress builds (<hash>.incomplete, <hash>_builder.lock) are not the cache's.
    if (it->is_directory(type_ec) && name.find(".incomplete") == std::string::npos) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string names_of(const std::vector<fs::path>& paths) {
  std::string out;
  for (const fs::path& p : paths) out += (out.empty() ? "'" : ", '") + p.filename().string() + "'";
  return out.empty() ? "none" : out;
}

// Whether `name` is <builder>-<split>.arrow or <builder>-<split>-NNNNN-of-NNNNN.arrow.
bool is_split_file(std::string name, const std::string& split) {
  const std::string arrow = ".arrow", tail = "-" + split;
  if (name.size() <= arrow.size() || name.compare(name.size() - arrow.size(), arrow.size(), arrow) != 0) return false;
  name.resize(name.size() - arrow.size());
  static const std::regex shard("-[0-9]{5}-of-[0-9]{5}$");
  std::smatch m;
  if (std::regex_search(name, m, shard)) name.resize(static_cast<size_t>(m.position(0)));
  return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

// The Arrow files of `split` in a fingerprint directory, sorted.
std::vector<fs::path> split_files(const fs::path& dir, const std::string& split) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec) && is_split_file(it->path().filename().string(), split)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::optional<std::vector<fs::path>> datasets_cache_files(const fs::path& cache, const std::string& name,
                                                          const std::string& config, const std::string& split,
                                                          std::string& looked_for) {
  std::string builder_name = name;
  if (const size_t slash = name.find('/'); slash != std::string::npos) builder_name.replace(slash, 1, "___");
  const fs::path builder = cache / builder_name;
  std::error_code ec;
  if (!fs::is_directory(builder, ec)) {
    looked_for = builder.string();
    return std::nullopt;
  }
  fs::path config_dir = builder / (config.empty() ? "default" : config);
  if (!fs::is_directory(config_dir, ec)) {
    const std::vector<fs::path> configs = subdirectories(builder);
    if (!config.empty() || configs.empty()) {
      looked_for = fmt::format("{} (the configs cached: {})", config_dir.string(), names_of(configs));
      return std::nullopt;
    }
    if (configs.size() > 1) {
      throw sdk::ConfigError(fmt::format("the `datasets` cache {} holds several configs of '{}' ({}) and none is "
                                         "'default': name one with hf_dataset_config",
                                         builder.string(), name, names_of(configs)));
    }
    config_dir = configs.front();
  }
  std::optional<fs::path> newest;
  fs::file_time_type newest_time{};
  std::vector<fs::path> files;
  for (const fs::path& version : subdirectories(config_dir)) {
    for (const fs::path& hash : subdirectories(version)) {
      std::vector<fs::path> found = split_files(hash, split);
      const fs::file_time_type time = fs::last_write_time(hash, ec);
      if (found.empty() || ec || (newest && time <= newest_time)) continue;
      newest = hash;
      newest_time = time;
      files = std::move(found);
    }
  }
  if (!newest) {
    looked_for = fmt::format("{}/<version>/<hash>/*-{}.arrow and *-{}-NNNNN-of-NNNNN.arrow (the versions there: {})",
                             config_dir.string(), split, split, names_of(subdirectories(config_dir)));
    return std::nullopt;
  }
  return files;
}

}  // namespace kforge::data
