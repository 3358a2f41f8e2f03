// Training from a local Hugging Face dataset exported to JSON Lines ([data] hf_dataset_name, [eval]
// hf_dataset_name, a [[data.datasets]] source's hf_name): rank 0 tokenises each split once into a token
// cache under KFORGE_CACHE_DIR, the run trains and evaluates on it, so does `kforge eval`, and a later run
// (a mixture reading the same export) reads the cache without tokenising again; two ranks tokenise once; a bad
// line fails the run and leaves no partial cache; the dry run checks the export and tokenises nothing; a save_to_disk
// directory of Arrow files trains on its text column. KempnerForge's
// hf_wikitext preset streams an export ([data] hf_streaming): no cache, and a stopped run resumes bit for bit.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/train/train_fixture.h"
#include "kforge/sdk/error.h"
#include "plugins/components.h"
#include "support/expect_text.h"
#include "support/launch_job.h"
#include "support/oracle.h"
#include "support/read_file.h"
#include "support/test_host.h"
#include "support/tiny_tokenizer.h"
#include "train/preflight.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

// Documents of random lowercase words, as JSON Lines with the text under "content" and another member.
void write_jsonl(const fs::path& file, int documents, unsigned seed) {
  std::mt19937 rng(seed);
  std::ofstream out(file);
  for (int d = 0; d < documents; ++d) {
    std::string text;
    for (int w = 0; w < 12; ++w) {
      for (int c = 0, len = 2 + static_cast<int>(rng() % 5); c < len; ++c) text += static_cast<char>('a' + rng() % 26);
      text += ' ';
    }
    out << nlohmann::json{{"id", d}, {"content", text}}.dump() << "\n";
  }
}

void replace_in(std::string& toml, const std::string& from, const std::string& to) {
  const size_t at = toml.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  toml.replace(at, from.size(), to);
}

constexpr int kTrainDocs = 2 * 60, kValidationDocs = 30;

// The fixture's training and eval data replaced by an export (two train shards and a validation split)
// under root/export, tokenised with the tiny tokenizer; caches go to root/cache.
struct HfFixture {
  TrainFixture fx;
  fs::path export_dir = fx.root / "export", cache = fx.root / "cache";

  HfFixture() {
    fs::create_directories(export_dir);
    write_jsonl(export_dir / "train-00000-of-00002.jsonl", kTrainDocs / 2, 1);
    write_jsonl(export_dir / "train-00001-of-00002.jsonl", kTrainDocs / 2, 2);
    write_jsonl(export_dir / "validation.jsonl", kValidationDocs, 3);
    const fs::path tokenizer = tiny_tokenizer(fx.root);
    replace_in(fx.toml, fmt::format("[data]\ndataset_path = \"{}\"\n", fx.data_dir.string()),
               fmt::format("[data]\nhf_dataset_name = \"{}\"\nhf_dataset_text_field = \"content\"\ntokenizer_path = "
                           "\"{}\"\n",
                           export_dir.string(), tokenizer.string()));
    replace_in(fx.toml, fmt::format("[eval]\ndataset_path = \"{}\"\n", (fx.data_dir / "eval").string()),
               fmt::format("[eval]\nhf_dataset_name = \"{}\"\n", export_dir.string()));
    ::setenv("KFORGE_CACHE_DIR", cache.c_str(), 1);
  }
  ~HfFixture() { ::unsetenv("KFORGE_CACHE_DIR"); }

  // The caches' directories, with their metadata.json's modification time.
  std::map<std::string, fs::file_time_type> caches() const {
    std::map<std::string, fs::file_time_type> out;
    if (!fs::is_directory(cache / "hf")) return out;
    for (const auto& entry : fs::directory_iterator(cache / "hf")) {
      out[entry.path().filename().string()] = fs::last_write_time(entry.path() / "metadata.json");
    }
    return out;
  }
};

TEST(HfExport, TrainsAndEvaluatesFromTheExportAndALaterRunReadsTheCacheWithoutTokenising) {
  HfFixture hf;
  const train::TrainingResult result = hf.fx.run({"--eval.enabled=true", "--train.max_steps=5"}, {});
  ASSERT_EQ(result.step, 5);
  const auto caches = hf.caches();
  ASSERT_EQ(caches.size(), 2u) << "one token cache per split";
  for (const auto& [name, time] : caches) {
    const nlohmann::json meta = read_json(hf.cache / "hf" / name / "metadata.json");
    const bool validation = name.find("-validation-") != std::string::npos;
    EXPECT_EQ(meta["documents"]["train"], validation ? kValidationDocs : kTrainDocs) << name;
    EXPECT_EQ(meta["sources"].size(), validation ? 1u : 2u) << name;
    EXPECT_EQ(meta["text_field"], "content") << name;
  }
  const auto eval_loss = metric(hf.fx, "eval/loss");
  ASSERT_EQ(eval_loss.count(5), 1u) << "no eval on the validation split";
  EXPECT_TRUE(std::isfinite(eval_loss.at(5)));
  EXPECT_TRUE(std::isfinite(metric(hf.fx, "train/loss").at(5)));

  // kforge eval on the checkpoint reads the validation split's cache too: the same loss.
  std::string evaluated;
  ASSERT_EQ(
      run_command(fmt::format("'{}' eval --checkpoint '{}'", KFORGE_BIN, hf.fx.checkpoint_dir.string()), &evaluated), 0)
      << evaluated;
  const nlohmann::json line = nlohmann::json::parse(evaluated.substr(evaluated.rfind("{\"")));
  EXPECT_NEAR(line.at("eval/loss").get<double>(), eval_loss.at(5), 1e-6 * eval_loss.at(5)) << evaluated;

  // A mixture of the export (hf_name, [data]'s split and text field) and shards reads the same train
  // cache: no cache is written again and none is added, and the export is not read: a shard damaged in
  // place (same size and time, so the same key) would fail a tokenisation.
  const fs::path shard = hf.export_dir / "train-00000-of-00002.jsonl";
  const fs::file_time_type shard_time = fs::last_write_time(shard);
  std::fstream(shard, std::ios::in | std::ios::out | std::ios::binary).put('X');
  fs::last_write_time(shard, shard_time);
  TrainFixture mix;
  mix.toml = hf.fx.toml;
  replace_in(mix.toml, fmt::format("hf_dataset_name = \"{}\"\n", hf.export_dir.string()), "");
  replace_in(mix.toml, fmt::format("dir = \"{}\"", hf.fx.checkpoint_dir.string()),
             fmt::format("dir = \"{}\"", mix.checkpoint_dir.string()));
  mix.toml += fmt::format(
      "[[data.datasets]]\nhf_name = \"{}\"\nname = \"web\"\n[[data.datasets]]\npath = \"{}\"\nname = \"npy\"\n",
      hf.export_dir.string(), mix.data_dir.string());
  const train::TrainingResult mixed = mix.run({"--train.max_steps=4"}, {});
  ASSERT_EQ(mixed.step, 4);
  EXPECT_EQ(hf.caches(), caches) << "a cache was written again";
  EXPECT_GT(metric(mix, "data/web/tokens").at(4), 0);
}

TEST(HfExport, TwoRanksTokeniseOnceAndTrain) {
  HfFixture hf;
  std::vector<std::string> args = replicated_over(2);
  args.insert(args.end(), {"--train.batch_size=2", "--train.max_steps=3"});
  std::string output;
  ASSERT_EQ(launch(hf.fx, 2, args, &output), 0) << output;
  const std::string said = "tokenising 2 file(s) of split 'train'";
  const size_t first = output.find(said);
  EXPECT_NE(first, std::string::npos) << output;
  EXPECT_EQ(output.find(said, first + 1), std::string::npos) << "tokenised twice:\n" << output;
  EXPECT_EQ(hf.caches().size(), 1u);
  EXPECT_EQ(metric(hf.fx, "train/loss").size(), 3u);
}

// A line that is not JSON stops the tokenisation naming the file and line, and the half-written
// cache is removed: no directory is left under the cache root for a later run to trip over.
TEST(HfExport, ABadLineFailsTheRunNamingItAndLeavesNoPartialCache) {
  HfFixture hf;
  std::ofstream(hf.export_dir / "train-00001-of-00002.jsonl", std::ios::app) << "{not json\n";
  try {
    hf.fx.run({"--train.max_steps=2"}, {});
    ADD_FAILURE() << "a run on an export with a bad line trained";
  } catch (const std::exception& e) {
    expect_has(e.what(),
               {"[data] hf_dataset_name = \"", "tokenising the export failed",
                "train-00001-of-00002.jsonl' line 61: not valid JSON", "fix or remove the line in the export"});
  }
  ASSERT_TRUE(fs::is_directory(hf.cache / "hf"));
  EXPECT_TRUE(fs::is_empty(hf.cache / "hf")) << fs::directory_iterator(hf.cache / "hf")->path();
}

// A directory that `datasets`' save_to_disk wrote (Arrow IPC streams, here from tests/oracles/write_arrow_dataset.py,
// written from the Arrow specification) trains through the token cache: its documents are the text column's
// non-empty values (nulls skipped, empty strings counted as empty documents), and [data] hf_streaming refuses it.
TEST(HfExport, ASaveToDiskArrowDirectoryTrainsOnItsTextColumn) {
  ASSERT_TRUE(oracle_available());
  HfFixture hf;
  const fs::path saved = hf.fx.root / "saved";
  std::string out;
  ASSERT_EQ(run_oracle("write_arrow_dataset.py", {saved.string(), "large_utf8", "20"}, &out), 0) << out;
  int64_t documents = 0, empty = 0;
  const nlohmann::json written = nlohmann::json::parse(out);
  for (const auto& text : written["texts"]) ++(text.get<std::string>().empty() ? empty : documents);
  replace_in(hf.fx.toml,
             fmt::format("hf_dataset_name = \"{}\"\nhf_dataset_text_field = \"content\"", hf.export_dir.string()),
             fmt::format("hf_dataset_name = \"{}\"\nhf_dataset_text_field = \"text\"", saved.string()));
  const train::TrainingResult result = hf.fx.run({"--eval.enabled=false", "--train.max_steps=3"}, {});
  ASSERT_EQ(result.step, 3);
  const auto caches = hf.caches();
  ASSERT_EQ(caches.size(), 1u);
  const nlohmann::json meta = read_json(hf.cache / "hf" / caches.begin()->first / "metadata.json");
  EXPECT_EQ(meta["documents"]["train"], documents);
  EXPECT_EQ(meta["empty_documents"], empty);
  EXPECT_EQ(meta["text_field"], "text");
  EXPECT_TRUE(std::isfinite(metric(hf.fx, "train/loss").at(3)));
  for (const auto& entry : fs::directory_iterator(hf.cache / "hf")) {
    EXPECT_EQ(entry.path().extension(), "") << "a JSON Lines copy was left: " << entry.path();
  }

  const config::JobConfig streamed = hf.fx.job({"--eval.enabled=false", "--data.hf_streaming=true"});
  try {
    train::preflight(streamed, plugins::Components(hf.fx.plugins->registry, streamed), 1);
    ADD_FAILURE() << "a streamed Arrow export passed";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"data-00000-of-00002.arrow' is an Arrow file, which [data] hf_streaming does not read",
                          "set hf_streaming = false"});
  }
}

TEST(HfExport, TheDryRunChecksTheExportAndTokenisesNothing) {
  HfFixture hf;
  const config::JobConfig job = hf.fx.job({"--eval.enabled=true"});
  const train::Preflight checked = train::preflight(job, plugins::Components(hf.fx.plugins->registry, job), 1);
  EXPECT_EQ(checked.train_data, nullptr);
  EXPECT_EQ(checked.eval_data, nullptr);
  ASSERT_EQ(checked.warnings.size(), 2u);
  expect_has(checked.warnings[0], {"[data] hf_dataset_name = \"", "not tokenised yet"});
  expect_has(checked.warnings[1], {"[eval] hf_dataset_name = \"", "not tokenised yet"});
  EXPECT_FALSE(fs::exists(hf.cache / "hf"));

  const config::JobConfig no_split = hf.fx.job({"--eval.enabled=true", "--eval.hf_dataset_split=test"});
  try {
    train::preflight(no_split, plugins::Components(hf.fx.plugins->registry, no_split), 1);
    ADD_FAILURE() << "an export without the split passed";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(),
               {"[eval] hf_dataset_name = \"", "no JSON Lines or Arrow file of split 'test'", "'validation.jsonl'"});
  }
}

// A streamed export is only checked before the run: nothing is tokenised or cached, and [data] num_workers (its
// tokenising threads) draws no "no effect" warning.
TEST(HfStreaming, TheDryRunChecksTheExportCachesNothingAndHonoursNumWorkers) {
  HfFixture hf;
  const config::JobConfig job = hf.fx.job({"--data.hf_streaming=true", "--data.num_workers=8"});
  const train::Preflight checked = train::preflight(job, plugins::Components(hf.fx.plugins->registry, job), 1);
  EXPECT_EQ(checked.train_data, nullptr);
  for (const std::string& w : checked.warnings) EXPECT_EQ(w.find("num_workers"), std::string::npos) << w;
  EXPECT_FALSE(fs::exists(hf.cache / "hf"));
  const config::JobConfig no_split = hf.fx.job({"--data.hf_streaming=true", "--data.hf_dataset_split=test"});
  try {
    train::preflight(no_split, plugins::Components(hf.fx.plugins->registry, no_split), 1);
    ADD_FAILURE() << "a streamed export without the split passed";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"[data] hf_dataset_name = \"", "no JSON Lines or Arrow file of split 'test'"});
  }
}

// Two ranks stream their shares (2 tokenising threads each); two runs of 3 steps, the second resuming the first's
// checkpoint (each rank its own position among the gathered entries), log the losses of one run of 6.
TEST(HfStreaming, TwoRanksStoppedAndResumedLoseAsAnUninterruptedRun) {
  HfFixture straight, split;
  std::vector<std::string> args = replicated_over(2);
  args.insert(args.end(), {"--data.hf_streaming=true", "--data.num_workers=2", "--data.hf_streaming_shuffle_buffer=16",
                           "--train.batch_size=2", "--eval.enabled=false"});
  std::string output;
  ASSERT_EQ(launch(straight.fx, 2, with(args, {"--train.max_steps=6"}), &output), 0) << output;
  ASSERT_EQ(launch(split.fx, 2, with(args, {"--train.max_steps=3"}), &output), 0) << output;
  ASSERT_EQ(launch(split.fx, 2, with(args, {"--train.max_steps=6"}), &output), 0) << output;
  EXPECT_NE(output.find("resumed from step 3"), std::string::npos) << output;
  const auto all = metric(straight.fx, "train/loss"), resumed = metric(split.fx, "train/loss");
  ASSERT_EQ(all.size(), 6u);
  for (int64_t step = 4; step <= 6; ++step) EXPECT_EQ(resumed.at(step), all.at(step)) << "step " << step;
  EXPECT_FALSE(fs::exists(straight.cache / "hf"));
}

// configs/train/hf_wikitext.toml scaled down, streaming an export laid out as wikitext-103-raw-v1's with its 4
// tokenising threads: the loss falls, no token cache is written, and a run stopped at step 4 and resumed trains on
// the same token stream as an uninterrupted one: the same losses, bit for bit.
TEST(HfStreaming, TheHfWikitextPresetTrainsOnAStreamedExportAndAStoppedRunResumesBitExactly) {
  TrainFixture straight, split;
  const fs::path export_dir = straight.root / "wikitext", cache = straight.root / "cache";
  fs::create_directories(export_dir / "wikitext-103-raw-v1");
  write_jsonl(export_dir / "wikitext-103-raw-v1" / "train-00000-of-00002.jsonl", kTrainDocs / 2, 1);
  write_jsonl(export_dir / "wikitext-103-raw-v1" / "train-00001-of-00002.jsonl", kTrainDocs / 2, 2);
  const fs::path tokenizer = tiny_tokenizer(straight.root);
  ::setenv("KFORGE_CACHE_DIR", cache.c_str(), 1);
  const auto overrides = [&](const TrainFixture& fx) {
    return std::vector<std::string>{"--model.dim=64", "--model.n_layers=2", "--model.n_heads=4", "--model.n_kv_heads=2",
                                    "--model.ffn_hidden_dim=128", "--model.vocab_size=64", "--model.max_seq_len=32",
                                    "--train.seq_len=16", "--train.batch_size=2", "--train.max_steps=10",
                                    "--train.device=cpu", "--scheduler.warmup_steps=1", "--optimizer.lr=1e-2",
                                    "--data.hf_dataset_name=" + export_dir.string(),
                                    "--data.hf_dataset_text_field=content", "--data.tokenizer_path=" + tokenizer.string(),
                                    "--data.hf_streaming_shuffle_buffer=32",
                                    "--checkpoint.dir=" + fx.checkpoint_dir.string(), "--checkpoint.interval=1000",
                                    "--metrics.log_interval=1", "--metrics.run_dir=" + (fx.root / "run").string()};
  };
  for (TrainFixture* fx : {&straight, &split}) {
    fx->toml = read_file(std::string(KFORGE_SOURCE_DIR) + "/configs/train/hf_wikitext.toml");
  }
  auto all = std::make_shared<RecordingHook>();
  straight.run(overrides(straight), {all});
  ::unsetenv("KFORGE_CACHE_DIR");
  ASSERT_EQ(all->losses.size(), 10u);
  EXPECT_LT(all->losses.at(10), all->losses.at(1));
  EXPECT_FALSE(fs::exists(cache)) << "a streamed export was tokenised into a cache";

  auto first = std::make_shared<RecordingHook>();
  first->stop_at = 4;
  EXPECT_EQ(split.run(overrides(split), {first}).step, 4);
  auto second = std::make_shared<RecordingHook>();
  const train::TrainingResult resumed = split.run(overrides(split), {second});
  EXPECT_EQ(resumed.resumed_from, 4);
  ASSERT_EQ(second->losses.size(), 6u);
  for (int64_t step = 5; step <= 10; ++step) {
    EXPECT_EQ(second->losses.at(step), all->losses.at(step)) << "step " << step;
  }
}

}  // namespace
}  // namespace kforge::test
