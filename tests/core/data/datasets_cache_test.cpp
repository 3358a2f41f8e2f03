// A dataset's split found offline in fake Hugging Face caches with the real layouts: the `datasets` cache
// (<builder>/<config>/<version>/<hash>/<builder>-<split>[-NNNNN-of-NNNNN].arrow, ORG___NAME builders, the newest
// fingerprint, the config rules) and the hub cache's datasets--ORG--NAME snapshots (refs, snapshots, symlinked blobs);
// where the caches are ($HF_DATASETS_CACHE, $HF_HOME/datasets), and the error naming every path looked at and how to
// fill it. The Arrow files are the independent writer's (tests/oracles/write_arrow_dataset.py), read back.
#include "data/datasets_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/arrow_stream.h"
#include "feed/hf_data.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/hf_cache_fixture.h"
#include "support/oracle.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& file, const std::string& content = "") {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
}

// Sets the directory's modification time `age` seconds before now.
void age(const fs::path& dir, int seconds) {
  fs::last_write_time(dir, fs::file_time_type::clock::now() - std::chrono::seconds(seconds));
}

std::string looked(const fs::path& cache, const std::string& name, const std::string& config,
                   const std::string& split) {
  std::string looked_for;
  EXPECT_FALSE(data::datasets_cache_files(cache, name, config, split, looked_for).has_value());
  return looked_for;
}

TEST(DatasetsCache, TheSplitsShardsAreTakenFromTheNewestFingerprintDirectory) {
  const fs::path cache = temp_dir("datasets_cache_newest");
  const fs::path config = cache / "sayakpaul___coco-30-val-2014" / "default";
  const fs::path newest = config / "0.0.0" / "aaaa", older = config / "0.0.0" / "bbbb";
  const fs::path other = config / "1.0.0" / "cccc";
  for (const char* f : {"coco-30-val-2014-train-00001-of-00002.arrow", "coco-30-val-2014-train-00000-of-00002.arrow",
                        "coco-30-val-2014-test.arrow", "coco-30-val-2014-pretrain.arrow", "dataset_info.json"}) {
    touch(newest / f);
  }
  touch(older / "coco-30-val-2014-train.arrow");
  touch(other / "coco-30-val-2014-train.arrow");
  touch(config / "0.0.0" / "dddd.incomplete" / "coco-30-val-2014-train.arrow");
  age(older, 300);
  age(other, 200);
  age(newest, 100);
  age(config / "0.0.0" / "dddd.incomplete", 10);  // newest of all, but a build in progress
  std::string looked_for;
  EXPECT_EQ(data::datasets_cache_files(cache, "sayakpaul/coco-30-val-2014", "", "train", looked_for),
            (std::vector<fs::path>{newest / "coco-30-val-2014-train-00000-of-00002.arrow",
                                   newest / "coco-30-val-2014-train-00001-of-00002.arrow"}));
  EXPECT_EQ(data::datasets_cache_files(cache, "sayakpaul/coco-30-val-2014", "default", "test", looked_for),
            (std::vector<fs::path>{newest / "coco-30-val-2014-test.arrow"}));
  age(other, 50);  // now the newest holding train
  EXPECT_EQ(data::datasets_cache_files(cache, "sayakpaul/coco-30-val-2014", "", "train", looked_for),
            (std::vector<fs::path>{other / "coco-30-val-2014-train.arrow"}));
  fs::remove_all(cache);
}

TEST(DatasetsCache, WithoutAConfigDefaultElseTheOneCachedIsTakenAndSeveralAreRefusedByName) {
  const fs::path cache = temp_dir("datasets_cache_configs");
  touch(cache / "wikitext" / "wikitext-2-raw-v1" / "0.0.0" / "h1" / "wikitext-train.arrow");
  const auto file = [&](const char* config, const char* hash) {
    return std::vector<fs::path>{cache / "wikitext" / config / "0.0.0" / hash / "wikitext-train.arrow"};
  };
  std::string looked_for;
  EXPECT_EQ(data::datasets_cache_files(cache, "wikitext", "", "train", looked_for), file("wikitext-2-raw-v1", "h1"));
  touch(cache / "wikitext" / "wikitext-103-raw-v1" / "0.0.0" / "h2" / "wikitext-train.arrow");
  try {
    data::datasets_cache_files(cache, "wikitext", "", "train", looked_for);
    ADD_FAILURE() << "two configs, none named";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"several configs of 'wikitext' ('wikitext-103-raw-v1', 'wikitext-2-raw-v1')",
                          "name one with hf_dataset_config"});
  }
  EXPECT_EQ(data::datasets_cache_files(cache, "wikitext", "wikitext-103-raw-v1", "train", looked_for),
            file("wikitext-103-raw-v1", "h2"));
  touch(cache / "wikitext" / "default" / "0.0.0" / "h3" / "wikitext-train.arrow");
  EXPECT_EQ(data::datasets_cache_files(cache, "wikitext", "", "train", looked_for), file("default", "h3"));
  fs::remove_all(cache);
}

TEST(DatasetsCache, WhatIsMissingIsReportedWithThePathLookedFor) {
  const fs::path cache = temp_dir("datasets_cache_missing");
  EXPECT_EQ(looked(cache, "org/name", "", "train"), (cache / "org___name").string());
  touch(cache / "org___name" / "en" / "0.0.0" / "h" / "name-validation.arrow");
  expect_has(looked(cache, "org/name", "fr", "train"),
             {(cache / "org___name" / "fr").string(), "(the configs cached: 'en')"});
  expect_has(looked(cache, "org/name", "en", "train"),
             {(cache / "org___name" / "en").string() +
                  "/<version>/<hash>/*-train.arrow and *-train-NNNNN-of-NNNNN.arrow",
              "(the versions there: '0.0.0')"});
  fs::remove_all(cache);
}

// The oracle's save_to_disk directory, whose Arrow files the caches below hold.
struct OracleFiles {
  fs::path dir;
  nlohmann::json expected;
  OracleFiles() : dir(temp_dir("datasets_cache_oracle")) {
    std::string out;
    EXPECT_EQ(run_oracle("write_arrow_dataset.py", {dir.string(), "utf8"}, &out), 0) << out;
    expected = nlohmann::json::parse(out);
  }
  ~OracleFiles() { fs::remove_all(dir); }
  std::string bytes(int k) const { return read_file(dir / fmt::format("data-0000{}-of-00002.arrow", k)); }
};

std::vector<std::string> texts_of(const std::vector<fs::path>& files) {
  std::vector<std::string> texts;
  for (const fs::path& f : files) data::read_arrow_texts(f, "text", [&](std::string_view t) { texts.emplace_back(t); });
  return texts;
}

config::HfExport hub_id(const std::string& name, const std::string& config = "") {
  return config::HfExport{name, config, "train", "text", "t.toml:3: [data] hf_dataset_name = \"" + name + "\""};
}

TEST(HfSplitFiles, AHubIdIsReadFromTheDatasetsCacheUnderHfHome) {
  ASSERT_TRUE(oracle_available());
  const OracleFiles oracle;
  const fs::path home = temp_dir("datasets_cache_home");
  ScopedEnv env(EnvVars{{"HF_DATASETS_CACHE", std::nullopt}, {"HF_HOME", home.string()},
                        {"HF_HUB_CACHE", (home / "hub").string()}});
  const fs::path hash = home / "datasets" / "org___captions" / "default" / "0.0.0" / "f00d";
  fs::create_directories(hash);
  for (int k = 0; k < 2; ++k) {
    std::ofstream(hash / fmt::format("captions-train-0000{}-of-00002.arrow", k), std::ios::binary) << oracle.bytes(k);
  }
  const std::vector<fs::path> files = feed::hf_split_files(hub_id("org/captions"));
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], hash / "captions-train-00000-of-00002.arrow");
  EXPECT_EQ(texts_of(files), oracle.expected["texts"].get<std::vector<std::string>>());
  fs::remove_all(home);
}

TEST(HfSplitFiles, AHubIdIsReadFromTheHubCachesDatasetSnapshotAndParquetThereIsRefused) {
  ASSERT_TRUE(oracle_available());
  const OracleFiles oracle;
  const fs::path root = temp_dir("datasets_cache_hub");
  ScopedEnv env(EnvVars{{"HF_DATASETS_CACHE", (root / "datasets").string()}, {"HF_HUB_CACHE", (root / "hub").string()},
                        {"HUGGINGFACE_HUB_CACHE", std::nullopt}});
  const std::string hash = "0123456789abcdef0123456789abcdef01234567";
  const fs::path snapshot = fake_download(root / "hub", "org/captions", hash,
                                          {{"data/train-00000-of-00002.arrow", oracle.bytes(0)},
                                           {"data/train-00001-of-00002.arrow", oracle.bytes(1)},
                                           {"data/test-00000-of-00001.arrow", oracle.bytes(1)},
                                           {"README.md", "---\nlicense: mit\n---\n"}},
                                          "main", "dataset");
  const std::vector<fs::path> files = feed::hf_split_files(hub_id("org/captions"));
  EXPECT_EQ(files, (std::vector<fs::path>{snapshot / "data/train-00000-of-00002.arrow",
                                          snapshot / "data/train-00001-of-00002.arrow"}));
  EXPECT_EQ(texts_of(files), oracle.expected["texts"].get<std::vector<std::string>>());
  fake_download(root / "hub", "org/parquet", hash, {{"data/train-00000-of-00001.parquet", "PAR1"}}, "main", "dataset");
  try {
    feed::hf_split_files(hub_id("org/parquet"));
    ADD_FAILURE() << "Parquet read";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(),
               {"t.toml:3: [data] hf_dataset_name = \"org/parquet\": ", "train-00000-of-00001.parquet' is Parquet"});
  }
  fs::remove_all(root);
}

TEST(HfSplitFiles, AMissingHubIdNamesEveryPathLookedAtAndHowToFillThem) {
  const fs::path root = temp_dir("datasets_cache_none");
  ScopedEnv env(EnvVars{{"HF_DATASETS_CACHE", (root / "datasets").string()}, {"HF_HUB_CACHE", (root / "hub").string()},
                        {"HUGGINGFACE_HUB_CACHE", std::nullopt}});
  try {
    feed::hf_split_files(hub_id("org/none", "en"));
    ADD_FAILURE() << "found a dataset that is nowhere";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"t.toml:3: [data] hf_dataset_name = \"org/none\": 'org/none' is not a local path, and the "
                          "local Hugging Face caches do not hold split 'train' of it: looked for " +
                              (root / "datasets" / "org___none").string() + " (the `datasets` cache, from "
                              "$HF_DATASETS_CACHE) and " + (root / "hub" / "datasets--org--none").string() +
                              " (the hub cache, from $HF_HUB_CACHE)",
                          "kforge never downloads",
                          "load_dataset('org/none', 'en', split='train')",
                          "huggingface-cli download --repo-type dataset org/none"});
  }
  // A revision is the hub cache's to give: the datasets cache is not searched.
  fs::create_directories(root / "datasets" / "org___none" / "en" / "0.0.0" / "h");
  touch(root / "datasets" / "org___none" / "en" / "0.0.0" / "h" / "none-train.arrow");
  try {
    feed::hf_split_files(hub_id("org/none@v1", "en"));
    ADD_FAILURE() << "a revision taken from the datasets cache";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"looked for nothing (a @revision is looked for in the hub cache only)"});
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace kforge::test
