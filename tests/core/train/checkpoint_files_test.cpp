// Checkpoint files: layout and contents, checksums xxhsum agrees with, retention, final save,
// model-only loading, refusal of damaged and old-schema ones, and which step `latest` resumes.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_manager.h"
#include "checkpoint/incompatible_checkpoint.h"
#include "core/train/train_fixture.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"
#include "support/xxhsum.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// A one-rank checkpoint of a model tensor and its optimizer state, saved into `dir` at `step`.
fs::path save_small(const fs::path& dir, int64_t step) {
  checkpoint::Snapshot s;
  s.step = step;
  s.model = {{"w", at::arange(6, at::kFloat).view({2, 3})}};
  s.optimizer = {{"w.exp_avg", at::full({2, 3}, 0.5)}};
  s.train_state = {{"data", {{{"rank", 0}, {"epoch", 0}, {"batches_yielded", step}}}}};
  return checkpoint::CheckpointManager(dir, 0, nullptr).save(s);
}

// Points `dir`/latest at `step_dir_name` afresh, as `ln -sfn` does.
void repoint_latest(const fs::path& dir, const std::string& step_dir_name) {
  fs::remove(dir / "latest");
  fs::create_symlink(step_dir_name, dir / "latest");
}

// load_newest of `dir`, collecting its warnings.
std::optional<checkpoint::Snapshot> load_newest(const fs::path& dir, std::vector<std::string>& warnings) {
  return checkpoint::CheckpointManager(dir, 0, nullptr).load_newest([&](const std::string& m) {
    warnings.push_back(m);
  });
}

// Rewrites `step_dir`'s metadata.json as kforge's schema 1 wrote it (FNV "checksum" per file).
void make_schema_1(const fs::path& step_dir) {
  nlohmann::json meta = read_json(step_dir / "metadata.json");
  meta["schema_version"] = 1;
  for (auto& [file, entry] : meta["files"].items()) {
    entry["checksum"] = "cbf29ce484222325";
    entry.erase("xxh3");
  }
  std::ofstream(step_dir / "metadata.json") << meta.dump(2);
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

TEST(CheckpointFiles, EveryFilesChecksumIsWhatXxhsumPrints) {
  ASSERT_TRUE(xxhsum_available()) << "xxhsum not on PATH (Debian package xxhash; run scripts/setup.sh)";
  TrainFixture fx;
  fx.run({"--train.max_steps=5"}, {});
  const fs::path dir = fx.checkpoint_dir / "step_5";
  const auto files = read_json(dir / "metadata.json")["files"];
  ASSERT_TRUE(files.contains("shard-00000-of-00001.safetensors"));
  for (const auto& [file, entry] : files.items()) {
    EXPECT_EQ(entry["xxh3"], xxhsum_h3(dir / file)) << file;
    EXPECT_EQ(entry["bytes"], fs::file_size(dir / file)) << file;
  }
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

TEST(CheckpointFiles, ModelOnlyLoadReturnsTheModelTensorsAndNoOptimizerState) {
  const fs::path dir = save_small(temp_dir("model-only"), 3);
  const auto s = checkpoint::CheckpointManager::load(dir, 0, checkpoint::CheckpointManager::model_tensor);
  ASSERT_EQ(s.model.size(), 1u);
  EXPECT_TRUE(at::equal(s.model.at("w"), at::arange(6, at::kFloat).view({2, 3})));
  EXPECT_TRUE(s.optimizer.empty());
  EXPECT_EQ(s.step, 3);
  const auto all = checkpoint::CheckpointManager::load(dir);
  EXPECT_TRUE(at::equal(all.optimizer.at("w.exp_avg"), at::full({2, 3}, 0.5)));
}

// A CUDA run's device generator state is saved beside the CPU one and comes back (a CPU run writes none).
TEST(CheckpointFiles, BothGeneratorStatesRoundTripAndACpuRunWritesNoCudaState) {
  checkpoint::Snapshot s;
  s.step = 2;
  s.model = {{"w", at::ones({2})}};
  s.train_state = {{"data", {{{"rank", 0}, {"epoch", 0}, {"batches_yielded", 2}}}}};
  s.rng = at::arange(16, at::kByte);
  s.rng_cuda = at::arange(5, 21, at::kByte);
  const fs::path dir = checkpoint::CheckpointManager(temp_dir("rng-cuda"), 0, nullptr).save(s);
  const checkpoint::Snapshot loaded = checkpoint::CheckpointManager::load(dir);
  ASSERT_TRUE(loaded.rng.defined() && loaded.rng_cuda.defined());
  EXPECT_TRUE(at::equal(loaded.rng, s.rng));
  EXPECT_TRUE(at::equal(loaded.rng_cuda, s.rng_cuda));
  EXPECT_FALSE(checkpoint::CheckpointManager::load(save_small(temp_dir("rng-cpu"), 1)).rng_cuda.defined());
}

TEST(CheckpointFiles, OldSchemaCheckpointIsRefusedNamingItsVersionAndWhatToDo) {
  const fs::path dir = save_small(temp_dir("old-schema"), 4);
  make_schema_1(dir);
  try {
    checkpoint::CheckpointManager::load(dir);
    FAIL() << "a schema 1 checkpoint must be refused";
  } catch (const checkpoint::IncompatibleCheckpoint& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(dir.string()), std::string::npos) << message;
    EXPECT_NE(message.find("checkpoint schema 1"), std::string::npos) << message;
    EXPECT_NE(message.find(fmt::format("it reads schema {} only", checkpoint::kSchemaVersion)), std::string::npos)
        << message;
    EXPECT_NE(message.find("resume it with the kforge release that wrote it, or start over"), std::string::npos)
        << message;
  }
}

// Falling back past it to an older step would lose the newer progress without the user noticing.
TEST(CheckpointFiles, LoadNewestStopsAtAnOldSchemaCheckpointInsteadOfSkippingIt) {
  const fs::path root = temp_dir("old-schema-newest");
  save_small(root, 1);
  make_schema_1(save_small(root, 2));
  std::vector<std::string> warnings;
  try {
    checkpoint::CheckpointManager(root, 0, nullptr).load_newest([&](const std::string& m) { warnings.push_back(m); });
    FAIL() << "must not resume step_1 behind the old-schema step_2";
  } catch (const checkpoint::IncompatibleCheckpoint& e) {
    EXPECT_NE(std::string(e.what()).find((root / "step_2").string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(warnings.empty());
}

TEST(CheckpointFiles, ResumingAnOldSchemaCheckpointFailsTheRunWithTheMessage) {
  TrainFixture fx;
  fx.run({"--train.max_steps=5"}, {});
  make_schema_1(fx.checkpoint_dir / "step_5");
  try {
    fx.run({"--train.max_steps=6"}, {});
    FAIL() << "must refuse to resume an old-schema checkpoint";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint schema 1"), std::string::npos) << e.what();
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

// KempnerForge's auto-resume loads what `latest` points at: re-pointed by hand to an older complete step after the
// newest was written, it is honoured, and the warning says it is older than the newest.
TEST(CheckpointFiles, ALatestRepointedToAnOlderStepIsHonouredSayingSo) {
  const fs::path root = temp_dir("latest-repointed");
  for (int64_t step : {1, 2, 3}) save_small(root, step);
  repoint_latest(root, "step_1");
  std::vector<std::string> warnings;
  const auto s = load_newest(root, warnings);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->step, 1);
  ASSERT_EQ(warnings.size(), 1u);
  const std::string said = (root / "latest").string() +
                           " points at step_1, older than the newest complete checkpoint step_3: resuming from step_1";
  EXPECT_NE(warnings[0].find(said), std::string::npos) << warnings[0];
  repoint_latest(root, "step_3");  // at the newest: nothing to say
  warnings.clear();
  EXPECT_EQ(load_newest(root, warnings)->step, 3);
  EXPECT_TRUE(warnings.empty());
}

// A save stages latest.tmp -> step_N before renaming step_N into place and moves it onto `latest` last. A run stopped
// between the two leaves `latest` at step_1 and latest.tmp at step_2, the newest complete checkpoint: step_2 is
// loaded, with nothing to warn about, and a copy of the directory (new modification times) decides the same. A
// latest.tmp naming a step that never landed (a stop before the rename) changes nothing.
TEST(CheckpointFiles, AStepStagedAsTheNextLatestComesBeforeLatest) {
  const fs::path root = temp_dir("latest-lagging");
  for (int64_t step : {1, 2}) save_small(root, step);
  EXPECT_FALSE(fs::exists(fs::symlink_status(root / "latest.tmp")));  // a finished save leaves none
  repoint_latest(root, "step_1");
  fs::create_symlink("step_2", root / "latest.tmp");
  const fs::path copy = temp_dir("latest-lagging-copy") / "checkpoints";
  fs::copy(root, copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  for (const fs::path& dir : {root, copy}) {
    std::vector<std::string> warnings;
    const auto s = load_newest(dir, warnings);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->step, 2) << dir;
    EXPECT_TRUE(warnings.empty()) << warnings.front();
  }
  fs::remove(root / "latest.tmp");
  fs::create_symlink("step_3", root / "latest.tmp");
  std::vector<std::string> warnings;
  EXPECT_EQ(load_newest(root, warnings)->step, 1);
  ASSERT_EQ(warnings.size(), 1u);  // latest honoured, older than step_2
}

}  // namespace
}  // namespace kforge::test
