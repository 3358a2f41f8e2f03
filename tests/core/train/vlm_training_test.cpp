// A vision-language run through the trainer: the joint decoder over the random encoder and an MLP adapter, on
// JPEGs made here with a JSON Lines manifest. It learns (the loss falls), resumes bit-exactly, matches one rank on
// two FSDP ranks, skips a corrupt image with a warning, refuses what its data cannot combine with, and its checkpoint
// is refused by generate and eval with a message (they load text models only).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "data/webdataset_writer.h"
#include "generate/checkpoint_model.h"
#include "image_fixtures.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/launch_job.h"
#include "support/tiny_job_toml.h"
#include "support/tiny_tokenizer.h"
#include "vision_oracle.h"

namespace kforge::test {
namespace {

// The fixture's tiny text model (vocab 64, max_seq_len 32) behind 4 image tokens, with `images` 24x24 JPEGs; every
// caption the same text when `same_caption` (so every row has as many loss tokens, and a mean over ranks is the
// mean over the global batch), else one per image.
void make_vlm(TrainFixture& fx, int images, bool same_caption, int corrupt = -1) {
  const auto dir = fx.root / "images";
  std::filesystem::create_directories(dir);
  const char* words[] = {"red", "green", "blue", "black", "white", "grey", "pink", "brown"};
  std::ofstream manifest(dir / "manifest.jsonl");
  for (int i = 0; i < images; ++i) {
    const std::string name = fmt::format("img_{:02}.jpg", i);
    const std::string bytes = i == corrupt ? std::string("not a jpeg at all")
                                           : encode_jpeg(test_pattern(24, 24, static_cast<uint32_t>(i + 1)), 90);
    std::ofstream(dir / name, std::ios::binary) << bytes;
    const std::string caption =
        same_caption ? "a small photo" : fmt::format("a {} {} photo", words[i % 8], words[(i / 8 + 3) % 8]);
    manifest << fmt::format(R"({{"image": "{}", "text": "{}", "prompt": "see"}})", name, caption) << "\n";
  }
  const auto tokenizer = tiny_tokenizer(fx.root);
  // The fixture's config with image-text [data] in place of its text shards, and no [eval].
  fx.toml = tiny_job_toml(64, 20) +
            fmt::format(R"(
[vision_encoder]
type = "random"
num_tokens = 4
feature_dim = 16

[adapter]
type = "mlp_2layer"

[vlm]
max_text_len = 12

[data]
dataset_path = "{}"
tokenizer_path = "{}"
num_workers = 1
)",
                        (dir / "manifest.jsonl").string(), tokenizer.string()) +
            fx.output_toml();
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<std::string> vlm_args(std::vector<std::string> more) {
  std::vector<std::string> args = {"--scheduler.name=constant"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(VlmTraining, TheLossFallsOnImageCaptions) {
  TrainFixture fx;
  make_vlm(fx, 8, /*same_caption=*/false);
  auto hook = std::make_shared<RecordingHook>();
  const train::TrainingResult result = fx.run(vlm_args({"--train.max_steps=40", "--optimizer.lr=3e-3"}), {hook});
  EXPECT_EQ(result.step, 40);
  ASSERT_EQ(hook->losses.size(), 40u);
  // Captions of 3 words from 8, each image's own: log(64) = 4.2 nats per token at the start, and a model that
  // learns them (through the image tokens, which are the only thing telling the rows apart) far less.
  EXPECT_GT(hook->losses.at(1), 3.0);
  EXPECT_LT(hook->losses.at(40), 0.5 * hook->losses.at(1));
  // The step's data metrics: the captions' loss tokens and the 8 images' 4 tokens each per step.
  const auto visual = metric(fx, "data/visual_tokens");
  ASSERT_TRUE(visual.count(1));
  EXPECT_EQ(visual.at(1), 4 * 4);
  EXPECT_GT(metric(fx, "data/text_tokens_trained").at(1), 0);
}

TEST(VlmTraining, ReadsWebDatasetShardsWithoutAFilePatternAsTheManifestsSamples) {
  TrainFixture manifest, shards;
  make_vlm(manifest, 8, false);
  make_vlm(shards, 8, false);
  const auto dir = shards.root / "shards";
  data::WebDatasetWriteOptions write;
  write.manifest = shards.root / "images" / "manifest.jsonl";
  write.output = dir;
  write.samples_per_shard = 3;
  ASSERT_EQ(data::write_webdataset(write).shards.size(), 3u);
  // [data] file_pattern is not set: its "*.npy" default is for token shards, and the image-text plugin reads *.tar.
  auto a = std::make_shared<RecordingHook>(), b = std::make_shared<RecordingHook>();
  manifest.run(vlm_args({"--train.max_steps=3"}), {a});
  shards.run(vlm_args({"--train.max_steps=3", "--data.dataset_path=" + dir.string()}), {b});
  EXPECT_EQ(a->losses, b->losses);  // the same samples in the same order: the same training
}

TEST(VlmTraining, ResumingReproducesTheStraightRunBitExactly) {
  TrainFixture straight, split;
  make_vlm(straight, 8, false);
  make_vlm(split, 8, false);
  auto a = std::make_shared<RecordingHook>(), b = std::make_shared<RecordingHook>();
  straight.run(vlm_args({"--train.max_steps=12"}), {a});
  split.run(vlm_args({"--train.max_steps=5"}), {});  // checkpoint.interval 5: saved at step 5
  const train::TrainingResult resumed = split.run(vlm_args({"--train.max_steps=12"}), {b});
  EXPECT_EQ(resumed.resumed_from, 5);
  for (int64_t step = 6; step <= 12; ++step) EXPECT_EQ(a->losses.at(step), b->losses.at(step)) << "step " << step;
  const auto x = checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_12");
  const auto y = checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_12");
  ASSERT_EQ(x.model.size(), y.model.size());
  for (const auto& [name, t] : x.model) EXPECT_TRUE(at::equal(t, y.model.at(name))) << name;
  EXPECT_EQ(x.train_state.at("data"), y.train_state.at("data"));
}

TEST(VlmTraining, TwoFsdpRanksMatchOneRank) {
  TrainFixture one, two;
  make_vlm(one, 16, /*same_caption=*/true);
  make_vlm(two, 16, true);
  launch(one, 1, vlm_args({"--train.max_steps=6", "--train.batch_size=8"}));
  launch(two, 2, vlm_args({"--train.max_steps=6", "--train.batch_size=4", "--distributed.dp_shard=2"}));
  expect_close(metric(one, "train/loss"), metric(two, "train/loss"), 1, 6);
  EXPECT_EQ(metric(two, "data/visual_tokens").at(1), 8 * 4);
}

// The python3-torch oracle's SigLIP2 tower (16x16 images, 16 tokens of 32 features, safetensors under Hugging
// Face's names) in place of the random encoder.
void use_siglip2_tower(TrainFixture& fx) {
  const std::filesystem::path towers = vision_oracle_dir("vit_towers.py");
  ASSERT_FALSE(towers.empty());
  const std::string random = "type = \"random\"\nnum_tokens = 4\nfeature_dim = 16\n";
  const size_t at = fx.toml.find(random);
  ASSERT_NE(at, std::string::npos);
  fx.toml.replace(at, random.size(), fmt::format("type = \"siglip2\"\npath = \"{}\"\n", (towers / "siglip2").string()));
}

TEST(VlmTraining, APretrainedTowerStaysFrozenAndTwoFsdpRanksMatchOneRank) {
  TrainFixture one, two;
  for (TrainFixture* fx : {&one, &two}) {
    make_vlm(*fx, 16, /*same_caption=*/true);
    use_siglip2_tower(*fx);
  }
  const auto args = vlm_args({"--train.max_steps=4", "--train.seq_len=28", "--checkpoint.interval=2"});
  launch(one, 1, with(args, {"--train.batch_size=8"}));
  launch(two, 2, with(args, {"--train.batch_size=4", "--distributed.dp_shard=2"}));
  expect_close(metric(one, "train/loss"), metric(two, "train/loss"), 1, 4);
  // The tower's weights are the file's at every step (frozen, and sharded and gathered unchanged under FSDP); the
  // adapter's train.
  const auto tower = read_tensors(vision_oracle_dir("vit_towers.py") / "siglip2" / "model.safetensors");
  const auto step2 = checkpoint::CheckpointManager::load(two.checkpoint_dir / "step_2");
  const auto step4 = checkpoint::CheckpointManager::load(two.checkpoint_dir / "step_4");
  size_t frozen = 0, from_file = 0;
  for (const auto& [name, t] : step4.model) {
    if (name.rfind("vision_encoder.", 0) == 0) {
      ++frozen;
      EXPECT_TRUE(at::equal(t, step2.model.at(name))) << name;
      const std::string hf = name.substr(std::string("vision_encoder.").size());
      if (tower.count(hf) == 0) continue;
      ++from_file;
      EXPECT_TRUE(at::equal(t, tower.at(hf))) << name;
    } else if (name.rfind("adapter.", 0) == 0) {
      EXPECT_FALSE(at::equal(t, step2.model.at(name))) << name;
    }
  }
  EXPECT_GT(frozen, 10u);
  EXPECT_EQ(from_file, frozen);
}

TEST(VlmTraining, ACorruptImageIsSkippedWithAWarning) {
  TrainFixture fx;
  make_vlm(fx, 8, false, /*corrupt=*/3);
  testing::internal::CaptureStderr();
  testing::internal::CaptureStdout();
  const train::TrainingResult result = fx.run(vlm_args({"--train.max_steps=4"}), {});
  const std::string out = testing::internal::GetCapturedStdout() + testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.step, 4);
  expect_has(out, {"img_03.jpg"});
  const auto skipped = metric(fx, "data/images_skipped");
  ASSERT_TRUE(skipped.count(4));
  EXPECT_GE(skipped.at(4), 1);
}

TEST(VlmTraining, GenerateAndEvalRefuseTheCheckpointNamingIt) {
  TrainFixture fx;
  make_vlm(fx, 4, false);
  fx.run(vlm_args({"--train.max_steps=2"}), {});
  expect_has(config_error_of([&] { generate::load_checkpoint_model(fx.checkpoint_dir, fx.plugins->registry); }),
             {"step_2/config.toml", "is a vision-language model ([vlm] arch = \"joint_decoder\"", "--image"});
}

TEST(VlmTraining, RefusesDataItCannotCombineWith) {
  TrainFixture fx;
  make_vlm(fx, 4, false);
  expect_has(config_error_of([&] { fx.run(vlm_args({"--eval.enabled=true", "--eval.dataset_path=" + fx.data_dir.string()}), {}); }), {"[eval] enabled = true", "[vlm]"});
  expect_has(config_error_of([&] { fx.run(vlm_args({"--data.pack_sequences=true"}), {}); }),
             {"[data] pack_sequences", "vision-language"});
  expect_has(config_error_of([&] { fx.run(vlm_args({"--data.dataset_type=memmap"}), {}); }),
             {"[data] dataset_type", "[vlm] dataset"});
}

}  // namespace
}  // namespace kforge::test
