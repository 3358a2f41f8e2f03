// hub_cache: resolves Hugging Face hub ids to their snapshots in the local hub cache, offline.
#include "config/hub_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <vector>

#include "config/job_config.h"
#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

namespace fs = std::filesystem;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// $HF_HOME/<sub>, else $XDG_CACHE_HOME/huggingface/<sub>, else ~/.cache/huggingface/<sub>; `own` names the variable
// that was looked at first, for the message of the default.
HfCacheDir under_hf_home(const std::string& sub, const std::string& own) {
  if (const char* v = env("HF_HOME")) return {fs::path(v) / sub, "$HF_HOME/" + sub};
  if (const char* v = env("XDG_CACHE_HOME")) {
    return {fs::path(v) / "huggingface" / sub, "$XDG_CACHE_HOME/huggingface/" + sub};
  }
  const char* home = env("HOME");
  return {fs::path(home != nullptr ? home : "") / ".cache" / "huggingface" / sub,
          fmt::format("the default, as none of {}, $HF_HOME, $XDG_CACHE_HOME is set", own)};
}

bool is_commit_hash(const std::string& s) {
  return s.size() == 40 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// One component of a repo id, as huggingface_hub's validate_repo_id accepts it: [\w\-.]+ between word boundaries.
bool is_id_part(const std::string& s) {
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  if (s.empty() || !word(s.front()) || !word(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return word(c) || c == '-' || c == '.'; });
}

struct HubId {
  std::string repo, revision;
};

// huggingface_hub's folder of a repo in the hub cache: models--ORG--NAME, datasets--ORG--NAME.
std::string repo_folder(const std::string& kind, const std::string& repo) {
  std::string folder = kind + "s--" + repo;
  for (size_t k = folder.find('/'); k != std::string::npos; k = folder.find('/', k)) folder.replace(k, 1, "--");
  return folder;
}

HubId split_revision(const std::string& value) {
  const size_t at = value.find('@');
  if (at == std::string::npos) return {value, "main"};
  return {value.substr(0, at), value.substr(at + 1)};
}

std::string file_names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

}  // namespace

HfCacheDir hub_cache() {
  for (const char* name : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}) {
    if (const char* v = env(name)) return {v, fmt::format("${}", name)};
  }
  return under_hf_home("hub", "$HF_HUB_CACHE");
}

HfCacheDir datasets_cache() {
  if (const char* v = env("HF_DATASETS_CACHE")) return {v, "$HF_DATASETS_CACHE"};
  return under_hf_home("datasets", "$HF_DATASETS_CACHE");
}

fs::path hub_cache_dir() { return hub_cache().path; }

bool is_hub_id(const std::string& value) {
  const HubId id = split_revision(value);
  if (id.revision.empty() || id.repo.size() > 96) return false;
  for (const char* ext : {".model", ".json", ".tiktoken", ".txt", ".safetensors", ".bin", ".npy", ".toml"}) {
    if (fs::path(id.repo).extension() == ext) return false;  // a file name: a missing local file, reported by its user
  }
  if (id.repo.find("--") != std::string::npos || id.repo.find("..") != std::string::npos) return false;
  const size_t slash = id.repo.find('/');
  if (slash == std::string::npos) return is_id_part(id.repo);
  return is_id_part(id.repo.substr(0, slash)) && is_id_part(id.repo.substr(slash + 1));
}

std::optional<fs::path> find_hub_snapshot(const std::string& kind, const std::string& value, std::string& looked_for) {
  const HubId id = split_revision(value);
  const fs::path repo = hub_cache().path / repo_folder(kind, id.repo);
  std::error_code ec;
  if (!fs::is_directory(repo, ec)) {
    looked_for = repo.string();
    return std::nullopt;
  }
  std::string hash = id.revision;
  const fs::path ref = repo / "refs" / id.revision;
  if (!is_commit_hash(id.revision)) {
    std::ifstream in(ref);
    if (!(in >> hash)) {
      looked_for = fmt::format("{} (the snapshots there: {})", ref.string(), file_names(repo / "snapshots"));
      return std::nullopt;
    }
  }
  const fs::path snapshot = repo / "snapshots" / hash;
  if (!fs::is_directory(snapshot, ec)) {
    looked_for = fmt::format("{}{} (the snapshots there: {})", snapshot.string(),
                             hash == id.revision ? "" : fmt::format(", which {} names", ref.string()),
                             file_names(repo / "snapshots"));
    return std::nullopt;
  }
  return snapshot;
}

fs::path hub_snapshot(const std::string& value, const std::string& what) {
  std::string looked_for;
  if (std::optional<fs::path> snapshot = find_hub_snapshot("model", value, looked_for)) return *snapshot;
  const HubId id = split_revision(value);
  const HfCacheDir cache = hub_cache();
  throw sdk::ConfigError(fmt::format(
      "{} = \"{}\" is not a local path, and the Hugging Face cache ({}, from {}) has no {} of hub model '{}': "
      "looked for {}. Fill it on a machine with hub access with `huggingface-cli download {}{}`, then copy {} "
      "into this cache (or point $HF_HUB_CACHE at a copy of that machine's cache); kforge never downloads",
      what, value, cache.path.string(), cache.origin,
      id.revision == "main" ? "download" : "revision '" + id.revision + "'", id.repo, looked_for, id.repo,
      id.revision == "main" ? "" : " --revision " + id.revision,
      (cache.path / repo_folder("model", id.repo)).string()));
}

fs::path local_or_hub_path(const std::string& value, const std::string& what) {
  std::error_code ec;
  if (value.empty() || fs::exists(value, ec) || !is_hub_id(value)) return value;
  return hub_snapshot(value, what);
}

fs::path tokenizer_file(const std::string& value, const std::string& what) {
  const fs::path path = local_or_hub_path(value, what);
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  for (const char* name : {"tokenizer.json", "tokenizer.model", "original/tokenizer.model"}) {
    if (fs::is_regular_file(path / name, ec)) return path / name;
  }
  std::vector<fs::path> tiktoken;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().extension() == ".tiktoken" && fs::is_regular_file(entry.path(), ec)) {
      tiktoken.push_back(entry.path());
    }
  }
  if (tiktoken.size() == 1) return tiktoken.front();
  throw sdk::ConfigError(
      fmt::format("{} = \"{}\": the directory {} holds no tokenizer kforge reads (tokenizer.json, tokenizer.model, "
                  "original/tokenizer.model or one *.tiktoken file); its files: {}",
                  what, value, path.string(), file_names(path)));
}

void resolve_hub_ids(JobConfig& job) {
  Value& tokenizer = *job.tree.find("data")->find("tokenizer_path");
  if (!tokenizer.s.empty()) {
    tokenizer.s =
        tokenizer_file(tokenizer.s, fmt::format("{}: [data] tokenizer_path", tokenizer.source.describe())).string();
    job.data.tokenizer_path = tokenizer.s;
  }
  if (Value* encoder = job.tree.find("vision_encoder"); encoder != nullptr && !encoder->find("path")->s.empty()) {
    Value& path = *encoder->find("path");
    path.s = local_or_hub_path(path.s, fmt::format("{}: [vision_encoder] path", path.source.describe())).string();
  }
}

}  // namespace kforge::config
