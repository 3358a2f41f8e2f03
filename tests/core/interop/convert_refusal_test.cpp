// What `kforge convert` refuses, naming the key or file: models HF cannot express, unknown architectures, missing
// tensors.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "checkpoint/mapped_file.h"
#include "checkpoint/safetensors.h"
#include "cli/error_message.h"
#include "core/interop/interop_test_util.h"
#include "interop/hf_names.h"
#include "support/test_host.h"

namespace kforge::test::interop {
namespace {
namespace fs = std::filesystem;

TEST(HfNames, EveryKforgeNameMapsToItsHfNameAndBack) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"token_embedding.embedding.weight", "model.embed_tokens.weight"},
      {"output_head.proj.weight", "lm_head.weight"},
      {"layers.12.attention_norm.weight", "model.layers.12.input_layernorm.weight"},
      {"layers.0.mlp_norm.weight", "model.layers.0.post_attention_layernorm.weight"},
      {"layers.3.attention.k_proj.weight", "model.layers.3.self_attn.k_proj.weight"},
      {"layers.1.mlp.router.gate.weight", "model.layers.1.block_sparse_moe.gate.weight"},
      {"layers.1.mlp.experts.10.gate_proj.weight", "model.layers.1.block_sparse_moe.experts.10.w1.weight"},
      {"layers.1.mlp.experts.0.down_proj.weight", "model.layers.1.block_sparse_moe.experts.0.w2.weight"},
      {"layers.1.mlp.experts.7.up_proj.weight", "model.layers.1.block_sparse_moe.experts.7.w3.weight"}};
  for (const auto& [kforge, hf] : pairs) {
    EXPECT_EQ(kforge::interop::hf_name_of(kforge).value_or("?"), hf);
    EXPECT_EQ(kforge::interop::kforge_name_of(hf).value_or("?"), kforge);
  }
  EXPECT_FALSE(kforge::interop::hf_name_of("layers.0.attention.q_norm.weight"));
  EXPECT_FALSE(kforge::interop::kforge_name_of("model.layers.01.mlp.up_proj.weight"));
}

TEST(HfExportRefusal, QkNormModelIsRefusedNamingTheKey) {
  TrainFixture fx;
  fx.run({"--train.max_steps=5", "--eval.enabled=false", "--model.qk_norm=true"}, {});
  const fs::path out = temp_dir("refuse_qk") / "hf";
  int rc = 0;
  const std::string text =
      kforge_cli(fmt::format("convert --to hf {} {}", (fx.checkpoint_dir / "step_5").string(), out.string()), &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("[model] qk_norm = true"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out / "model.safetensors"));
}

TEST(HfExportRefusal, MoeWithTokenDroppingIsRefusedNamingTheKey) {
  int rc = 0;
  const std::string text = kforge_cli(fmt::format("convert --to hf {} {} --model.moe_capacity_factor=1.25",
                                                  trained_moe().string(), (temp_dir("refuse_cf") / "hf").string()),
                                      &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("[model] moe_capacity_factor = 1.25"), std::string::npos) << text;
}

fs::path exported_fp32(const std::string& label) {
  const fs::path hf = temp_dir(label) / "hf";
  int rc = 0;
  const std::string text =
      kforge_cli(fmt::format("convert --to hf {} {} --dtype float32", trained_dense().string(), hf.string()), &rc);
  EXPECT_EQ(rc, 0) << text;
  return hf;
}

TEST(HfImportRefusal, UnknownArchitectureIsRefusedNamingConfigJson) {
  const fs::path hf = exported_fp32("refuse_arch");
  auto config = nlohmann::json::parse(file_bytes(hf / "config.json"));
  config["architectures"] = {"GPT2LMHeadModel"};
  std::ofstream(hf / "config.json") << config.dump();
  int rc = 0;
  const std::string text = kforge_cli(
      fmt::format("convert --from hf {} {}", hf.string(), (temp_dir("refuse_arch_out") / "k").string()), &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find((hf / "config.json").string() + ": 'architectures' is [\"GPT2LMHeadModel\"]"), std::string::npos)
      << text;
}

TEST(HfImportRefusal, MissingTensorIsRefusedNamingItAndTheDirectory) {
  const fs::path hf = exported_fp32("refuse_missing");
  checkpoint::TensorMap tensors;
  {
    const checkpoint::MappedFile mapped(hf / "model.safetensors");
    tensors = checkpoint::decode_safetensors(mapped.bytes(), "model.safetensors");
  }
  ASSERT_EQ(tensors.erase("model.layers.1.mlp.up_proj.weight"), 1u);
  checkpoint::write_safetensors(hf / "model.safetensors", tensors);
  const fs::path out = temp_dir("refuse_missing_out") / "k";
  int rc = 0;
  const std::string text = kforge_cli(fmt::format("convert --from hf {} {}", hf.string(), out.string()), &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find(hf.string() + ": tensor 'model.layers.1.mlp.up_proj.weight' (kforge "
                                    "'layers.1.mlp.up_proj.weight') is missing"),
            std::string::npos)
      << text;
  EXPECT_FALSE(fs::exists(out / "step_0"));
}

// config.json with `changes` applied (head_dim dropped: it follows hidden_size), imported; returns the output.
std::string import_with_config(const std::string& label, const nlohmann::json& changes, int* rc) {
  const fs::path hf = exported_fp32(label);
  auto config = nlohmann::json::parse(file_bytes(hf / "config.json"));
  config.erase("head_dim");
  config.update(changes);
  std::ofstream(hf / "config.json") << config.dump();
  const fs::path out = temp_dir(label + "_out") / "k";
  const std::string text = kforge_cli(fmt::format("convert --from hf {} {}", hf.string(), out.string()), rc);
  EXPECT_FALSE(fs::exists(out / "step_0")) << text;
  // Refused from the config's sizes, before a model of those sizes is allocated; no LibTorch stack trace.
  for (const char* torch_text : {"allocate", "Exception raised from", "frame #"}) {
    EXPECT_EQ(text.find(torch_text), std::string::npos) << text;
  }
  return text;
}

TEST(HfImportRefusal, SizesTheWeightsDoNotHaveAreRefusedNamingTheTensorBeforeTheModelIsBuilt) {
  int rc = 0;
  const std::string text =
      import_with_config("refuse_sizes", {{"vocab_size", 2000000000}, {"hidden_size", 65536}}, &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("tensor 'model.embed_tokens.weight' has shape [64, 32], but config.json's sizes need "
                      "[2000000000, 65536] (vocab_size, hidden_size)"),
            std::string::npos)
      << text;
}

TEST(HfImportRefusal, SizesWhoseParameterCountOverflowsInt64AreRefusedNamingTheKeys) {
  int rc = 0;
  const std::string text = import_with_config("refuse_overflow", {{"hidden_size", 2000000000}}, &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("config.json: the attention's projections = "), std::string::npos) << text;
  EXPECT_NE(text.find("does not fit in int64"), std::string::npos) << text;
}

TEST(HfConvertCli, ALibTorchErrorReadsAsItsMessageWithoutTheStackTrace) {
  try {
    at::empty({-1});
    FAIL() << "at::empty({-1}) did not throw";
  } catch (const c10::Error& e) {
    const std::string text = kforge::cli::error_message(e);
    EXPECT_NE(text.find("negative dimension -1"), std::string::npos) << text;
    EXPECT_EQ(text.find("Exception raised from"), std::string::npos) << text;
    EXPECT_NE(std::string(e.what()).find("Exception raised from"), std::string::npos) << e.what();
  }
}

TEST(HfConvertCli, UsageErrorsExitTwo) {
  int rc = 0;
  std::string text = kforge_cli("convert --to hf only_one_path", &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("expected two paths"), std::string::npos) << text;
  text = kforge_cli("convert --to onnx a b", &rc);
  EXPECT_EQ(rc, 2) << text;
  text = kforge_cli(fmt::format("convert --to hf {} {} --max-shard-size 5XB", trained_dense().string(),
                                (temp_dir("bad_size") / "hf").string()),
                    &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("shard size '5XB'"), std::string::npos) << text;
  text = kforge_cli("convert --help", &rc);
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("--max-shard-size"), std::string::npos) << text;
}

}  // namespace
}  // namespace kforge::test::interop
