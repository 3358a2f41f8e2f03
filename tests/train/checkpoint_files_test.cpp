// Checkpoint files: layout and contents, retention, final save, and refusal of damaged ones.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_manager.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"
#include "train/train_fixture.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST(CheckpointFiles, StepDirectoryHoldsEveryPieceOfState) {
  TrainFixture fx;
  fx.run({"--train.max_steps=5"}, {});
  const fs::path dir = fx.checkpoint_dir / "step_5";
  const auto meta = read_json(dir / "metadata.json");
  EXPECT_EQ(meta["format"], "kforge-checkpoint");
  EXPECT_EQ(meta["schema_version"], checkpoint::kSchemaVersion);
  EXPECT_EQ(meta["step"], 5);
  EXPECT_EQ(meta["tokens_seen"], 5 * 4 * 16);
  EXPECT_TRUE(meta["tensors"].contains("model/layers.0.attention.q_proj.weight"));
  EXPECT_TRUE(meta["tensors"].contains("optimizer/layers.0.attention.q_proj.weight.exp_avg"));
  EXPECT_EQ(meta["tensors"]["model/norm.weight"]["global_shape"], nlohmann::json::array({32}));
  bool has_model_plugin = false;
  for (const auto& p : meta["plugins"]) has_model_plugin |= p["file"] == "libkforge_models.so";
  EXPECT_TRUE(has_model_plugin);
  const auto state = read_json(dir / "train_state.json");
  EXPECT_EQ(state["data"][0]["batches_yielded"], 5);
  std::ifstream config(dir / "config.toml");
  std::string text((std::istreambuf_iterator<char>(config)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("max_steps = 5"), std::string::npos);
  EXPECT_EQ(fs::read_symlink(fx.checkpoint_dir / "latest"), fs::path("step_5"));
}

TEST(CheckpointFiles, FinalCheckpointAtAnOffScheduleMaxSteps) {
  TrainFixture fx;
  fx.run({"--train.max_steps=7"}, {});
  EXPECT_TRUE(fs::exists(fx.checkpoint_dir / "step_5"));
  EXPECT_TRUE(fs::exists(fx.checkpoint_dir / "step_7"));
  EXPECT_EQ(fs::read_symlink(fx.checkpoint_dir / "latest"), fs::path("step_7"));
}

TEST(CheckpointFiles, RetentionKeepsTheLastNAndNeverLatest) {
  TrainFixture fx;
  fx.run({"--train.max_steps=6", "--checkpoint.interval=1", "--checkpoint.keep_last_n=2"}, {});
  checkpoint::CheckpointManager manager(fx.checkpoint_dir, 2, nullptr);
  const auto kept = manager.list();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].first, 5);
  EXPECT_EQ(kept[1].first, 6);
}

TEST(CheckpointFiles, DynamicWindowMilestonesSurviveRetention) {
  TrainFixture fx;
  fx.run({"--train.max_steps=10", "--checkpoint.interval=100", "--checkpoint.keep_last_n=1",
          "--checkpoint.dyn_ckpt_window.start=0", "--checkpoint.dyn_ckpt_window.stop=8"},
         {});
  std::vector<int64_t> steps;
  for (const auto& [step, path] : checkpoint::CheckpointManager(fx.checkpoint_dir, 1, nullptr).list()) steps.push_back(step);
  EXPECT_EQ(steps, (std::vector<int64_t>{0, 1, 2, 4, 8, 10}));
}

TEST(CheckpointFiles, TruncatedShardIsRefusedAndTheRunFallsBackToTheOlderOne) {
  TrainFixture fx;
  fx.run({"--train.max_steps=10"}, {});
  const fs::path shard = fx.checkpoint_dir / "step_10" / "shard-00000-of-00001.safetensors";
  fs::resize_file(shard, fs::file_size(shard) / 2);
  try {
    checkpoint::CheckpointManager::load(fx.checkpoint_dir / "step_10");
    FAIL() << "a truncated shard must be refused";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find(shard.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  auto hook = std::make_shared<RecordingHook>();
  const auto result = fx.run({"--train.max_steps=12"}, {hook});
  EXPECT_EQ(result.resumed_from, 5);
  EXPECT_EQ(hook->losses.begin()->first, 6);
}

TEST(CheckpointFiles, CorruptedBytesAreCaughtByTheChecksum) {
  TrainFixture fx;
  fx.run({"--train.max_steps=5"}, {});
  const fs::path shard = fx.checkpoint_dir / "step_5" / "shard-00000-of-00001.safetensors";
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(shard) - 10));
    f.put('\x7f');
  }
  try {
    checkpoint::CheckpointManager::load(fx.checkpoint_dir / "step_5");
    FAIL() << "a corrupted shard must be refused";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
}

// Rows 2-3 of a [4, 3] tensor written alone (as by one FSDP rank of two): loading must not fill
// rows 0-1 with zeros.
TEST(CheckpointFiles, SlicesThatLeavePartOfATensorUncoveredAreRefused) {
  checkpoint::CheckpointManager manager(temp_dir("slices"), 0, nullptr);
  checkpoint::Snapshot s;
  s.step = 1;
  s.model = {{"w", at::arange(6, at::kFloat).view({2, 3})}};
  s.placements = {{"model/w", {{4, 3}, {2, 0}}}};
  s.train_state = {{"data", {{{"rank", 0}, {"epoch", 0}, {"batches_yielded", 1}}}}};
  const fs::path dir = manager.save(s);
  try {
    checkpoint::CheckpointManager::load(dir);
    FAIL() << "an incomplete tensor must be refused";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("the slices of tensor 'model/w' cover 6 of its 12 elements"), std::string::npos)
        << e.what();
  }
}

TEST(CheckpointFiles, NoCompleteCheckpointIsAnErrorNotAFreshStart) {
  TrainFixture fx;
  fx.run({"--train.max_steps=5"}, {});
  fs::remove(fx.checkpoint_dir / "step_5" / "metadata.json");
  try {
    fx.run({"--train.max_steps=6"}, {});
    FAIL() << "must refuse to start from scratch";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("none is complete"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("metadata.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge::test
