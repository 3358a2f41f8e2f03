// hf_cache_fixture: fake Hugging Face hub cache downloads laid out as huggingface_hub writes them, and environment
// variables (HF_HOME, HF_HUB_CACHE, HF_DATASETS_CACHE, ...) set for a test's lifetime.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace kforge::test {

/// Writes `files` (name -> content) as huggingface_hub stores a download of `repo` at commit `hash` in `cache`: each
/// content once in blobs/ (named by a hash of it), snapshots/HASH/NAME a relative symlink to it, refs/REF holding HASH
/// (no newline, as huggingface_hub writes it), all under KIND"s--ORG--NAME" (kind "model" or "dataset"); returns the
/// snapshot directory.
std::filesystem::path fake_download(const std::filesystem::path& cache, const std::string& repo,
                                    const std::string& hash, const std::map<std::string, std::string>& files,
                                    const std::string& ref = "main", const std::string& kind = "model");

using EnvVars = std::map<std::string, std::optional<std::string>>;

/// Sets (or with nullopt unsets) the environment variables for the test's lifetime, restoring them after.
class ScopedEnv {
 public:
  explicit ScopedEnv(const EnvVars& vars);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  EnvVars saved_;
};

}  // namespace kforge::test
