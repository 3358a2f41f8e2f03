// `kforge extract` end to end: a tiny model (dense, and MoE) trained 5 steps, its activations captured by the
// binary, read back by numpy and compared with tests/oracles/llama_reference.py's float64 forward of the same
// weights (the MoE router's int64 choices and counts too); text input through the checkpoint's tokenizer; the
// errors that name the valid points and layers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/train/train_fixture.h"
#include "data/batch.h"
#include "data/tokenizer.h"
#include "generate/checkpoint_model.h"
#include "plugins/components.h"
#include "support/data_test_util.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

std::string kforge_extract(const std::string& args, int* rc) {
  std::string output;
  *rc = run_command(fmt::format("{} extract {} 2>&1", KFORGE_BIN, args), &output);
  return output;
}

/// numpy's reading of an .npz (tests/oracles/read_npz.py): name -> {dtype, shape, values}.
nlohmann::json read_npz(const std::filesystem::path& file) {
  std::string out;
  EXPECT_EQ(run_oracle("read_npz.py", {file.string()}, &out), 0) << out;
  return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
}

/// Runs tests/oracles/llama_reference.py DIR `mode` (--activations or --modules) on `npz`, expecting its `points`
/// points to match; returns its report.
std::string expect_reference_match(const std::filesystem::path& dir, const std::string& mode,
                                   const std::filesystem::path& npz, int points) {
  std::string oracle;
  EXPECT_EQ(run_oracle("llama_reference.py", {dir.string(), mode, npz.string()}, &oracle), 0) << npz << "\n" << oracle;
  EXPECT_NE(oracle.find(fmt::format("ok: {} points match", points)), std::string::npos) << npz << "\n" << oracle;
  return oracle;
}

/// A 40-piece SentencePiece model trained on a few repeated English sentences (ids < the fixture's vocab 64).
std::filesystem::path sentence_tokenizer(const std::filesystem::path& dir) {
  {
    std::ofstream corpus(dir / "sentences.txt");
    for (int i = 0; i < 50; ++i) {
      corpus << "the quick brown fox jumps over the lazy dog\nhow vexingly quick daft zebras jump\n"
             << "pack my box with five dozen liquor jugs " << i << "\n";
    }
  }
  data::TokenizerTrainOptions options;
  options.inputs = {dir / "sentences.txt"};
  options.model_prefix = dir / "sentences";
  options.vocab_size = 40;
  return data::train_tokenizer(options);
}

/// The weights and [model] settings of checkpoint `step_dir` in `dir`, as tests/oracles/llama_reference.py reads them.
void write_oracle_inputs(const std::string& step_dir, const plugins::Registry& registry,
                         const std::filesystem::path& dir) {
  const auto ckpt = generate::load_checkpoint_model(step_dir, registry);
  for (const auto& p : ckpt.model->named_parameters()) write_npy(dir / (p.key() + ".npy"), p.value());
  const config::SectionView m = ckpt.job.view("model");
  std::ofstream(dir / "config.json") << nlohmann::json{
      {"dim", m.get_int("dim")},
      {"n_layers", m.get_int("n_layers")},
      {"n_heads", m.get_int("n_heads")},
      {"n_kv_heads", m.get_int("n_kv_heads")},
      {"norm_type", m.get_string("norm_type")},
      {"norm_eps", m.get_float("norm_eps")},
      {"activation", m.get_string("activation")},
      {"rope_theta", m.get_float("rope_theta")},
      {"tie_embeddings", m.get_bool("tie_embeddings")},
      {"qk_norm", m.get_bool("qk_norm")},
      {"num_experts", m.get_int("num_experts")},
      {"moe_top_k", m.get_int("moe_top_k")},
      {"moe_frequency", m.get_int("moe_frequency")}}.dump();
}

class ExtractCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new TrainFixture();
    tokenizer_ = new std::filesystem::path(sentence_tokenizer(fixture_->root));
    fixture_->run({"--data.tokenizer_path=" + tokenizer_->string(), "--train.max_steps=5"}, {});
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(fixture_->root);
    delete fixture_;
    delete tokenizer_;
  }
  static std::string step_dir() { return (fixture_->checkpoint_dir / "step_5").string(); }
  /// The checkpoint's weights and [model] settings in `dir`, as tests/oracles/llama_reference.py reads them.
  static void write_reference_inputs(const std::filesystem::path& dir) {
    write_oracle_inputs(step_dir(), fixture_->plugins->registry, dir);
  }
  static TrainFixture* fixture_;
  static std::filesystem::path* tokenizer_;
};
TrainFixture* ExtractCli::fixture_ = nullptr;
std::filesystem::path* ExtractCli::tokenizer_ = nullptr;

TEST_F(ExtractCli, EveryPointOfEveryLayerMatchesTheReferenceForward) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  const auto dir = temp_dir("extract_oracle");
  const auto npz = dir / "acts.npz";
  int rc = 0;
  const std::string out = kforge_extract(fmt::format("--checkpoint {} --tokens 3,1,4,1,5,9,2,6,5,3,5,8 --layers all "
                                                     "--what embed,residual,attn_out,mlp_out,attention,final_norm {}",
                                                     step_dir(), npz.string()),
                                         &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("12 tokens, 10 points"), std::string::npos) << out;
  write_reference_inputs(dir);  // the same weights and [model] settings for the reference
  const std::string oracle = expect_reference_match(dir, "--activations", npz, 10);
  std::printf("[extract oracle]\n%s", oracle.c_str());
  std::filesystem::remove_all(dir);
}

TEST_F(ExtractCli, KempnerForgeModulePathsNameTheArraysAndMatchTheReferenceModulesOutputs) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  const auto dir = temp_dir("extract_modules");
  const auto npz = dir / "acts.npz";
  int rc = 0;
  const std::string out =
      kforge_extract(fmt::format("--checkpoint {} --tokens 3,1,4,1,5,9,2,6 --modules "
                                 "tok_embeddings,layers.0,layers.1.attention,layers.1.mlp,norm,output,layers.0 {}",
                                 step_dir(), npz.string()),
                     &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("8 tokens, 6 points: tok_embeddings, layers.0, layers.1.attention, layers.1.mlp, norm, output"),
            std::string::npos)
      << out;
  const nlohmann::json arrays = read_npz(npz);
  std::vector<std::string> names;
  for (const auto& item : arrays.items()) names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"layers.0", "layers.1.attention", "layers.1.mlp", "norm", "output",
                                             "tok_embeddings", "tokens"}));
  EXPECT_EQ(arrays["output"]["dtype"], "float32");
  EXPECT_EQ(arrays["output"]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 8, 64}));
  EXPECT_EQ(arrays["layers.1.attention"]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 8, 32}));
  write_reference_inputs(dir);
  const std::string oracle = expect_reference_match(dir, "--modules", npz, 6);
  std::printf("[extract modules oracle]\n%s", oracle.c_str());
  std::filesystem::remove_all(dir);
}

TEST_F(ExtractCli, DataWindowsAreCapturedInBatchesIntoShardsThatMatchTheReference) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  const auto dir = temp_dir("extract_data");
  const auto shards = dir / "acts";
  int rc = 0;
  // 3 batches of 3 windows: 9 samples in shards of 4, 4 and 1.
  const std::string out = kforge_extract(
      fmt::format("--checkpoint {} --data {} --batch-size 3 --max-batches 3 --shard-size 4 --modules layers.1,output {}",
                  step_dir(), fixture_->data_dir.string(), shards.string()),
      &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("9 samples in 3 shards, 2 points: layers.1, output"), std::string::npos) << out;
  // The tokens are the dataset's windows 0..8 as a batch's input (the last token of each dropped).
  const auto ckpt = generate::load_checkpoint_model(step_dir(), fixture_->plugins->registry);
  const auto data = plugins::Components(fixture_->plugins->registry, ckpt.job)
                        .dataset(fixture_->data_dir.string(), ckpt.job.eval.file_pattern, 0);
  const at::Tensor windows = data::make_batch(*data, {0, 1, 2, 3, 4, 5, 6, 7, 8}).input_ids;
  const int64_t seq = windows.size(1);
  write_reference_inputs(dir);
  int64_t row = 0;
  for (const auto& [name, rows] : std::vector<std::pair<std::string, int64_t>>{
           {"shard_00000.npz", 4}, {"shard_00001.npz", 4}, {"shard_00002.npz", 1}}) {
    const nlohmann::json arrays = read_npz(shards / name);
    EXPECT_EQ(arrays["tokens"]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{rows, seq})) << name;
    const at::Tensor expected = windows.slice(0, row, row + rows).contiguous();
    EXPECT_EQ(arrays["tokens"]["values"].get<std::vector<int64_t>>(),
              std::vector<int64_t>(expected.data_ptr<int64_t>(), expected.data_ptr<int64_t>() + expected.numel()))
        << name;
    EXPECT_EQ(arrays["layers.1"]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{rows, seq, 32})) << name;
    EXPECT_EQ(arrays["output"]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{rows, seq, 64})) << name;
    expect_reference_match(dir, "--modules", shards / name, 2);
    row += rows;
  }
  EXPECT_FALSE(std::filesystem::exists(shards / "shard_00003.npz"));
  std::filesystem::remove_all(dir);
}

TEST_F(ExtractCli, InputIsTokenisedWithTheCheckpointsTokenizerAndEachAskedPointIsWrittenOnce) {
  const auto dir = temp_dir("extract_input");
  int rc = 0;
  const std::string out = kforge_extract(
      fmt::format("--checkpoint {} --input 'the lazy dog' --layers 1,1 --what attention,mlp_out,attention {}",
                  fixture_->checkpoint_dir.string(), (dir / "a.npz").string()),
      &rc);
  ASSERT_EQ(rc, 0) << out;
  const nlohmann::json npz = read_npz(dir / "a.npz");
  std::vector<std::string> names;
  for (const auto& item : npz.items()) names.push_back(item.key());
  EXPECT_EQ(names, (std::vector<std::string>{"layers.1.attention", "layers.1.mlp_out", "tokens"}));
  const std::vector<int> ids = data::Tokenizer(*tokenizer_).encode("the lazy dog");
  const auto seq = static_cast<int64_t>(ids.size());
  EXPECT_EQ(npz["tokens"]["dtype"], "int64");
  EXPECT_EQ(npz["tokens"]["values"].get<std::vector<int>>(), ids);
  EXPECT_EQ(npz["layers.1.attention"]["dtype"], "float32");
  EXPECT_EQ(npz["layers.1.attention"]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 4, seq, seq}));
  EXPECT_EQ(npz["layers.1.mlp_out"]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1, seq, 32}));

  // --input-file runs the file's text: the same tokens, the same values.
  std::ofstream(dir / "in.txt") << "the lazy dog";
  const std::string again = kforge_extract(fmt::format("--checkpoint {} --input-file {} --layers 1 "
                                                       "--what attention,mlp_out {}",
                                                       step_dir(), (dir / "in.txt").string(), (dir / "b.npz").string()),
                                           &rc);
  ASSERT_EQ(rc, 0) << again;
  EXPECT_EQ(read_npz(dir / "b.npz"), npz);
  std::filesystem::remove_all(dir);
}

TEST_F(ExtractCli, UnknownPointsAndLayersAreRefusedNamingTheValidOnes) {
  const auto dir = temp_dir("extract_errors");
  const std::string npz = (dir / "x.npz").string();
  const std::string base = fmt::format("--checkpoint {} --tokens 1,2,3", step_dir());
  int rc = 0;
  std::string out = kforge_extract(fmt::format("{} --what residual,resid {}", base, npz), &rc);
  EXPECT_EQ(rc, 2);
  for (const char* part : {"--what resid", "'resid'", "embed, final_norm",
                           "attention_norm, attention, attn_out, mlp_norm, mlp_out, residual, mlp.router.choices, "
                           "mlp.router.weights, mlp.router.expert_counts"}) {
    EXPECT_NE(out.find(part), std::string::npos) << part << "\n" << out;
  }
  out = kforge_extract(fmt::format("{} --modules norm,layers.1.feed_forward {}", base, npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("--modules layers.1.feed_forward: the model has no module 'layers.1.feed_forward' that can be "
                     "captured. Its module paths are tok_embeddings, layers.{layer}.attention_norm, "
                     "layers.{layer}.attention, layers.{layer}.mlp_norm, layers.{layer}.mlp, layers.{layer}, "
                     "layers.{layer}.mlp.router.choices, layers.{layer}.mlp.router.weights, "
                     "layers.{layer}.mlp.router.expert_counts, norm, output"),
            std::string::npos)
      << out;
  out = kforge_extract(fmt::format("{} --modules layers.2 {}", base, npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("no module 'layers.2'"), std::string::npos) << out;
  out = kforge_extract(fmt::format("{} --modules norm --what embed {}", base, npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("give it without --what and --layers"), std::string::npos) << out;
  out = kforge_extract(fmt::format("--checkpoint {} --data {} --batch-size 0 {}", step_dir(),
                                   fixture_->data_dir.string(), npz),
                       &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("--batch-size 0: give a positive number"), std::string::npos) << out;
  out = kforge_extract(fmt::format("{} --shard-size 4 {}", base, npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("shape a --data run: give --data DIR"), std::string::npos) << out;
  out = kforge_extract(fmt::format("{} --layers 0,2 {}", base, npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("--layers 0,2: layer 2 is out of range: the model has 2 layers, 0..1"), std::string::npos) << out;
  out = kforge_extract(fmt::format("{} --layers one {}", base, npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("'one' is not a non-negative integer"), std::string::npos) << out;
  out = kforge_extract(fmt::format("--checkpoint {} --tokens 1,64 {}", step_dir(), npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("token id 64 is out of the model's vocabulary ([model] vocab_size = 64)"), std::string::npos)
      << out;
  out = kforge_extract(fmt::format("--checkpoint {} --tokens 1 --input hi {}", step_dir(), npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("exactly one of --input TEXT, --tokens IDS, --input-file FILE and --data DIR"), std::string::npos) << out;
  out = kforge_extract(fmt::format("--checkpoint {} --input-file /nonexistent/in.txt {}", step_dir(), npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("--input-file /nonexistent/in.txt: cannot open it"), std::string::npos) << out;
  out = kforge_extract(base, &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("missing OUT.npz"), std::string::npos) << out;
  out = kforge_extract(fmt::format("--checkpoint /nonexistent/ckpt --tokens 1 {}", npz), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("/nonexistent/ckpt"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(npz));
  // A file that cannot be written: exit 1 naming it, and no partial file left.
  out = kforge_extract(fmt::format("{} {}", base, (dir / "missing" / "x.npz").string()), &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("cannot write " + (dir / "missing" / "x.npz").string()), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}

/// The fixture's model with MoE layers: 4 experts, top-2, layer 1 MoE and layer 0 dense (moe_frequency 2).
class ExtractMoeCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new TrainFixture();
    fixture_->run({"--model.num_experts=4", "--model.moe_top_k=2", "--model.moe_frequency=2", "--train.max_steps=5"},
                  {});
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(fixture_->root);
    delete fixture_;
  }
  static std::string step_dir() { return (fixture_->checkpoint_dir / "step_5").string(); }
  static TrainFixture* fixture_;
};
TrainFixture* ExtractMoeCli::fixture_ = nullptr;

/// The [rows, cols] int64 array of numpy's reading `array`, checking its dtype and shape.
std::vector<std::vector<int64_t>> int64_rows(const nlohmann::json& array, int64_t rows, int64_t cols) {
  EXPECT_EQ(array["dtype"], "int64");
  EXPECT_EQ(array["shape"].back().get<int64_t>(), cols);
  const auto values = array["values"].get<std::vector<int64_t>>();
  EXPECT_EQ(static_cast<int64_t>(values.size()), rows * cols);
  std::vector<std::vector<int64_t>> out;
  for (int64_t r = 0; r < rows; ++r) out.emplace_back(values.begin() + r * cols, values.begin() + (r + 1) * cols);
  return out;
}

TEST_F(ExtractMoeCli, NormOutputsAndTheRoutersChoicesAndCountsByModulePathMatchTheReference) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  const auto dir = temp_dir("extract_moe");
  const auto npz = dir / "acts.npz";
  int rc = 0;
  const std::string out = kforge_extract(
      fmt::format("--checkpoint {} --tokens 3,1,4,1,5,9,2,6,5,3,5,8 --modules layers.0.attention_norm,"
                  "layers.1.mlp_norm,layers.1.mlp.router.choices,layers.1.mlp.router.weights,"
                  "layers.1.mlp.router.expert_counts,output {}",
                  step_dir(), npz.string()),
      &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("12 tokens, 6 points"), std::string::npos) << out;
  const nlohmann::json arrays = read_npz(npz);  // numpy's own reading: dtypes and shapes as written
  for (const char* name : {"layers.0.attention_norm", "layers.1.mlp_norm"}) {
    EXPECT_EQ(arrays[name]["dtype"], "float32") << name;
    EXPECT_EQ(arrays[name]["shape"].get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 12, 32})) << name;
  }
  EXPECT_EQ(arrays["layers.1.mlp.router.weights"]["dtype"], "float32");
  EXPECT_EQ(arrays["layers.1.mlp.router.choices"]["shape"].get<std::vector<int64_t>>(),
            (std::vector<int64_t>{1, 12, 2}));
  EXPECT_EQ(arrays["layers.1.mlp.router.weights"]["shape"].get<std::vector<int64_t>>(),
            (std::vector<int64_t>{1, 12, 2}));
  EXPECT_EQ(arrays["layers.1.mlp.router.expert_counts"]["shape"].get<std::vector<int64_t>>(),
            (std::vector<int64_t>{1, 4}));
  // Each token's two experts are distinct; the counts hold every (token, slot) assignment: 12 tokens x top-2.
  for (const auto& experts : int64_rows(arrays["layers.1.mlp.router.choices"], 12, 2)) {
    EXPECT_NE(experts[0], experts[1]);
  }
  const auto counts = int64_rows(arrays["layers.1.mlp.router.expert_counts"], 1, 4)[0];
  EXPECT_EQ(counts[0] + counts[1] + counts[2] + counts[3], 24);
  write_oracle_inputs(step_dir(), fixture_->plugins->registry, dir);
  const std::string oracle = expect_reference_match(dir, "--modules", npz, 6);
  std::printf("[extract moe oracle]\n%s", oracle.c_str());
  std::filesystem::remove_all(dir);
}

TEST_F(ExtractMoeCli, RouterPointsOfADatasetAreWrittenIntoShardsAsInt64RowsPerSample) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  const auto dir = temp_dir("extract_moe_data");
  const auto shards = dir / "acts";
  int rc = 0;
  // 2 batches of 3 windows: 6 samples in shards of 4 and 2.
  const std::string out = kforge_extract(
      fmt::format("--checkpoint {} --data {} --batch-size 3 --max-batches 2 --shard-size 4 --layers 1 "
                  "--what mlp.router.choices,mlp.router.expert_counts,mlp_norm {}",
                  step_dir(), fixture_->data_dir.string(), shards.string()),
      &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("6 samples in 2 shards, 3 points: layers.1.mlp.router.choices, "
                     "layers.1.mlp.router.expert_counts, layers.1.mlp_norm"),
            std::string::npos)
      << out;
  write_oracle_inputs(step_dir(), fixture_->plugins->registry, dir);
  for (const auto& [name, rows] : std::vector<std::pair<std::string, int64_t>>{{"shard_00000.npz", 4},
                                                                               {"shard_00001.npz", 2}}) {
    const nlohmann::json arrays = read_npz(shards / name);
    const int64_t seq = arrays["tokens"]["shape"][1].get<int64_t>();
    EXPECT_EQ(arrays["layers.1.mlp.router.choices"]["dtype"], "int64") << name;
    EXPECT_EQ(arrays["layers.1.mlp.router.choices"]["shape"].get<std::vector<int64_t>>(),
              (std::vector<int64_t>{rows, seq, 2}))
        << name;
    // One row of counts per sample, each summing to its seq x top-2 assignments.
    for (const auto& counts : int64_rows(arrays["layers.1.mlp.router.expert_counts"], rows, 4)) {
      EXPECT_EQ(counts[0] + counts[1] + counts[2] + counts[3], seq * 2) << name;
    }
    expect_reference_match(dir, "--activations", shards / name, 3);
  }
  EXPECT_FALSE(std::filesystem::exists(shards / "shard_00002.npz"));
  std::filesystem::remove_all(dir);
}

TEST_F(ExtractMoeCli, RouterPointsOfADenseLayerAreRefusedNamingTheMoELayers) {
  const auto dir = temp_dir("extract_moe_dense");
  int rc = 0;
  const std::string out = kforge_extract(fmt::format("--checkpoint {} --tokens 1,2,3 --modules "
                                                     "layers.0.mlp.router.expert_counts {}",
                                                     step_dir(), (dir / "x.npz").string()),
                                         &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("layer 0 is a dense layer and has no router to capture (layers.0.mlp.router.*): the MoE layers "
                     "are 1 ([model] num_experts = 4, moe_frequency = 2)"),
            std::string::npos)
      << out;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.npz"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kforge::test
