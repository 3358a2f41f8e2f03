// The tests' host helpers: the built-in plugins, configs from TOML, temporary directories, shell commands.
#include "support/test_host.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <vector>

#include "plugins/catalog.h"

namespace kforge::test {

std::unique_ptr<plugins::PluginHost> load_builtin_plugins(const std::vector<std::string>& extra_dirs) {
  std::vector<std::string> dirs = {KFORGE_PLUGIN_DIR};
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  return plugins::load_plugins(dirs);
}

config::JobConfig job_from_toml(const std::string& toml, const plugins::Registry& registry,
                                const std::vector<std::string>& overrides) {
  const auto dir = temp_dir("config");
  const auto path = dir / "test.toml";
  std::ofstream(path) << toml;
  return config::load_job_config(path, overrides, plugins::make_catalog(registry));
}

namespace {

// The directories temp_dir made in this process: removed once its tests have run, if all of them passed; kept for a
// failure to be looked at.
class TempDirs : public ::testing::Environment {
 public:
  void add(const std::filesystem::path& dir) {
    const std::lock_guard<std::mutex> lock(mutex_);
    dirs_.push_back(dir);
  }
  void TearDown() override {
    if (!::testing::UnitTest::GetInstance()->Passed()) return;
    for (const auto& dir : dirs_) {
      std::error_code ec;  // a directory a test left unreadable stays
      std::filesystem::remove_all(dir, ec);
    }
  }

 private:
  std::mutex mutex_;
  std::vector<std::filesystem::path> dirs_;
};

TempDirs& temp_dirs() {
  static TempDirs* dirs = static_cast<TempDirs*>(::testing::AddGlobalTestEnvironment(new TempDirs));
  return *dirs;
}

}  // namespace

std::filesystem::path temp_dir(const std::string& label) {
  static std::atomic<int> counter{0};
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kforge_test_" + label + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  temp_dirs().add(dir);
  return dir;
}

int run_command(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buffer{};
  std::string text;
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) text.append(buffer.data(), n);
  const int status = pclose(pipe);
  if (output != nullptr) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace kforge::test
