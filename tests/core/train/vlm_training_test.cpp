// A vision-language run through the trainer: the joint decoder (and the cross-attention strategy) over the random
// encoder and an MLP adapter, on JPEGs made here with a JSON Lines manifest. It learns (the loss falls; greedy
// generation from each image gives that image's caption), reads the same samples from WebDataset shards and from a
// Hugging Face dataset in the `datasets` cache, resumes bit-exactly, matches one rank on two FSDP ranks,
// skips a corrupt image with a warning, refuses what its data cannot combine with, and its checkpoint is refused with
// a message by the commands that load text models only.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "data/tokenizer.h"
#include "data/webdataset_writer.h"
#include "generate/checkpoint_model.h"
#include "generate/generate.h"
#include "generate/image_input.h"
#include "image_fixtures.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/hf_cache_fixture.h"
#include "support/launch_job.h"
#include "support/oracle.h"
#include "support/test_host.h"
#include "support/tiny_job_toml.h"
#include "support/tiny_tokenizer.h"
#include "vision_oracle.h"

namespace kforge::test {
namespace {

// The fixture's tiny text model (vocab 64, max_seq_len 32) behind 4 image tokens, with `images` 24x24 JPEGs captioned
// as `captions` says.
// How the fixture's images are captioned: all alike (every row then trains as many tokens), each its own, or each its
// own with the odd ones longer (a two-rank split of the rows trains different numbers of tokens on each rank).
enum class Captions { Same, PerImage, PerImageRagged };

void make_vlm(TrainFixture& fx, int images, Captions captions, int corrupt = -1) {
  const auto dir = fx.root / "images";
  std::filesystem::create_directories(dir);
  const char* words[] = {"red", "green", "blue", "black", "white", "grey", "pink", "brown"};
  std::ofstream manifest(dir / "manifest.jsonl");
  for (int i = 0; i < images; ++i) {
    const std::string name = fmt::format("img_{:02}.jpg", i);
    const std::string bytes = i == corrupt ? std::string("not a jpeg at all")
                                           : encode_jpeg(test_pattern(24, 24, static_cast<uint32_t>(i + 1)), 90);
    std::ofstream(dir / name, std::ios::binary) << bytes;
    std::string caption = captions == Captions::Same
                              ? "a small photo"
                              : fmt::format("a {} {} photo", words[i % 8], words[(i / 8 + 3) % 8]);
    if (captions == Captions::PerImageRagged && i % 2 == 1) caption += " of a sky over a big park";
    manifest << fmt::format(R"({{"image": "{}", "text": "{}", "prompt": "see"}})", name, caption) << "\n";
  }
  const auto tokenizer = tiny_tokenizer(fx.root);
  // The fixture's config with image-text [data] in place of its text shards, and no [eval].
  fx.toml = tiny_job_toml(64, 20) + tiny_vlm_toml() +
            fmt::format(R"(
[data]
dataset_path = "{}"
tokenizer_path = "{}"
num_workers = 1
)",
                        (dir / "manifest.jsonl").string(), tokenizer.string()) +
            fx.output_toml();
}

std::vector<std::string> vlm_args(std::vector<std::string> more) {
  std::vector<std::string> args = {"--scheduler.name=constant"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(VlmTraining, TheLossFallsOnImageCaptions) {
  TrainFixture fx;
  make_vlm(fx, 8, Captions::PerImage);
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
  make_vlm(manifest, 8, Captions::PerImage);
  make_vlm(shards, 8, Captions::PerImage);
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

// KempnerForge's image data path: [data] hf_dataset_name names a team's COCO-style export where load_dataset left it,
// in the `datasets` cache (Arrow files of an Image column, a caption and a question column, written by an independent
// writer, tests/oracles/write_arrow_coco.py, from the manifest's images and texts), read through
// hf_dataset_text_field and hf_dataset_prompt_field as KempnerForge reads them.
TEST(VlmTraining, AHuggingFaceDatasetInTheDatasetsCacheTrainsAsTheManifestOfTheSameSamples) {
  ASSERT_TRUE(oracle_available());
  TrainFixture manifest, hub;
  make_vlm(manifest, 8, Captions::PerImage);
  make_vlm(hub, 8, Captions::PerImage);
  std::string out;
  ASSERT_EQ(run_oracle("write_arrow_coco.py", {(hub.root / "converted").string(),
                                               (hub.root / "images" / "manifest.jsonl").string()},
                       &out),
            0)
      << out;
  const std::filesystem::path cache = hub.root / "hf_datasets";
  const std::filesystem::path fingerprint = cache / "team___coco-captions" / "default" / "0.0.0" / "0123abcd";
  std::filesystem::create_directories(fingerprint);
  std::filesystem::copy_file(hub.root / "converted" / "export" / "data-00000-of-00001.arrow",
                             fingerprint / "coco-captions-train.arrow");
  const ScopedEnv env(EnvVars{{"HF_DATASETS_CACHE", cache.string()}});
  auto a = std::make_shared<RecordingHook>(), b = std::make_shared<RecordingHook>();
  manifest.run(vlm_args({"--train.max_steps=3"}), {a});
  hub.run(vlm_args({"--train.max_steps=3", "--data.dataset_path=''", "--data.hf_dataset_name=team/coco-captions",
                    "--data.hf_dataset_text_field=caption", "--data.hf_dataset_prompt_field=question"}),
          {b});
  ASSERT_EQ(b->losses.size(), 3u);
  EXPECT_EQ(a->losses, b->losses);  // the same samples in the same order: the same training
}

TEST(VlmTraining, ResumingReproducesTheStraightRunBitExactly) {
  TrainFixture straight, split;
  make_vlm(straight, 8, Captions::PerImage);
  make_vlm(split, 8, Captions::PerImage);
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

// Evaluation on the image-text manifest every 3 steps, over its first 2 batches.
std::vector<std::string> eval_args(const TrainFixture& fx) {
  return {"--eval.enabled=true", "--eval.dataset_path=" + (fx.root / "images" / "manifest.jsonl").string(),
          "--eval.interval=3", "--eval.steps=2"};
}

// Captions of their own, the odd images' longer: rank 1's rows train more tokens than rank 0's, and the loss is still
// the token mean of the global batch (token_weights), in training and evaluation.
TEST(VlmTraining, TwoFsdpRanksMatchOneRankInTrainingAndEvaluation) {
  TrainFixture one, two;
  make_vlm(one, 16, Captions::PerImageRagged);
  make_vlm(two, 16, Captions::PerImageRagged);
  const std::vector<std::string> text = {"--vlm.max_text_len=28", "--train.seq_len=32"};
  launch(one, 1, vlm_args(with(eval_args(one), with(text, {"--train.max_steps=12", "--train.batch_size=8"}))));
  launch(two, 2,
         vlm_args(with(eval_args(two),
                       with(text, {"--train.max_steps=12", "--train.batch_size=4", "--distributed.dp_shard=2"}))));
  expect_close(metric(one, "train/loss"), metric(two, "train/loss"), 1, 12);
  EXPECT_EQ(metric(two, "data/visual_tokens").at(1), 8 * 4);
  // The same 16 images evaluated: 2 batches of 8 on one rank, of 4 on each of two.
  const auto eval_one = metric(one, "eval/loss"), eval_two = metric(two, "eval/loss");
  ASSERT_EQ(eval_one.size(), 4u);
  for (const int64_t step : {3, 6, 9, 12}) expect_close(eval_one, eval_two, step, step);
}

// [vlm] arch = "cross_attention": a cross-attention block after each of the two text blocks.
std::vector<std::string> cross_attention_args(std::vector<std::string> more) {
  more.insert(more.begin(), {"--vlm.arch=cross_attention", "--vlm.cross_attention_every_n_layers=1"});
  return vlm_args(more);
}

// tp = 2 and ep = 2 against one rank (both ranks of the group see the whole batch): the joint decoder's text model
// splits as in a text run (dense with untied embeddings: sequence parallelism, the image tokens cut with the text's
// positions; MoE: attention split, the experts shared out under ep), the encoder and adapter whole on every rank.
// Under ep the cross-attention strategy's text model shares out its experts the same way, and its cross-attention
// blocks, whole on every rank, see the same text and image tokens on each.
TEST(VlmTraining, TensorAndExpertParallelTwoRanksMatchOneRank) {
  using Arch = std::vector<std::string> (*)(std::vector<std::string>);
  const std::vector<std::string> moe = {"--model.num_experts=4", "--model.moe_top_k=2"};
  const std::vector<std::tuple<Arch, std::vector<std::string>, std::vector<std::string>>> variants = {
      {vlm_args, {}, {"--distributed.tp=2"}},
      {vlm_args, moe, {"--distributed.tp=2"}},
      {vlm_args, moe, {"--distributed.ep=2"}},
      {cross_attention_args, moe, {"--distributed.ep=2"}}};
  for (const auto& [arch, model, parallel] : variants) {
    const auto args = arch(with(model, {"--train.max_steps=6", "--train.batch_size=8"}));
    SCOPED_TRACE(fmt::format("{} {}", fmt::join(args, " "), fmt::join(parallel, " ")));
    TrainFixture one, two;
    make_vlm(one, 16, Captions::PerImageRagged);
    make_vlm(two, 16, Captions::PerImageRagged);
    launch(one, 1, args);
    std::string output;
    ASSERT_EQ(launch(two, 2, with(args, parallel), &output), 0) << output;
    expect_parity(two, one, 1, 6);
  }
}

// Sequence parallelism cuts the image tokens and the text positions each into tp equal parts; a count it cannot cut
// is refused naming both counts and the keys that set them.
TEST(VlmTraining, SequenceParallelismRefusesPositionsItCannotCutEvenly) {
  TrainFixture fx;
  make_vlm(fx, 8, Captions::Same);
  std::string output;
  EXPECT_NE(launch(fx, 2, vlm_args({"--train.max_steps=1", "--distributed.tp=2", "--vlm.max_text_len=11"}), &output),
            0);
  expect_has(output, {"sequence parallelism (tp = 2", "token positions and its 4 image-token positions",
                      "[vlm] max_text_len sets the text's", "divisible by [distributed] tp = 2"});
}

TEST(VlmTraining, EvaluationReadsTheImageTextEvalDataFromItsStartEachTime) {
  TrainFixture fx;
  make_vlm(fx, 8, Captions::PerImage);
  fx.run(vlm_args(with(eval_args(fx), {"--train.max_steps=30", "--optimizer.lr=3e-3"})), {});
  const auto eval = metric(fx, "eval/loss");
  ASSERT_EQ(eval.size(), 10u);
  EXPECT_LT(eval.at(30), 0.5 * eval.at(3)) << "the model learns the captions it is evaluated on";
  EXPECT_NEAR(metric(fx, "eval/perplexity").at(30), std::exp(eval.at(30)), 1e-6 * std::exp(eval.at(30)));
  // With the weights held still (an lr of 1e-30 moves no fp32 weight), every evaluation of one batch (half the
  // images) gives the same loss: each starts from the eval data's first batch, whatever the previous one read.
  TrainFixture still;
  make_vlm(still, 8, Captions::PerImage);
  still.run(vlm_args(with(eval_args(still), {"--train.max_steps=9", "--optimizer.lr=1e-30", "--eval.steps=1"})), {});
  const auto same = metric(still, "eval/loss");
  ASSERT_EQ(same.size(), 3u);
  EXPECT_EQ(same.at(3), same.at(6));
  EXPECT_EQ(same.at(3), same.at(9));
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

// Trains the SigLIP2 oracle tower's VLM (`more_toml` appended to its config) for 4 steps, checkpointing every 2, on one
// rank and on two FSDP ranks, and expects the same losses; returns the two-rank run's log.
std::string train_tower_on_one_and_two_ranks(TrainFixture& one, TrainFixture& two, const std::string& more_toml = "") {
  for (TrainFixture* fx : {&one, &two}) {
    make_vlm(*fx, 16, Captions::Same);
    use_siglip2_tower(*fx);
    fx->toml += more_toml;
  }
  const auto args = vlm_args({"--train.max_steps=4", "--train.seq_len=28", "--checkpoint.interval=2"});
  launch(one, 1, with(args, {"--train.batch_size=8"}));
  std::string log;
  launch(two, 2, with(args, {"--train.batch_size=4", "--distributed.dp_shard=2"}), &log);
  expect_close(metric(one, "train/loss"), metric(two, "train/loss"), 1, 4);
  return log;
}

TEST(VlmTraining, APretrainedTowerStaysFrozenAndTwoFsdpRanksMatchOneRank) {
  TrainFixture one, two;
  const std::string log = train_tower_on_one_and_two_ranks(one, two);
  EXPECT_NE(log.find("the vision encoder, frozen all run, is held whole"), std::string::npos) << log;
  // The tower's weights are the file's at every step (frozen, held whole by every FSDP rank and saved once); the
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

TEST(VlmTraining, AnEncoderAFreezeStageTrainsIsShardedTrainedFromThenAndTwoFsdpRanksMatchOneRank) {
  TrainFixture one, two;
  const std::string log = train_tower_on_one_and_two_ranks(
      one, two,
      "\n[[vlm.freeze_schedule]]\nstart_step = 2\n[[vlm.freeze_schedule.specs]]\nmodule = \"vision_encoder\"\n"
      "frozen = false\n");
  EXPECT_EQ(log.find("held whole"), std::string::npos) << log;
  const auto step2 = checkpoint::CheckpointManager::load(two.checkpoint_dir / "step_2");
  const auto step4 = checkpoint::CheckpointManager::load(two.checkpoint_dir / "step_4");
  const std::string patches = "vision_encoder.vision_model.embeddings.patch_embedding.weight";
  ASSERT_TRUE(step4.model.count(patches)) << patches;
  EXPECT_TRUE(at::equal(step2.model.at(patches),
                        read_tensors(vision_oracle_dir("vit_towers.py") / "siglip2" / "model.safetensors")
                            .at("vision_model.embeddings.patch_embedding.weight")))
      << "frozen for the first two updates";
  EXPECT_FALSE(at::equal(step4.model.at(patches), step2.model.at(patches)))
      << "the stage at step 2 trains the tower from the 3rd update";
}

TEST(VlmTraining, ACorruptImageIsSkippedWithAWarning) {
  TrainFixture fx;
  make_vlm(fx, 8, Captions::PerImage, /*corrupt=*/3);
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

// [vlm] arch = "mot" and "moma" (MoMa's experts pick every token, without noise, so that the routing does not depend
// on which rows share a rank's batch, as KempnerForge's expert choice does).
std::vector<std::string> mot_args(std::vector<std::string> more) {
  more.insert(more.begin(), "--vlm.arch=mot");
  return vlm_args(more);
}
std::vector<std::string> moma_args(std::vector<std::string> more) {
  more.insert(more.begin(), {"--vlm.arch=moma", "--vlm.moma_capacity_factor=1", "--vlm.moma_gumbel_noise=false"});
  return vlm_args(more);
}

// The loss falls (then `learned` checks the trained fixture), resuming reproduces the straight run bit-exactly, and
// two FSDP ranks match one rank.
void expect_trains_resumes_and_shards(const std::function<std::vector<std::string>(std::vector<std::string>)>& arch,
                                      const std::function<void(TrainFixture&)>& learned = {}) {
  TrainFixture learn;
  make_vlm(learn, 8, Captions::PerImage);
  auto losses = std::make_shared<RecordingHook>();
  learn.run(arch({"--train.max_steps=30", "--optimizer.lr=3e-3"}), {losses});
  ASSERT_EQ(losses->losses.size(), 30u);
  EXPECT_GT(losses->losses.at(1), 3.0);
  EXPECT_LT(losses->losses.at(30), 0.5 * losses->losses.at(1));
  if (learned) learned(learn);

  TrainFixture straight, split;
  make_vlm(straight, 8, Captions::PerImage);
  make_vlm(split, 8, Captions::PerImage);
  auto a = std::make_shared<RecordingHook>(), b = std::make_shared<RecordingHook>();
  straight.run(arch({"--train.max_steps=8"}), {a});
  split.run(arch({"--train.max_steps=5"}), {});
  EXPECT_EQ(split.run(arch({"--train.max_steps=8"}), {b}).resumed_from, 5);
  for (int64_t step = 6; step <= 8; ++step) EXPECT_EQ(a->losses.at(step), b->losses.at(step)) << "step " << step;
  const auto x = checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_8");
  const auto y = checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_8");
  for (const auto& [name, t] : x.model) EXPECT_TRUE(at::equal(t, y.model.at(name))) << name;

  TrainFixture one, two;
  make_vlm(one, 16, Captions::Same);
  make_vlm(two, 16, Captions::Same);
  launch(one, 1, arch({"--train.max_steps=6", "--train.batch_size=8"}));
  launch(two, 2, arch({"--train.max_steps=6", "--train.batch_size=4", "--distributed.dp_shard=2"}));
  expect_close(metric(one, "train/loss"), metric(two, "train/loss"), 1, 6);
}

TEST(VlmTraining, CrossAttentionTrainsItsZeroInitialisedBlocksResumesBitExactlyAndMatchesOneRankOnTwo) {
  expect_trains_resumes_and_shards(cross_attention_args, [](TrainFixture& fx) {
    // The images reach the text only through the blocks, whose outputs start at zero: the last block's output
    // projection has left zero, and the step counts the adapter's tokens, which are keys and values here.
    const auto saved = checkpoint::CheckpointManager::load(fx.checkpoint_dir / "step_30");
    const at::Tensor o_proj = saved.model.at("transformer.cross_attention_layers.1.attention.o_proj.weight");
    EXPECT_GT(o_proj.abs().max().item<double>(), 0.0);
    EXPECT_EQ(metric(fx, "data/visual_tokens").at(1), 4 * 4);
  });
}

TEST(VlmTraining, MixtureOfTransformersTrainsResumesBitExactlyAndMatchesOneRankOnTwo) {
  expect_trains_resumes_and_shards(mot_args);
}

// A MoT run warm-started from a trained joint-decoder run starts from what it learned: its first loss is far below a
// cold start's, the copies are the dense weights at step 0, and two FSDP ranks (the copy is made before sharding) match
// one rank.
TEST(VlmTraining, MixtureOfTransformersWarmStartedFromAJointDecoderRunStartsFromWhatItLearned) {
  TrainFixture dense;
  make_vlm(dense, 8, Captions::Same);
  dense.run(vlm_args({"--train.max_steps=30", "--optimizer.lr=3e-3"}), {});
  const auto source = checkpoint::CheckpointManager::load(dense.checkpoint_dir / "step_30");
  const std::vector<std::string> warm = {"--vlm.mot_warm_start_from_text=true",
                                         "--vlm.mot_warm_start_path=" + (dense.checkpoint_dir / "step_30").string(),
                                         "--train.max_steps=2", "--checkpoint.interval=1", "--optimizer.lr=1e-3"};
  TrainFixture cold_fx, warm_fx;
  for (TrainFixture* fx : {&cold_fx, &warm_fx}) make_vlm(*fx, 8, Captions::Same);
  auto cold = std::make_shared<RecordingHook>(), warmed = std::make_shared<RecordingHook>();
  cold_fx.run(mot_args({"--train.max_steps=1", "--optimizer.lr=1e-3"}), {cold});
  warm_fx.run(mot_args(warm), {warmed});
  EXPECT_LT(warmed->losses.at(1), 0.5 * cold->losses.at(1));
  // The step-1 checkpoint holds the copies after one AdamW update, which moves an element by at most lr (plus lr x
  // weight_decay x |w|, well under lr / 5 here): each modality's copy is the dense weight within that.
  const auto step1 = checkpoint::CheckpointManager::load(warm_fx.checkpoint_dir / "step_1");
  for (const char* m : {"image", "text"}) {
    const std::string copy = fmt::format("transformer.layers.1.mlp.{}.gate_proj.weight", m);
    const at::Tensor from = source.model.at("transformer.layers.1.mlp.gate_proj.weight");
    EXPECT_LE((step1.model.at(copy) - from).abs().max().item<double>(), 1.2 * 1e-3) << copy;
    EXPECT_GT(from.abs().max().item<double>(), 0.05) << "a weight far from what an update could reach from zero";
  }

  TrainFixture one, two;
  for (TrainFixture* fx : {&one, &two}) make_vlm(*fx, 16, Captions::Same);
  launch(one, 1, mot_args(with(warm, {"--train.batch_size=8"})));
  launch(two, 2, mot_args(with(warm, {"--train.batch_size=4", "--distributed.dp_shard=2"})));
  expect_close(metric(one, "train/loss"), metric(two, "train/loss"), 1, 2);
}

TEST(VlmTraining, MixtureOfModalityAwareExpertsTrainsResumesBitExactlyAndMatchesOneRankOnTwo) {
  expect_trains_resumes_and_shards(moma_args);
}

// Trains `args` on 8 images with captions of their own, then greedily continues the prompt "see" about each image
// with the checkpoint, as kforge generate --image does: returns how many of the 8 captions come back exactly.
// `also` gets the trained fixture.
int captions_generated(const std::vector<std::string>& args, const std::function<void(TrainFixture&)>& also = {}) {
  TrainFixture fx;
  make_vlm(fx, 8, Captions::PerImage);
  fx.run(args, {});
  if (also) also(fx);
  const generate::CheckpointModel ckpt = generate::load_checkpoint_model(fx.checkpoint_dir, fx.plugins->registry, {},
                                                                         generate::ModelKinds::TextAndVisionLanguage);
  const data::Tokenizer tokenizer(ckpt.job.data.tokenizer_path);
  const std::vector<int> prompt = tokenizer.encode("see");
  const char* words[] = {"red", "green", "blue", "black", "white", "grey", "pink", "brown"};
  int right = 0;
  for (int i = 0; i < 8; ++i) {
    const auto image = fx.root / "images" / fmt::format("img_{:02}.jpg", i);
    ckpt.vision_language->set_images(generate::read_image(ckpt, fx.plugins->registry, image.string()).unsqueeze(0));
    generate::GenerateOptions greedy;
    greedy.max_new_tokens = 24;
    greedy.temperature = 0;
    greedy.eos_id = tokenizer.eos_id();
    std::vector<int64_t> out = generate::generate(*ckpt.model, {{prompt.begin(), prompt.end()}}, greedy).at(0);
    out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(prompt.size()));
    out.erase(std::find(out.begin(), out.end(), greedy.eos_id), out.end());
    right += tokenizer.decode(out) == fmt::format("a {} {} photo", words[i], words[3]);
  }
  return right;
}

TEST(VlmTraining, GenerationFromEachImageGivesItsOwnCaption) {
  // The rows differ only in their image, so a model blind to it gets at most one caption right. All 8 came back on
  // the CPU this was written on; 7 leaves room for another CPU's rounding.
  // Text of 24 tokens holds the prompt, the caption and EOS (the tokenizer's pieces are short).
  const std::vector<std::string> steps = {"--train.max_steps=150", "--optimizer.lr=3e-3", "--vlm.max_text_len=24",
                                          "--train.seq_len=28"};
  // The same through the binary: --image is read by the checkpoint's dataset plugin, and is required.
  const auto command_line = [](TrainFixture& fx) {
    const std::string generate = fmt::format(
        "{} generate --checkpoint {} --prompt see --temperature 0 "
        "--max-new-tokens 24",
        KFORGE_BIN, fx.checkpoint_dir.string());
    std::string out;
    EXPECT_EQ(
        run_command(fmt::format("{} --image {} 2>&1", generate, (fx.root / "images" / "img_01.jpg").string()), &out), 0)
        << out;
    EXPECT_NE(out.find("a green black photo"), std::string::npos) << out;
    EXPECT_EQ(run_command(generate + " 2>&1", &out), 2) << out;
    expect_has(out, {"is a vision-language model ([vlm] arch = \"joint_decoder\")", "give --image PATH"});
    EXPECT_EQ(run_command(fmt::format("{} --image {} 2>&1", generate, (fx.root / "nothing.png").string()), &out), 2);
    expect_has(out, {"the image: cannot read", "nothing.png", "No such file or directory"});
  };
  EXPECT_GE(captions_generated(vlm_args(steps), command_line), 7) << "joint_decoder";
  EXPECT_GE(captions_generated(cross_attention_args(steps)), 7) << "cross_attention";
}

TEST(VlmTraining, KforgeEvalOfTheCheckpointGivesTheRunsFinalEvaluation) {
  TrainFixture fx;
  make_vlm(fx, 8, Captions::PerImage);
  fx.run(vlm_args(with(eval_args(fx), {"--train.max_steps=6"})), {});  // evaluated at steps 3 and 6
  std::string out;
  ASSERT_EQ(
      run_command(fmt::format("{} eval --checkpoint {} --eval.dataset_path={} --eval.steps=2 2>/dev/null", KFORGE_BIN,
                              fx.checkpoint_dir.string(), (fx.root / "images" / "manifest.jsonl").string()),
                  &out),
      0)
      << out;
  const std::string json = out.substr(out.rfind('{'));
  const double loss = nlohmann::json::parse(json).at("eval/loss").get<double>();
  EXPECT_NEAR(loss, metric(fx, "eval/loss").at(6), 1e-6 * loss) << out;
}

TEST(VlmTraining, KforgeEvalOnTwoRanksPrintsOneRanksLossBitForBit) {
  TrainFixture fx;
  make_vlm(fx, 8, Captions::PerImage);
  fx.run(vlm_args({"--train.max_steps=2"}), {});
  // 3 batches of image-text data: rank 0 scores two, rank 1 one.
  const std::string eval = fmt::format("eval --checkpoint {} --eval.dataset_path={} --eval.steps=3",
                                       fx.checkpoint_dir.string(), (fx.root / "images" / "manifest.jsonl").string());
  std::string one;
  ASSERT_EQ(run_command(fmt::format("{} {} 2>/dev/null", KFORGE_BIN, eval), &one), 0) << one;
  const std::filesystem::path logs = fx.root / "eval_logs";
  std::string two;
  ASSERT_EQ(run_command(fmt::format("{} launch --nproc-per-node 2 --log-dir {} -- {} 2>&1", KFORGE_BIN,
                                    logs.string(), eval),
                        &two),
            0)
      << two;
  std::ifstream rank0(logs / "rank_0.log");
  const std::string log((std::istreambuf_iterator<char>(rank0)), std::istreambuf_iterator<char>());
  const std::string line = one.substr(one.rfind("{\"eval/loss\""));
  EXPECT_NE(log.find(line), std::string::npos) << "one process: " << line << "rank 0 of two:\n" << log;
}

TEST(VlmTraining, CommandsForTextModelsRefuseTheCheckpointNamingIt) {
  TrainFixture fx;
  make_vlm(fx, 4, Captions::PerImage);
  fx.run(vlm_args({"--train.max_steps=2"}), {});
  expect_has(config_error_of([&] { generate::load_checkpoint_model(fx.checkpoint_dir, fx.plugins->registry); }),
             {"step_2/config.toml", "is a vision-language model ([vlm] arch = \"joint_decoder\"",
              "this command loads text models only", "kforge generate --image"});
}

TEST(VlmTraining, RefusesDataItCannotCombineWith) {
  TrainFixture fx;
  make_vlm(fx, 4, Captions::PerImage);
  expect_has(config_error_of([&] { fx.run(vlm_args({"--data.pack_sequences=true"}), {}); }),
             {"[data] pack_sequences", "vision-language"});
  expect_has(config_error_of([&] { fx.run(vlm_args({"--data.dataset_type=memmap"}), {}); }),
             {"[data] dataset_type", "[vlm] dataset"});
  // The columns of a Hugging Face dataset, without one: the manifest's fields are fixed.
  expect_has(config_error_of([&] { fx.run(vlm_args({"--data.hf_dataset_prompt_field=question"}), {}); }),
             {"[data] hf_dataset_prompt_field",
              "names a column of the [data] hf_dataset_name dataset, which is not set"});
  // A JSON Lines export holds no images.
  std::ofstream(fx.root / "train.jsonl") << "{\"text\": \"a caption\"}\n";
  const std::string jsonl = "--data.hf_dataset_name=" + (fx.root / "train.jsonl").string();
  expect_has(config_error_of([&] { fx.run(vlm_args({"--data.dataset_path=''", jsonl}), {}); }),
             {"[data] hf_dataset_name = ", "train.jsonl' is not an Arrow file"});
}

}  // namespace
}  // namespace kforge::test
