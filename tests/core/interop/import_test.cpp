// `kforge convert --from hf`: oracle-built HF directories give the oracle's logits in kforge; round trips; training
// from it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/interop/interop_test_util.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test::interop {
namespace {
namespace fs = std::filesystem;

// A random HF model written by the oracle script itself (its own safetensors writer and names).
fs::path oracle_built(const std::string& arch, const std::string& extra, const std::string& label) {
  const fs::path dir = temp_dir(label) / "hf";
  std::string output;
  std::vector<std::string> args = {"build", dir.string(), arch, "11"};
  if (!extra.empty()) args.push_back(extra);
  if (extra == "--shards") args.push_back("3");
  EXPECT_EQ(run_oracle("hf_llama.py", args, &output), 0) << output;
  return dir;
}

fs::path import_from_hf(const fs::path& hf, const std::string& label, std::string* output = nullptr) {
  const fs::path out = temp_dir(label) / "kforge";
  int rc = 0;
  const std::string text = kforge_cli(fmt::format("convert --from hf {} {}", hf.string(), out.string()), &rc);
  EXPECT_EQ(rc, 0) << text;
  if (output) *output = text;
  return out;
}

double import_error(const fs::path& hf, const std::string& label) {
  const fs::path ckpt = import_from_hf(hf, label);
  const at::Tensor tokens = test_tokens();
  const at::Tensor theirs = oracle_logits(hf, tokens);
  return logit_error(kforge_logits(ckpt, tokens), theirs, "import " + label);
}

TEST(HfImport, OracleBuiltShardedLlamaGivesTheOraclesLogits) {
  ASSERT_TRUE(oracle_available());
  EXPECT_LT(import_error(oracle_built("llama", "--shards", "llama_sharded"), "llama_sharded"), kLogitTolerance);
}

TEST(HfImport, OracleBuiltTiedLlamaGivesTheOraclesLogits) {
  ASSERT_TRUE(oracle_available());
  EXPECT_LT(import_error(oracle_built("llama", "--tie", "llama_tied"), "llama_tied"), kLogitTolerance);
}

TEST(HfImport, OracleBuiltMixtralGivesTheOraclesLogits) {
  ASSERT_TRUE(oracle_available());
  EXPECT_LT(import_error(oracle_built("mixtral", "", "mixtral"), "mixtral"), kLogitTolerance);
}

// export -> import -> export: every file of the second export equals the first, byte for byte.
void expect_round_trip(const fs::path& checkpoint, const std::string& dtype) {
  const fs::path root = temp_dir("round_trip_" + dtype);
  int rc = 0;
  std::string out = kforge_cli(
      fmt::format("convert --to hf {} {} --dtype {}", checkpoint.string(), (root / "first").string(), dtype), &rc);
  ASSERT_EQ(rc, 0) << out;
  out = kforge_cli(fmt::format("convert --from hf {} {}", (root / "first").string(), (root / "kforge").string()), &rc);
  ASSERT_EQ(rc, 0) << out;
  out = kforge_cli(
      fmt::format("convert --to hf {} {} --dtype {}", (root / "kforge").string(), (root / "second").string(), dtype),
      &rc);
  ASSERT_EQ(rc, 0) << out;
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(root / "first")) {
    const fs::path name = entry.path().filename();
    EXPECT_EQ(file_bytes(entry.path()), file_bytes(root / "second" / name)) << name;
    ++files;
  }
  EXPECT_EQ(files,
            static_cast<size_t>(std::distance(fs::directory_iterator(root / "second"), fs::directory_iterator())));
}

TEST(HfRoundTrip, ExportImportExportIsBitExactDenseFp32AndBf16) {
  expect_round_trip(trained_dense(), "float32");
  expect_round_trip(trained_dense(), "bfloat16");
}

TEST(HfRoundTrip, ExportImportExportIsBitExactMoeFp32) { expect_round_trip(trained_moe(), "float32"); }

TEST(HfImport, ImportedCheckpointSamplesAndTrainsFromLoadPathLikeItsSource) {
  const fs::path root = temp_dir("import_run");
  int rc = 0;
  std::string out = kforge_cli(
      fmt::format("convert --to hf {} {} --dtype float32", trained_dense().string(), (root / "hf").string()), &rc);
  ASSERT_EQ(rc, 0) << out;
  const fs::path imported = import_from_hf(root / "hf", "import_run_ckpt", &out);
  EXPECT_NE(out.find("--checkpoint.load_path=" + (imported / "step_0").string()), std::string::npos) << out;
  EXPECT_EQ(file_bytes(imported / "tokenizer.model"), file_bytes(root / "hf" / "tokenizer.model"));

  const std::string sample = kforge_cli(
      fmt::format("generate --checkpoint {} --prompt 'abc' --max-new-tokens 4 --temperature 0", imported.string()),
      &rc);
  EXPECT_EQ(rc, 0) << sample;
  EXPECT_EQ(sample.rfind("abc", 0), 0u) << sample;  // the prompt, then its continuation

  // Training from the imported weights is training from the source checkpoint's weights: same losses.
  const TrainFixture& fx = dense_fixture();
  auto losses_from = [&](const fs::path& load_path, const std::string& exclude) {
    auto hook = std::make_shared<RecordingHook>();
    fx.run({"--checkpoint.dir=" + (temp_dir("load_path_run") / "ckpt").string(),
            "--checkpoint.load_path=" + load_path.string(), "--checkpoint.exclude_from_loading=" + exclude,
            "--train.max_steps=3", "--eval.enabled=false"},
           {hook});
    return hook->losses;
  };
  const auto source = losses_from(trained_dense(), "[\"optimizer\", \"train_state\"]");
  const auto from_import = losses_from(imported / "step_0", "[]");  // weights only: the optimizer starts fresh
  ASSERT_EQ(source.size(), 3u);
  EXPECT_EQ(from_import, source);
}

}  // namespace
}  // namespace kforge::test::interop
