// datasets_cache: the Arrow files of a split of a dataset in the `datasets` library's cache, found offline as
// load_dataset finds them with HF_DATASETS_OFFLINE=1.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kforge::data {

/// The split's files of dataset `name` (NAME or ORG/NAME) in the `datasets` cache directory `cache`:
/// <cache>/<builder>/<config>/<version>/<hash>/<prefix>-<split>.arrow or <prefix>-<split>-NNNNN-of-NNNNN.arrow, sorted,
/// where <builder> is NAME or ORG___NAME, <config> is `config` (empty: "default", else the one config cached), and
/// of the <version>/<hash> directories holding the split the most recently modified one is taken (as `datasets`
/// does offline). nullopt when the cache has no such builder directory, config or split, with what was looked for in
/// `looked_for`. Throws sdk::ConfigError when `config` is empty and several configs (none "default") are cached,
/// naming them.
std::optional<std::vector<std::filesystem::path>> datasets_cache_files(const std::filesystem::path& cache,
                                                                       const std::string& name,
                                                                       const std::string& config,
                                                                       const std::string& split,
                                                                       std::string& looked_for);

}  // namespace kforge::data
