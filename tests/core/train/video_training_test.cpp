// A video run through the trainer ([video]): clips of solid colours made here by the ffmpeg CLI, of 1 to 4 frames at
// [video] fps = 2 (so batches hold padded clips), read by the video_jsonl dataset plugin, under the joint decoder, the
// cross-attention strategy, MoT and MoMa, and with the per-frame time embedding. It learns which colour each clip
// shows, resumes bit-exactly, matches one rank on two FSDP ranks, and refuses what it cannot do yet.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "support/expect_text.h"
#include "support/launch_job.h"
#include "support/test_host.h"
#include "support/tiny_job_toml.h"
#include "support/tiny_tokenizer.h"

namespace kforge::test {
namespace {

const char* const kColours[] = {"red", "green", "blue", "black", "white", "yellow", "cyan", "magenta"};

constexpr int kClips = 16;

// Clip i (i < kClips) shows kColours[i % 8] for 0.5 * (1 + i % 4) s (so 1 to 4 frames at 2 per second). Made once per
// process by the ffmpeg CLI (about 0.3 s a clip); every fixture links the ones it uses into its own directory.
std::string clip_name(int i) { return fmt::format("clip_{:02}.mkv", i); }

const std::filesystem::path& clips() {
  static const std::filesystem::path dir = [] {
    const auto made = temp_dir("clips");
    for (int i = 0; i < kClips; ++i) {
      const std::string command = fmt::format(
          "ffmpeg -loglevel error -y -f lavfi -i color=c={}:s=16x16:r=4:d={} -c:v ffv1 -pix_fmt yuv420p {} 2>&1",
          kColours[i % 8], 0.5 * (1 + i % 4), (made / clip_name(i)).string());
      if (std::system(command.c_str()) != 0) throw std::runtime_error(command + " failed (apt-get install ffmpeg)");
    }
    return made;
  }();
  return dir;
}

// The first `count` clips, captioned by their colour, in a JSON Lines manifest; the fixture's tiny text model behind
// the random encoder (4 tokens a frame) and an MLP adapter, [video] up to 4 frames of 16 x 16.
void make_video(TrainFixture& fx, int count) {
  ASSERT_LE(count, kClips);
  const auto dir = fx.root / "clips";
  std::filesystem::create_directories(dir);
  std::ofstream manifest(dir / "manifest.jsonl");
  for (int i = 0; i < count; ++i) {
    std::filesystem::create_hard_link(clips() / clip_name(i), dir / clip_name(i));
    manifest << fmt::format(R"({{"video": "{}", "text": "a {} clip", "prompt": "see"}})", clip_name(i), kColours[i % 8])
             << "\n";
  }
  const auto tokenizer = tiny_tokenizer(fx.root);
  fx.toml = tiny_job_toml(64, 20) + tiny_vlm_toml() +
            fmt::format(R"(
[video]
dataset_type = "video_jsonl"
data_root = "{}"
max_frames = 4
min_frames = 1
fps = 2.0
frame_size = 16

[data]
tokenizer_path = "{}"
num_workers = 1
)",
                        (dir / "manifest.jsonl").string(), tokenizer.string()) +
            fx.output_toml();
}

std::vector<std::string> video_args(std::vector<std::string> more) {
  more.insert(more.begin(), {"--scheduler.name=constant", "--train.seq_len=28", "--eval.enabled=false"});
  return more;
}

void expect_video_trains_resumes_and_shards(const std::vector<std::string>& arch) {
  TrainFixture learn;
  make_video(learn, 8);
  auto losses = std::make_shared<RecordingHook>();
  std::vector<std::string> args = video_args({"--train.max_steps=30", "--optimizer.lr=3e-3"});
  args.insert(args.end(), arch.begin(), arch.end());
  learn.run(args, {losses});
  ASSERT_EQ(losses->losses.size(), 30u);
  EXPECT_LT(losses->losses.at(30), 0.5 * losses->losses.at(1));
  // Clips of 1 to 4 frames: the visual tokens a step trains on are 4 per real frame, fewer than 4 clips of 4 frames.
  double fewest = 1e9;
  for (const auto& [step, tokens] : metric(learn, "data/visual_tokens")) fewest = std::min(fewest, tokens);
  EXPECT_GE(fewest, 4 * 4);
  EXPECT_LT(fewest, 4 * 4 * 4);

  TrainFixture straight, split;
  make_video(straight, 8);
  make_video(split, 8);
  auto a = std::make_shared<RecordingHook>(), b = std::make_shared<RecordingHook>();
  auto steps = [&](int n) {
    std::vector<std::string> s = video_args({fmt::format("--train.max_steps={}", n)});
    s.insert(s.end(), arch.begin(), arch.end());
    return s;
  };
  straight.run(steps(8), {a});
  split.run(steps(5), {});
  EXPECT_EQ(split.run(steps(8), {b}).resumed_from, 5);
  for (int64_t step = 6; step <= 8; ++step) EXPECT_EQ(a->losses.at(step), b->losses.at(step)) << "step " << step;

  TrainFixture one, two;
  make_video(one, 16);
  make_video(two, 16);
  std::vector<std::string> one_args = steps(4), two_args = steps(4);
  one_args.push_back("--train.batch_size=8");
  two_args.insert(two_args.end(), {"--train.batch_size=4", "--distributed.dp_shard=2"});
  launch(one, 1, one_args);
  launch(two, 2, two_args);
  expect_close(metric(one, "train/loss"), metric(two, "train/loss"), 1, 4);
}

TEST(VideoTraining, JointDecoderLearnsFromPaddedClipsResumesBitExactlyAndMatchesOneRankOnTwo) {
  expect_video_trains_resumes_and_shards({});
}

TEST(VideoTraining, CrossAttentionLearnsFromPaddedClipsResumesBitExactlyAndMatchesOneRankOnTwo) {
  expect_video_trains_resumes_and_shards({"--vlm.arch=cross_attention", "--vlm.cross_attention_every_n_layers=1"});
}

TEST(VideoTraining, MotLearnsFromPaddedClipsResumesBitExactlyAndMatchesOneRankOnTwo) {
  expect_video_trains_resumes_and_shards({"--vlm.arch=mot"});
}

// Every expert takes all its modality's real tokens (capacity 1, no noise), so the routing does not depend on how the
// batch is split across ranks.
TEST(VideoTraining, MomaLearnsFromPaddedClipsResumesBitExactlyAndMatchesOneRankOnTwo) {
  expect_video_trains_resumes_and_shards(
      {"--vlm.arch=moma", "--vlm.moma_capacity_factor=1", "--vlm.moma_gumbel_noise=false"});
}

// [time_embedding] type = "sinusoidal": the same checks; and against the same run without it, step 1 is identical (the
// projection starts at zero) and later steps are not (it learns, and the frames' times then shape the loss).
TEST(VideoTraining, TheTimeEmbeddingStartsNeutralLearnsResumesBitExactlyAndMatchesOneRankOnTwo) {
  const std::string timed = "--time_embedding.type=sinusoidal";
  expect_video_trains_resumes_and_shards({timed});
  TrainFixture with, without;
  make_video(with, 8);
  make_video(without, 8);
  auto a = std::make_shared<RecordingHook>(), b = std::make_shared<RecordingHook>();
  with.run(video_args({"--train.max_steps=6", "--optimizer.lr=3e-3", timed}), {a});
  without.run(video_args({"--train.max_steps=6", "--optimizer.lr=3e-3"}), {b});
  EXPECT_EQ(a->losses.at(1), b->losses.at(1));
  EXPECT_NE(a->losses.at(6), b->losses.at(6));
}

// [eval] in a video run reads the clips at [eval] dataset_path through the [video] dataset_type plugin (here a
// manifest of the first four clips), in the run and through kforge eval; kforge generate refuses the checkpoint.
TEST(VideoTraining, EvaluatesTheClipsOfTheEvalPathInTheRunAndThroughKforgeEval) {
  TrainFixture fx;
  make_video(fx, 8);
  const auto eval_manifest = fx.root / "clips" / "eval.jsonl";
  {
    std::ifstream all(fx.root / "clips" / "manifest.jsonl");
    std::ofstream first(eval_manifest);
    std::string line;
    for (int i = 0; i < 4 && std::getline(all, line); ++i) first << line << "\n";
  }
  fx.run(video_args({"--train.max_steps=6", "--optimizer.lr=3e-3", "--eval.enabled=true", "--eval.interval=3",
                     "--eval.steps=1", "--eval.dataset_path=" + eval_manifest.string()}),
         {});
  const auto eval = metric(fx, "eval/loss");
  ASSERT_EQ(eval.size(), 2u);
  EXPECT_LT(eval.at(6), eval.at(3)) << "the model learns the captions it is evaluated on";
  std::string out;
  const std::string command = fmt::format("{} eval --checkpoint {} --eval.steps=1 --eval.dataset_path=", KFORGE_BIN,
                                          fx.checkpoint_dir.string());
  ASSERT_EQ(run_command(command + eval_manifest.string() + " 2>/dev/null", &out), 0) << out;
  const double loss = nlohmann::json::parse(out.substr(out.rfind('{'))).at("eval/loss").get<double>();
  EXPECT_NEAR(loss, eval.at(6), 1e-6 * loss) << out;
  // The eval path is where the clips are read from: a missing one is named.
  EXPECT_EQ(run_command(command + (fx.root / "nothing.jsonl").string() + " 2>&1", &out), 2) << out;
  expect_has(out, {"[eval] dataset_path = \"" + (fx.root / "nothing.jsonl").string() + "\""});
  EXPECT_EQ(
      run_command(fmt::format("{} generate --checkpoint {} --prompt see 2>&1", KFORGE_BIN, fx.checkpoint_dir.string()),
                  &out),
      2)
      << out;
  expect_has(out, {"was trained on video clips ([video] max_frames = 4)", "kforge eval"});
}

TEST(VideoTraining, RefusesWhatItCannotDoYetNamingTheKey) {
  TrainFixture fx;
  make_video(fx, 4);
  expect_has(config_error_of([&] {
               fx.run(video_args({"--eval.enabled=true", "--eval.file_pattern=*.jsonl",
                                  "--eval.dataset_path=" + (fx.root / "clips" / "manifest.jsonl").string()}),
                      {});
             }),
             {"[eval] file_pattern in a video run", "remove the key"});
  // Keys of the image data, which a video run would not read.
  expect_has(config_error_of([&] { fx.run(video_args({"--data.dataset_path=" + fx.root.string()}), {}); }),
             {"[data] dataset_path in a vision-language run", "[video] data_root", "remove the key"});
  expect_has(config_error_of([&] { fx.run(video_args({"--data.hf_image_size=16"}), {}); }),
             {"[data] hf_image_size in a vision-language run", "[video] frame_size"});
  expect_has(config_error_of([&] { fx.run(video_args({"--vlm.dataset=image_text"}), {}); }),
             {"[vlm] dataset in a video run", "remove the key"});
}

}  // namespace
}  // namespace kforge::test
