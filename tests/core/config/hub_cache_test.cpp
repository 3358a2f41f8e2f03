// Hub ids resolved offline from fake Hugging Face caches laid out as huggingface_hub writes them (refs/REV holding a
// commit hash, snapshots/HASH/ files as relative symlinks into blobs/): where the cache is, ids and revisions, a local
// path winning, the errors naming what was looked for, the tokenizer file of a snapshot, and `kforge run` with
// tokenizer_path = "gpt2".
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>

#include "config/hub_cache.h"
#include "config_helpers.h"
#include "support/expect_text.h"
#include "support/hf_cache_fixture.h"
#include "support/read_file.h"
#include "support/test_host.h"
#include "support/tiny_tokenizer.h"
#include "support/token_corpus.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

const std::string kHash = "0123456789abcdef0123456789abcdef01234567";
const std::string kOtherHash = "89abcdef0123456789abcdef0123456789abcdef";

// The hub cache of a test: HF_HUB_CACHE set to a fresh directory.
struct FakeCache {
  fs::path dir;
  ScopedEnv env;
  explicit FakeCache(const std::string& label)
      : dir(temp_dir(label)), env(EnvVars{{"HF_HUB_CACHE", dir.string()}, {"HUGGINGFACE_HUB_CACHE", std::nullopt}}) {}
};

TEST(HubCache, TheCacheDirectoryIsFoundAsHuggingfaceHubFindsIt) {
  ScopedEnv clear(EnvVars{{"HF_HUB_CACHE", std::nullopt},
                   {"HUGGINGFACE_HUB_CACHE", std::nullopt},
                   {"HF_HOME", std::nullopt},
                   {"XDG_CACHE_HOME", std::nullopt},
                   {"HOME", "/home/u"}});
  EXPECT_EQ(config::hub_cache_dir(), fs::path("/home/u/.cache/huggingface/hub"));
  ScopedEnv xdg(EnvVars{{"XDG_CACHE_HOME", "/xdg"}});
  EXPECT_EQ(config::hub_cache_dir(), fs::path("/xdg/huggingface/hub"));
  ScopedEnv home(EnvVars{{"HF_HOME", "/hf"}});
  EXPECT_EQ(config::hub_cache_dir(), fs::path("/hf/hub"));
  ScopedEnv legacy(EnvVars{{"HUGGINGFACE_HUB_CACHE", "/legacy"}});
  EXPECT_EQ(config::hub_cache_dir(), fs::path("/legacy"));
  ScopedEnv hub(EnvVars{{"HF_HUB_CACHE", "/cache"}});
  EXPECT_EQ(config::hub_cache_dir(), fs::path("/cache"));
  ScopedEnv empty(EnvVars{{"HF_HUB_CACHE", ""}});  // an empty variable counts as unset
  EXPECT_EQ(config::hub_cache_dir(), fs::path("/legacy"));
}

TEST(HubCache, WhatIsSpelledAsAHubId) {
  for (const char* id : {"gpt2", "meta-llama/Meta-Llama-3-8B", "google/siglip2-base-patch16-224", "Qwen/Qwen2.5-0.5B",
                         "gpt2@main", "gpt2@refs/pr/1", "org/name@" "0123456789abcdef0123456789abcdef01234567"}) {
    EXPECT_TRUE(config::is_hub_id(id)) << id;
  }
  for (const char* not_id : {"", "a/b/c", "/abs/tok", "./gpt2", "data/tokenizer.model", "tok.model", "tokenizer.json",
                             "cl100k_base.tiktoken", "a--b", "a..b", "-gpt2", "gpt2@", "org/"}) {
    EXPECT_FALSE(config::is_hub_id(not_id)) << not_id;
  }
}

TEST(HubCache, AnIdResolvesThroughRefsMainToItsSnapshot) {
  const FakeCache cache("hub_main");
  const fs::path snapshot =
      fake_download(cache.dir, "meta-llama/Meta-Llama-3-8B", kHash, {{"config.json", "{}"}, {"tokenizer.json", "{ }"}});
  ASSERT_TRUE(fs::is_symlink(snapshot / "tokenizer.json"));
  EXPECT_EQ(config::hub_snapshot("meta-llama/Meta-Llama-3-8B", "k"), snapshot);
  EXPECT_EQ(config::local_or_hub_path("meta-llama/Meta-Llama-3-8B", "k"), snapshot);
  EXPECT_EQ(read_file(config::local_or_hub_path("meta-llama/Meta-Llama-3-8B", "k") / "tokenizer.json"), "{ }");
}

TEST(HubCache, ARevisionIsARefOrACommitHash) {
  const FakeCache cache("hub_revision");
  const fs::path main = fake_download(cache.dir, "gpt2", kHash, {{"config.json", "main"}});
  const fs::path v1 = fake_download(cache.dir, "gpt2", kOtherHash, {{"config.json", "v1"}}, "v1");
  EXPECT_EQ(config::hub_snapshot("gpt2", "k"), main);
  EXPECT_EQ(config::hub_snapshot("gpt2@v1", "k"), v1);
  EXPECT_EQ(config::hub_snapshot("gpt2@" + kOtherHash, "k"), v1);  // a commit hash names its snapshot directly
  fake_download(cache.dir, "gpt2", kOtherHash, {{"README.md", "x"}}, "refs/pr/1");
  EXPECT_EQ(config::hub_snapshot("gpt2@refs/pr/1", "k"), v1);
}

TEST(HubCache, AnExistingLocalPathWinsOverAHubId) {
  const FakeCache cache("hub_local_wins");
  fake_download(cache.dir, "gpt2", kHash, {{"config.json", "{}"}});
  const fs::path work = temp_dir("hub_local_wins_cwd");
  fs::create_directories(work / "gpt2");
  const fs::path before = fs::current_path();
  fs::current_path(work);
  const fs::path got = config::local_or_hub_path("gpt2", "k");
  fs::current_path(before);
  EXPECT_EQ(got, fs::path("gpt2"));
  // Neither a local path nor spelled as an id: returned as it is, for its user to report.
  EXPECT_EQ(config::local_or_hub_path("missing/dir/tok.model", "k"), fs::path("missing/dir/tok.model"));
}

TEST(HubCache, AMissingIdNamesWhatWasLookedForAndHowToFillIt) {
  const FakeCache cache("hub_missing");
  expect_has(config_error_of(
                 [] { config::hub_snapshot("meta-llama/Meta-Llama-3-8B", "cfg.toml:3:1: [data] tokenizer_path"); }),
             {"cfg.toml:3:1: [data] tokenizer_path = \"meta-llama/Meta-Llama-3-8B\" is not a local path",
              "(" + cache.dir.string() + ", from $HF_HUB_CACHE)",
              "looked for " + (cache.dir / "models--meta-llama--Meta-Llama-3-8B").string(),
              "`huggingface-cli download meta-llama/Meta-Llama-3-8B`", "kforge never downloads"});
  fake_download(cache.dir, "gpt2", kHash, {{"config.json", "{}"}});
  expect_has(config_error_of([] { config::hub_snapshot("gpt2@v2", "k"); }),
             {"has no revision 'v2' of hub model 'gpt2'",
              "looked for " + (cache.dir / "models--gpt2" / "refs" / "v2").string(), "the snapshots there: '" + kHash,
              "`huggingface-cli download gpt2 --revision v2`"});
  fs::remove_all(cache.dir / "models--gpt2" / "snapshots" / kHash);  // refs/main names a snapshot that is gone
  expect_has(config_error_of([] { config::hub_snapshot("gpt2", "k"); }),
             {(cache.dir / "models--gpt2" / "snapshots" / kHash).string() + ", which " +
                  (cache.dir / "models--gpt2" / "refs" / "main").string() + " names",
              "the snapshots there: none"});
}

TEST(HubCache, TheTokenizerFileOfASnapshotOrDirectory) {
  const FakeCache cache("hub_tokenizer");
  const fs::path gpt2 =
      fake_download(cache.dir, "gpt2", kHash, {{"tokenizer.json", "{}"}, {"vocab.json", "{}"}, {"merges.txt", ""}});
  EXPECT_EQ(config::tokenizer_file("gpt2", "k"), gpt2 / "tokenizer.json");
  // Llama 3's download: tokenizer.json first; its original/ folder's tiktoken tokenizer.model without it.
  const fs::path llama = fake_download(cache.dir, "meta-llama/Meta-Llama-3-8B", kHash,
                                       {{"tokenizer.json", "{}"}, {"original/tokenizer.model", "x"}});
  EXPECT_EQ(config::tokenizer_file("meta-llama/Meta-Llama-3-8B", "k"), llama / "tokenizer.json");
  fs::remove(llama / "tokenizer.json");
  EXPECT_EQ(config::tokenizer_file("meta-llama/Meta-Llama-3-8B", "k"), llama / "original" / "tokenizer.model");
  const fs::path local = temp_dir("hub_tokenizer_local");
  std::ofstream(local / "cl100k_base.tiktoken") << "x";
  EXPECT_EQ(config::tokenizer_file(local.string(), "k"), local / "cl100k_base.tiktoken");
  const fs::path encoder = fake_download(cache.dir, "google/siglip2-base-patch16-224", kHash, {{"config.json", "{}"}});
  const auto no_tokenizer = [] { config::tokenizer_file("google/siglip2-base-patch16-224", "[data] tokenizer_path"); };
  expect_has(config_error_of(no_tokenizer),
             {"[data] tokenizer_path = \"google/siglip2-base-patch16-224\": the directory " + encoder.string() +
                  " holds no tokenizer kforge reads",
              "its files: 'config.json'"});
}

// load_job_config keeps the values as written; resolve_hub_ids rewrites the tokenizer and the encoder path, in the
// tree and the typed fields.
TEST(HubCache, AJobsTokenizerAndEncoderPathsResolve) {
  const FakeCache cache("hub_job");
  const fs::path tokenizer = fake_download(cache.dir, "gpt2", kHash, {{"tokenizer.json", "{}"}});
  const fs::path encoder = fake_download(cache.dir, "google/siglip2-base-patch16-224", kHash, {{"config.json", "{}"}});
  config::JobConfig job = load(
      "[data]\ntokenizer_path = \"gpt2\"\n[vision_encoder]\ntype = \"random\"\n"
      "path = \"google/siglip2-base-patch16-224\"\n[vlm]\narch = \"joint_decoder\"\n");
  EXPECT_EQ(job.data.tokenizer_path, "gpt2");
  config::resolve_hub_ids(job);
  EXPECT_EQ(job.data.tokenizer_path, (tokenizer / "tokenizer.json").string());
  EXPECT_EQ(at(job, "data", "tokenizer_path").s, (tokenizer / "tokenizer.json").string());
  EXPECT_EQ(at(job, "vision_encoder", "path").s, encoder.string());
}

// `kforge run --dry-run` of a config naming the tokenizer "gpt2", against a cache holding it: the resolved config
// names the snapshot's file; an id the cache lacks exits 2 with the cache's message.
TEST(HubCache, ARunResolvesHubIdsFromTheCache) {
  const fs::path dir = temp_dir("hub_run");
  const fs::path cache = dir / "hub";
  fs::create_directories(dir / "tok");
  const fs::path snapshot =
      fake_download(cache, "gpt2", kHash, {{"tokenizer.model", read_file(tiny_tokenizer(dir / "tok"))}});
  const fs::path data = write_token_corpus(dir / "data", 64);
  std::ofstream(dir / "cfg.toml") << "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 64\n"
                                     "max_seq_len = 128\n[train]\nbatch_size = 2\nseq_len = 64\nmax_steps = 10\n"
                                     "[checkpoint]\ndir = \""
                                  << (dir / "ckpt").string() << "\"\n[data]\ndataset_path = \"" << data.string()
                                  << "\"\ntokenizer_path = \"gpt2\"\n";
  const std::string run = "env -u HUGGINGFACE_HUB_CACHE HF_HUB_CACHE='" + cache.string() + "' '" + KFORGE_BIN +
                          "' run '" + (dir / "cfg.toml").string() + "' --dry-run";
  std::string out;
  ASSERT_EQ(run_command(run + " 2>&1", &out), 0) << out;
  expect_has(out, {"tokenizer_path = \"" + (snapshot / "tokenizer.model").string() + "\""});
  ASSERT_EQ(run_command(run + " --data.tokenizer_path=meta-llama/Meta-Llama-3-8B 2>&1", &out), 2) << out;
  expect_has(out, {"command line: [data] tokenizer_path = \"meta-llama/Meta-Llama-3-8B\" is not a local path",
                   "`huggingface-cli download meta-llama/Meta-Llama-3-8B`"});
}

}  // namespace
}  // namespace kforge::test
