// Comparing the ranks' whole parameters (see replicated_parameters.h).
#include "core/train/replicated_parameters.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "checkpoint/checkpoint_manager.h"
#include "support/read_file.h"

namespace kforge::test {

std::vector<std::string> dumping_parameters(const std::filesystem::path& dir) {
  return {"--plugin-dir", KFORGE_PARAMETER_DUMP_DIR, "'--train.hooks=[\"fixture_dump_parameters\"]'",
          fmt::format("'--train.fixture_dump_dir=\"{}\"'", dir.string())};
}

std::vector<std::string> expect_whole_tensors_identical(const std::filesystem::path& dir, const std::vector<int>& ranks,
                                                        const std::filesystem::path& checkpoint) {
  const auto logical = checkpoint::CheckpointManager::load(checkpoint).model;
  std::vector<std::string> compared;
  const std::filesystem::path first = dir / fmt::format("rank_{}", ranks.front());
  EXPECT_TRUE(std::filesystem::is_directory(first)) << first;
  for (const auto& entry : std::filesystem::directory_iterator(first)) {
    const std::string name = entry.path().filename().string();
    const auto it = logical.find(name);
    if (it == logical.end()) {
      ADD_FAILURE() << "rank " << ranks.front() << " holds '" << name << "', which the checkpoint does not";
      continue;
    }
    const std::string bytes = read_file(entry.path());
    if (static_cast<int64_t>(bytes.size()) != static_cast<int64_t>(it->second.nbytes())) continue;  // a slice
    for (size_t i = 1; i < ranks.size(); ++i) {
      const std::filesystem::path other = dir / fmt::format("rank_{}", ranks[i]) / name;
      EXPECT_TRUE(read_file(other) == bytes) << name << " differs between ranks " << ranks.front() << " and "
                                             << ranks[i];
    }
    compared.push_back(name);
  }
  return compared;
}

}  // namespace kforge::test
