// Data `kforge run` cannot use is refused before step 1 with exit code 2, in the run as in its --dry-run: a token id
// at or past [model] vocab_size anywhere in the training data, a mixture source or the eval data (named by file and
// position, not only when a sampled window holds it), and a shard whose .npy header does not parse.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "core/train/train_fixture.h"
#include "data/npy_writer.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

struct Exit {
  int code;
  std::string output;  ///< stdout and stderr together
};

// `kforge run` on the fixture's config (its vocab_size is 64) with `overrides`.
Exit kforge_run(const TrainFixture& fx, const std::string& overrides) {
  const fs::path config = fx.root / "job.toml";
  std::ofstream(config) << fx.toml;
  Exit e;
  e.code = run_command(fmt::format("'{}' run '{}' {}", KFORGE_BIN, config.string(), overrides), &e.output);
  return e;
}

// The fixture's token ids (all below 64) with `bad` at position 1234 of the shard.
void write_shard_with(const fs::path& path, int bad) {
  std::vector<int> ids(3000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int>((i * 7) % 64);
  ids[1234] = bad;
  data::write_npy_tokens(path, data::TokenDtype::uint16, ids);
}

// The error names the data, the shard, the first id past the vocabulary and its position in the shard, and the vocab
// size.
void expect_refused(const Exit& e, const std::string& data, const fs::path& shard) {
  EXPECT_EQ(e.code, 2) << e.output;
  expect_has(e.output, {fmt::format("{}: {}: token id 100 at position 1234 is >= [model] vocab_size 64", data,
                                    shard.string())});
  EXPECT_EQ(e.output.find(" [step 1] "), std::string::npos) << e.output;
}

TEST(DataErrorExit, AnIdPastVocabSizeInTheTrainingDataExits2InTheDryRunAndTheRunBeforeStep1) {
  TrainFixture fx;
  const fs::path shard = fx.data_dir / "shard_1.npy";
  write_shard_with(shard, 100);
  expect_refused(kforge_run(fx, "--dry-run"), "train data", shard);
  expect_refused(kforge_run(fx, "--train.max_steps=1"), "train data", shard);
  EXPECT_FALSE(fs::exists(fx.checkpoint_dir / "step_1"));
}

TEST(DataErrorExit, AnIdPastVocabSizeInTheEvalDataOrAMixtureSourceExits2) {
  TrainFixture fx;
  const fs::path eval_shard = fx.data_dir / "eval" / "eval_0.npy";
  write_shard_with(eval_shard, 100);
  expect_refused(kforge_run(fx, "--dry-run --eval.enabled=true"), "eval data", eval_shard);

  TrainFixture mix;
  const fs::path web = mix.root / "web";
  fs::create_directories(web);
  write_shard_with(web / "web_0.npy", 100);
  // A mixture reads its sources' paths instead of [data] dataset_path.
  const std::string dataset_path = fmt::format("dataset_path = \"{}\"\n", mix.data_dir.string());
  ASSERT_NE(mix.toml.find(dataset_path), std::string::npos) << mix.toml;
  mix.toml.erase(mix.toml.find(dataset_path), dataset_path.size());
  mix.toml += fmt::format("\n[[data.datasets]]\npath = \"{}\"\nname = \"books\"\n\n[[data.datasets]]\npath = \"{}\"\n"
                          "name = \"web\"\n",
                          mix.data_dir.string(), web.string());
  expect_refused(kforge_run(mix, "--dry-run"), "[[data.datasets]] 'web'", web / "web_0.npy");
}

TEST(DataErrorExit, AShardWhoseNpyHeaderDoesNotParseExits2InTheRunAsInTheDryRun) {
  TrainFixture fx;
  const fs::path shard = fx.data_dir / "shard_1.npy";
  std::ofstream(shard, std::ios::binary | std::ios::trunc) << "\x93NUMPY\x01\x00 not a header";
  for (const std::string overrides : {"--dry-run", "--train.max_steps=1"}) {
    const Exit e = kforge_run(fx, overrides);
    EXPECT_EQ(e.code, 2) << overrides << "\n" << e.output;
    expect_has(e.output, {shard.string()});
    EXPECT_EQ(e.output.find(" [step 1] "), std::string::npos) << e.output;
  }
}

}  // namespace
}  // namespace kforge::test
