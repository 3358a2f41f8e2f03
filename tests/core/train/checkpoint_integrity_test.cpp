// metadata.json and train_state.json are trusted only through commit.json's checksum and a field
// by field check: an edited, malformed or mistyped one is a damaged checkpoint, named and skipped
// (the run falls back to the previous step), like a corrupted shard; so is a `latest` that loops.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_manager.h"
#include "checkpoint/checksum.h"
#include "core/train/train_fixture.h"
#include "kforge/sdk/error.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

// A run with checkpoints at steps 5, 10 and 15.
class CheckpointIntegrity : public ::testing::Test {
 protected:
  void SetUp() override { fx_.run({"--train.max_steps=15"}, {}); }

  fs::path step_15() const { return fx_.checkpoint_dir / "step_15"; }

  // Rewrites step_15's `file` (JSON) after `edit`.
  void edit(const std::string& file, const std::function<void(nlohmann::json&)>& change) const {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(step_15() / file));
    change(j);
    std::ofstream(step_15() / file, std::ios::trunc) << j.dump(2);
  }

  // step_15 is refused naming `file`, and a new run resumes from step 10 instead.
  void expect_refused_and_skipped(const std::string& file) const {
    try {
      checkpoint::CheckpointManager::load(step_15());
      ADD_FAILURE() << "the edited checkpoint was loaded";
    } catch (const sdk::Error& e) {
      EXPECT_NE(std::string(e.what()).find((step_15() / file).string()), std::string::npos) << e.what();
    }
    std::vector<std::string> warnings;
    const auto newest =
        checkpoint::CheckpointManager(fx_.checkpoint_dir, 0, nullptr).load_newest([&](const std::string& m) {
          warnings.push_back(m);
        });
    ASSERT_TRUE(newest.has_value());
    EXPECT_EQ(newest->step, 10);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(file), std::string::npos) << warnings[0];
    const auto resumed = fx_.run({"--train.max_steps=16"}, {});
    EXPECT_EQ(resumed.resumed_from, 10);
  }

  TrainFixture fx_;
};

TEST_F(CheckpointIntegrity, AStepEditedInMetadataIsRefusedAndTheRunFallsBack) {
  edit("metadata.json", [](nlohmann::json& m) { m["step"] = 55; });
  expect_refused_and_skipped("metadata.json");
}

TEST_F(CheckpointIntegrity, ATokensSeenEditedInMetadataIsRefused) {
  edit("metadata.json", [](nlohmann::json& m) { m["tokens_seen"] = m["tokens_seen"].get<int64_t>() + 64; });
  expect_refused_and_skipped("metadata.json");
}

TEST_F(CheckpointIntegrity, MetadataWithoutItsFileListIsADamagedCheckpointNotARawJsonError) {
  edit("metadata.json", [](nlohmann::json& m) { m.erase("files"); });
  expect_refused_and_skipped("metadata.json");
}

TEST_F(CheckpointIntegrity, AMetadataFieldOfTheWrongTypeIsADamagedCheckpoint) {
  edit("metadata.json", [](nlohmann::json& m) { m["world_size"] = "1"; });
  expect_refused_and_skipped("metadata.json");
}

// Even with its size and checksum updated in metadata.json, an edited train_state.json is caught:
// metadata.json itself is sealed by commit.json.
TEST_F(CheckpointIntegrity, ATrainStateEditedAlongWithItsMetadataEntryIsRefused) {
  edit("train_state.json", [](nlohmann::json& s) { s["data"][0]["batches_yielded"] = 3; });
  std::ifstream in(step_15() / "train_state.json", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  edit("metadata.json", [&](nlohmann::json& m) {
    m["files"]["train_state.json"] = {
        {"bytes", bytes.size()}, {"xxh3", checkpoint::checksum_hex(checkpoint::checksum(bytes.data(), bytes.size()))}};
  });
  expect_refused_and_skipped("metadata.json");
}

// A writer that sealed a malformed metadata.json: the field checks name the field.
TEST_F(CheckpointIntegrity, ASealedMetadataWithAMistypedFieldIsRefusedNamingTheField) {
  edit("metadata.json", [](nlohmann::json& m) { m["world_size"] = "1"; });
  std::ifstream in(step_15() / "metadata.json", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  edit("commit.json", [&](nlohmann::json& c) {
    c["metadata.json"] = {{"bytes", bytes.size()},
                          {"xxh3", checkpoint::checksum_hex(checkpoint::checksum(bytes.data(), bytes.size()))}};
  });
  try {
    checkpoint::CheckpointManager::load(step_15());
    FAIL() << "a mistyped world_size was accepted";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("metadata.json: 'world_size' is \"1\", not an integer >= 1"),
              std::string::npos)
        << e.what();
  }
  expect_refused_and_skipped("metadata.json");
}

TEST_F(CheckpointIntegrity, MetadataWithoutItsCommitRecordIsRefused) {
  fs::remove(step_15() / "commit.json");
  expect_refused_and_skipped("commit.json");
}

TEST_F(CheckpointIntegrity, ALatestThatIsASymlinkLoopFallsBackToTheNewestStep) {
  const fs::path latest = fx_.checkpoint_dir / "latest";
  fs::remove(latest);
  fs::create_symlink("latest", latest);
  std::vector<std::string> warnings;
  const auto newest =
      checkpoint::CheckpointManager(fx_.checkpoint_dir, 0, nullptr).load_newest([&](const std::string& m) {
        warnings.push_back(m);
      });
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ(newest->step, 15);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(latest.string()), std::string::npos) << warnings[0];
  const auto resumed = fx_.run({"--train.max_steps=16"}, {});
  EXPECT_EQ(resumed.resumed_from, 15);
  EXPECT_EQ(fs::read_symlink(latest), fs::path("step_16"));
}

}  // namespace
}  // namespace kforge::test
