// A vision-language run on data with unusable images: a shutdown signal while a step's data is read (the feed skipping
// a bad image) ends the run as preempted at the last completed step, its checkpoint at that step's data position, so
// that the resumed run trains what the straight run does; and the feed's stop when a whole pass over the data gives
// fewer usable images than a batch.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "data/sampler.h"
#include "image_fixtures.h"
#include "log/log.h"
#include "support/expect_text.h"
#include "support/tiny_job_toml.h"
#include "support/tiny_tokenizer.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

constexpr int kImages = 16;
constexpr int64_t kBatch = 4;  // tiny_job_toml's batch_size

// 24x24 JPEGs captioned alike, in a manifest; the images of `bad` are text files instead.
void make_images(TrainFixture& fx, const std::set<int64_t>& bad) {
  const fs::path dir = fx.root / "images";
  fs::create_directories(dir);
  std::ofstream manifest(dir / "manifest.jsonl");
  for (int i = 0; i < kImages; ++i) {
    const std::string name = fmt::format("img_{:02}.jpg", i);
    std::ofstream(dir / name, std::ios::binary)
        << (bad.count(i) ? std::string("not a jpeg") : encode_jpeg(test_pattern(24, 24, i + 1), 90));
    manifest << fmt::format(R"({{"image": "{}", "text": "a small photo", "prompt": "see"}})", name) << "\n";
  }
  fx.toml = tiny_job_toml(64, 20) + tiny_vlm_toml() +
            fmt::format("\n[data]\ndataset_path = \"{}\"\ntokenizer_path = \"{}\"\nnum_workers = 1\n",
                        (dir / "manifest.jsonl").string(), tiny_tokenizer(fx.root).string()) +
            fx.output_toml();
}

// The dataset index at `position` of the single rank's training order (epoch 0).
int64_t index_at(const TrainFixture& fx, int64_t position) {
  const data::BatchSampler order(kImages, kBatch, fx.job({}).train.effective_data_seed());
  return order.epoch_indices(0).at(static_cast<size_t>(position));
}

// Raises `signal` in this process when the host logs a skipped sample (the feed's thread, inside next_batch()).
class SignalOnSkip final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (std::string(msg.payload.data(), msg.payload.size()).find("; skipped") != std::string::npos) std::raise(SIGTERM);
  }
  void flush_() override {}
};

// Adds a sink to the host logger while alive.
class ScopedSink {
 public:
  explicit ScopedSink(spdlog::sink_ptr sink) : sink_(std::move(sink)) { log::get().sinks().push_back(sink_); }
  ~ScopedSink() {
    auto& sinks = log::get().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }

 private:
  spdlog::sink_ptr sink_;
};

TEST(VlmBadData, ASignalWhileAStepsDataIsReadEndsAtTheLastStepAndItsCheckpointResumesExactly) {
  TrainFixture straight, signalled;
  // The image at position 9 (step 3 reads positions 8 to 11) is bad: the signal comes while step 3's data is read.
  const std::set<int64_t> bad = {index_at(straight, 9)};
  make_images(straight, bad);
  make_images(signalled, bad);
  const std::vector<std::string> args = {"--scheduler.name=constant", "--train.max_steps=5"};
  auto whole = std::make_shared<RecordingHook>();
  straight.run(args, {whole});

  train::TrainingResult stopped;
  {
    const ScopedSink signal_on_skip(std::make_shared<SignalOnSkip>());
    stopped = signalled.run(args, {});
  }
  EXPECT_EQ(stopped.outcome, train::Outcome::Preempted);
  EXPECT_EQ(stopped.step, 2) << "step 3, whose data was being read, must not train";
  const auto saved = checkpoint::CheckpointManager::load(signalled.checkpoint_dir / "step_2");
  EXPECT_EQ(saved.train_state.at("data").at(0).at("image_text_position").get<int64_t>(), 2 * kBatch)
      << "the checkpoint holds the position after step 2, not a position inside step 3's read";

  auto resumed = std::make_shared<RecordingHook>();
  EXPECT_EQ(signalled.run(args, {resumed}).resumed_from, 2);
  for (int64_t step = 3; step <= 5; ++step) {
    EXPECT_EQ(resumed->losses.at(step), whole->losses.at(step)) << "step " << step;
  }
}

TEST(VlmBadData, AWholePassWithFewerUsableImagesThanABatchIsAConfigErrorNamingTheDataset) {
  TrainFixture fx;
  // 13 of the 16 bad (3 usable), never 100 in a row over the epochs: the pass, not the run of failures, stops it.
  std::set<int64_t> bad;
  for (int64_t i = 0; i < kImages; ++i) {
    if (i % 6 != 0) bad.insert(i);
  }
  make_images(fx, bad);
  const std::string message = config_error_of([&] { fx.run({"--train.max_steps=5"}, {}); });
  expect_has(message, {"JSONL manifest " + (fx.root / "images" / "manifest.jsonl").string(),
                       "a whole pass over this rank's 16 samples gave 3 usable, fewer than [train] batch_size = 4"});
}

}  // namespace
}  // namespace kforge::test
