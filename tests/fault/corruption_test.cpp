// Checkpoint files damaged at rest, in the newest of three checkpoints of a 1-rank and a 2-rank FSDP
// job: a shard truncated, a byte of it flipped, the shard deleted, garbage in metadata.json, edited
// metadata.json fields (step, tokens_seen, a shard's recorded size), a byte of train_state.json
// flipped. Each is refused with the damaged file named, and loading falls back to the newest
// complete step; a real rerun falls back, resumes and matches an undamaged run's losses bit for bit.
// Prints "[ fault    ] corrupt ...".
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "checkpoint/checkpoint_manager.h"
#include "fault_job.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace fs = std::filesystem;
namespace {

constexpr int64_t kCorruptSaved = 3;  // checkpoints 1..3 are written; step 3 is damaged
constexpr int64_t kCorruptSteps = 5;  // the rerun continues to step 5

struct Damage {
  std::string name;
  std::string file;  ///< the file of step_3 it damages
  std::function<void(const fs::path& step_dir)> apply;
};

void corrupt_write(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

void flip_middle_byte(const fs::path& path) {
  std::string bytes = read_file(path);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
  corrupt_write(path, bytes);
}

void edit_metadata(const fs::path& step_dir, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json meta = nlohmann::json::parse(read_file(step_dir / "metadata.json"));
  edit(meta);
  corrupt_write(step_dir / "metadata.json", meta.dump(2));
}

std::vector<Damage> damages(int world) {
  const std::string shard = fmt::format("shard-{:05d}-of-{:05d}.safetensors", world - 1, world);
  return {
      {"truncated shard", shard, [=](const fs::path& d) { fs::resize_file(d / shard, fs::file_size(d / shard) / 2); }},
      {"flipped shard byte", shard, [=](const fs::path& d) { flip_middle_byte(d / shard); }},
      {"deleted shard", shard, [=](const fs::path& d) { fs::remove(d / shard); }},
      {"garbage metadata", "metadata.json",
       [](const fs::path& d) { corrupt_write(d / "metadata.json", "{\"step\": 3, [garbage"); }},
      {"edited metadata step", "metadata.json",
       [](const fs::path& d) { edit_metadata(d, [](nlohmann::json& m) { m["step"] = 30; }); }},
      {"edited metadata tokens_seen", "metadata.json",
       [](const fs::path& d) { edit_metadata(d, [](nlohmann::json& m) { m["tokens_seen"] = 1; }); }},
      {"edited metadata shard size", "metadata.json",
       [=](const fs::path& d) {
         edit_metadata(
             d, [&](nlohmann::json& m) { m["files"][shard]["bytes"] = m["files"][shard]["bytes"].get<int64_t>() + 8; });
       }},
      {"flipped train_state byte", "train_state.json",
       [](const fs::path& d) { flip_middle_byte(d / "train_state.json"); }},
  };
}

void corruption(int world) {
  FaultJob straight("corrupt_straight", world, kCorruptSteps);
  const JobEnd reference = straight.run();
  ASSERT_EQ(reference.code(), 0) << reference.output;
  FaultJob job("corrupt", world, kCorruptSteps);
  const JobEnd saved = job.run({}, {}, {fmt::format("--train.max_steps={}", kCorruptSaved)});
  ASSERT_EQ(saved.code(), 0) << saved.output;

  int cases = 0, refused = 0, fell_back = 0;
  const std::vector<Damage> all = damages(world);
  for (const Damage& damage : all) {
    ++cases;
    const fs::path copy = temp_dir("fault_corrupt_copy") / "checkpoints";
    fs::copy(job.checkpoints, copy, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    const fs::path step_dir = copy / fmt::format("step_{}", kCorruptSaved);
    damage.apply(step_dir);
    std::string warnings;
    std::optional<int64_t> loaded;
    try {
      const auto snapshot =
          checkpoint::CheckpointManager(copy, 0, nullptr).load_newest([&](const std::string& message) {
            warnings += message + "\n";
          });
      if (snapshot) loaded = snapshot->step;
    } catch (const std::exception& e) {
      ADD_FAILURE() << damage.name << ": " << e.what();
    }
    const bool named = warnings.find((step_dir / damage.file).string()) != std::string::npos;
    EXPECT_TRUE(named) << damage.name << ": the refusal does not name " << (step_dir / damage.file).string()
                       << "; warnings:\n"
                       << warnings;
    EXPECT_EQ(loaded, std::optional<int64_t>(kCorruptSaved - 1)) << damage.name << "; warnings:\n" << warnings;
    if (named) ++refused;
    if (loaded == std::optional<int64_t>(kCorruptSaved - 1)) ++fell_back;
  }

  // The trainer itself: a flipped byte in the last rank's shard of step 3, and a rerun to step 5.
  const Damage& flipped = all[1];
  const fs::path step_dir = job.checkpoints / fmt::format("step_{}", kCorruptSaved);
  flipped.apply(step_dir);
  const JobEnd rerun = job.run();
  EXPECT_EQ(rerun.code(), 0) << rerun.output;
  EXPECT_NE(rerun.output.find((step_dir / flipped.file).string()), std::string::npos) << rerun.output;
  EXPECT_EQ(resumed_step(rerun.output), std::optional<int64_t>(kCorruptSaved - 1)) << rerun.output;
  std::string problem;
  const auto expected = losses_by_step(straight.metrics, &problem);
  const auto got = losses_by_step(job.metrics, &problem);
  EXPECT_EQ(problem, "");
  for (int64_t step = 1; step <= kCorruptSteps; ++step) {
    ASSERT_TRUE(expected.count(step) && got.count(step)) << "step " << step << "\n" << rerun.output;
    EXPECT_EQ(got.at(step), expected.at(step)) << "step " << step;
  }
  report_fault(
      fmt::format("corrupt world={} cases={} refused_naming_file={} fell_back={}", world, cases, refused, fell_back));
}

TEST(FaultCorruption, OneRankDamagedCheckpointFilesAreRefusedByNameAndTheNewestCompleteStepLoads) { corruption(1); }

TEST(FaultCorruption, TwoRankFsdpDamagedCheckpointFilesAreRefusedByNameAndTheNewestCompleteStepLoads) { corruption(2); }

}  // namespace
}  // namespace kforge::test
