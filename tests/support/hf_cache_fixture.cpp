// hf_cache_fixture: blobs, snapshots and refs of a fake hub download; environment variables saved and restored.
#include "support/hf_cache_fixture.h"

#include <stdlib.h>

#include <fstream>
#include <functional>

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

void set_env(const std::string& name, const std::optional<std::string>& value) {
  if (value) {
    ::setenv(name.c_str(), value->c_str(), 1);
  } else {
    ::unsetenv(name.c_str());
  }
}

}  // namespace

fs::path fake_download(const fs::path& cache, const std::string& repo, const std::string& hash,
                       const std::map<std::string, std::string>& files, const std::string& ref,
                       const std::string& kind) {
  std::string folder = kind + "s--" + repo;
  if (const size_t slash = folder.find('/'); slash != std::string::npos) folder.replace(slash, 1, "--");
  const fs::path root = cache / folder, snapshot = root / "snapshots" / hash;
  for (const auto& [name, content] : files) {
    const std::string blob = std::to_string(std::hash<std::string>{}(content));
    fs::create_directories(root / "blobs");
    std::ofstream(root / "blobs" / blob, std::ios::binary) << content;
    const fs::path link = snapshot / name;
    fs::create_directories(link.parent_path());
    fs::create_symlink(fs::relative(root / "blobs" / blob, link.parent_path()), link);
  }
  fs::create_directories((root / "refs" / ref).parent_path());
  std::ofstream(root / "refs" / ref) << hash;
  return snapshot;
}

ScopedEnv::ScopedEnv(const EnvVars& vars) {
  for (const auto& [name, value] : vars) {
    const char* old = std::getenv(name.c_str());
    saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
    set_env(name, value);
  }
}

ScopedEnv::~ScopedEnv() {
  for (const auto& [name, value] : saved_) set_env(name, value);
}

}  // namespace kforge::test
