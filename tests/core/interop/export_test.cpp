// `kforge convert --to hf`: the independent HF oracle reproduces kforge's logits (tied embeddings and a non-default
// rope_theta too); dtypes, shards, tokenizer, FSDP.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "checkpoint/checkpoint_manager.h"
#include "checkpoint/mapped_file.h"
#include "checkpoint/safetensors.h"
#include "core/interop/interop_test_util.h"
#include "support/launch_job.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test::interop {
namespace {
namespace fs = std::filesystem;

fs::path export_to_hf(const fs::path& checkpoint, const std::string& options, const std::string& label) {
  const fs::path out = temp_dir(label) / "hf";
  int rc = 0;
  const std::string output =
      kforge_cli(fmt::format("convert --to hf {} {} {}", checkpoint.string(), out.string(), options), &rc);
  EXPECT_EQ(rc, 0) << output;
  return out;
}

checkpoint::TensorMap read_tensors(const fs::path& file) {
  const checkpoint::MappedFile mapped(file);
  return checkpoint::decode_safetensors(mapped.bytes(), file.string());
}

// The export's logits (by the oracle, from HF names and config.json) against kforge's own.
double oracle_error(const fs::path& checkpoint, const fs::path& hf) {
  const at::Tensor tokens = test_tokens();
  const at::Tensor theirs = oracle_logits(hf, tokens);
  return logit_error(kforge_logits(checkpoint, tokens), theirs, checkpoint.string());
}

TEST(HfExport, DenseFp32LogitsMatchTheHfOracle) {
  ASSERT_TRUE(oracle_available());
  const fs::path hf = export_to_hf(trained_dense(), "--dtype float32", "hf_dense");
  const auto config = nlohmann::json::parse(file_bytes(hf / "config.json"));
  EXPECT_EQ(config["architectures"][0], "LlamaForCausalLM");
  EXPECT_EQ(config["num_key_value_heads"], 2);
  EXPECT_EQ(config["torch_dtype"], "float32");
  EXPECT_LT(oracle_error(trained_dense(), hf), kLogitTolerance);
}

TEST(HfExport, MoeFp32LogitsMatchTheHfOracleThroughMixtralNames) {
  ASSERT_TRUE(oracle_available());
  const fs::path hf = export_to_hf(trained_moe(), "--dtype float32", "hf_moe");
  const auto config = nlohmann::json::parse(file_bytes(hf / "config.json"));
  EXPECT_EQ(config["architectures"][0], "MixtralForCausalLM");
  EXPECT_EQ(config["num_local_experts"], 4);
  EXPECT_EQ(config["num_experts_per_tok"], 2);
  const auto tensors = read_tensors(hf / "model.safetensors");
  EXPECT_TRUE(tensors.count("model.layers.1.block_sparse_moe.experts.3.w2.weight"));
  EXPECT_TRUE(tensors.count("model.layers.0.block_sparse_moe.gate.weight"));
  EXPECT_LT(oracle_error(trained_moe(), hf), kLogitTolerance);
}

// A model whose rope_theta is not the fixture's 10000 and whose head is its embedding: the export's config.json says
// both, the oracle (which reads every key it uses, with no default) reproduces kforge's logits, and a config.json
// without the key is the oracle's error naming it.
TEST(HfExport, TiedEmbeddingsAndANonDefaultRopeThetaReachTheHfOracle) {
  ASSERT_TRUE(oracle_available());
  TrainFixture fx;
  fx.run({"--train.max_steps=5", "--eval.enabled=false", "--model.rope_theta=500000", "--model.tie_embeddings=true"},
         {});
  const fs::path checkpoint = fx.checkpoint_dir / "step_5";
  const fs::path hf = export_to_hf(checkpoint, "--dtype float32", "hf_tied_theta");
  auto config = nlohmann::json::parse(file_bytes(hf / "config.json"));
  EXPECT_EQ(config["rope_theta"], 500000.0);
  EXPECT_EQ(config["tie_word_embeddings"], true);
  EXPECT_FALSE(read_tensors(hf / "model.safetensors").count("lm_head.weight"));
  EXPECT_LT(oracle_error(checkpoint, hf), kLogitTolerance);

  config.erase("rope_theta");
  std::ofstream(hf / "config.json") << config.dump(2);
  const fs::path work = temp_dir("hf_missing_key");
  write_npy(work / "tokens.npy", test_tokens());
  std::string output;
  EXPECT_NE(run_oracle("hf_llama.py", {"logits", hf.string(), (work / "tokens.npy").string(),
                                       (work / "logits.npy").string()},
                       &output),
            0)
      << output;
  EXPECT_NE(output.find("no 'rope_theta'"), std::string::npos) << output;
}

TEST(HfExport, Bf16AndFp16ValuesAreTheFp32ValuesRoundedToNearestEven) {
  const fs::path dir = temp_dir("hf_dtypes");
  int rc = 0;
  for (const char* dtype : {"float32", "bfloat16", "float16"}) {
    const std::string out = kforge_cli(
        fmt::format("convert --to hf {} {} --dtype {}", trained_dense().string(), (dir / dtype).string(), dtype), &rc);
    ASSERT_EQ(rc, 0) << out;
  }
  const auto f32 = read_tensors(dir / "float32" / "model.safetensors");
  const auto bf16 = read_tensors(dir / "bfloat16" / "model.safetensors");
  const auto f16 = read_tensors(dir / "float16" / "model.safetensors");
  ASSERT_EQ(f32.size(), bf16.size());
  ASSERT_EQ(f32.size(), f16.size());
  int64_t checked = 0;
  for (const auto& [name, t] : f32) {
    ASSERT_EQ(bf16.at(name).scalar_type(), at::kBFloat16) << name;
    ASSERT_EQ(f16.at(name).scalar_type(), at::kHalf) << name;
    const auto* src = static_cast<const uint32_t*>(t.data_ptr());
    const auto* dst = static_cast<const uint16_t*>(bf16.at(name).data_ptr());
    for (int64_t i = 0; i < t.numel(); ++i) {  // round to nearest even on the top 16 bits (no NaN in weights)
      const uint32_t u = src[i];
      const auto expected = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
      ASSERT_EQ(dst[i], expected) << name << "[" << i << "]";
      ++checked;
    }
    // float16: within half an ulp (2^-11 relative) of the fp32 value for these normal-range weights.
    const at::Tensor back = f16.at(name).to(at::kFloat);
    EXPECT_TRUE((back - t).abs().le(t.abs() * (1.0 / 2048) + 6e-8).all().item<bool>()) << name;
  }
  EXPECT_GT(checked, 10000);
  EXPECT_EQ(nlohmann::json::parse(file_bytes(dir / "bfloat16" / "config.json"))["torch_dtype"], "bfloat16");
}

TEST(HfExport, ShardedExportWritesAnIndexCoveringEveryTensorOnce) {
  ASSERT_TRUE(oracle_available());
  const fs::path hf = export_to_hf(trained_dense(), "--dtype float32 --max-shard-size 20KB", "hf_sharded");
  EXPECT_FALSE(fs::exists(hf / "model.safetensors"));
  const auto index = nlohmann::json::parse(file_bytes(hf / "model.safetensors.index.json"));
  const auto& weight_map = index.at("weight_map");
  std::set<std::string> files;
  for (const auto& [name, file] : weight_map.items()) files.insert(file.get<std::string>());
  ASSERT_GT(files.size(), 3u);
  std::map<std::string, int> seen;
  int64_t total = 0;
  for (const std::string& file : files) {
    EXPECT_EQ(file.find("-of-" + fmt::format("{:05d}", files.size())), 11u) << file;
    for (const auto& [name, t] : read_tensors(hf / file)) {
      ++seen[name];
      total += static_cast<int64_t>(t.nbytes());
      EXPECT_EQ(weight_map.at(name), file) << name;
      EXPECT_TRUE(t.nbytes() > 20000 || fs::file_size(hf / file) < 20000 + 4096) << file;
    }
  }
  EXPECT_EQ(seen.size(), weight_map.size());
  for (const auto& [name, count] : seen) EXPECT_EQ(count, 1) << name;
  EXPECT_EQ(index.at("metadata").at("total_size").get<int64_t>(), total);
  EXPECT_LT(oracle_error(trained_dense(), hf), kLogitTolerance);
}

TEST(HfExport, TokenizerIsCopiedWithItsConfigOrTheLackOfOneIsSaid) {
  const fs::path hf = export_to_hf(trained_dense(), "", "hf_tokenizer");
  const fs::path tokenizer = dense_fixture().root / "tok.model";  // the fixture trained it there
  ASSERT_TRUE(fs::exists(tokenizer));
  EXPECT_EQ(file_bytes(hf / "tokenizer.model"), file_bytes(tokenizer));
  const auto tokenizer_config = nlohmann::json::parse(file_bytes(hf / "tokenizer_config.json"));
  EXPECT_EQ(tokenizer_config["tokenizer_class"], "LlamaTokenizer");
  const auto config = nlohmann::json::parse(file_bytes(hf / "config.json"));
  EXPECT_EQ(config["bos_token_id"], 1);
  EXPECT_EQ(config["eos_token_id"], 2);
  EXPECT_EQ(config["torch_dtype"], "bfloat16");  // checkpoint.export_dtype's default
  EXPECT_EQ(nlohmann::json::parse(file_bytes(hf / "generation_config.json"))["eos_token_id"], 2);

  int rc = 0;
  const std::string out = kforge_cli(
      fmt::format("convert --to hf {} {}", trained_moe().string(), (temp_dir("hf_no_tok") / "hf").string()), &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("no data.tokenizer_path: no tokenizer files written"), std::string::npos) << out;
}

TEST(HfExport, TwoRankFsdpCheckpointExportsTheSameBytesAsOneRankOfTheSameWeights) {
  ASSERT_TRUE(oracle_available());
  TrainFixture fx;
  launch(fx, 2, {"--train.max_steps=5", "--distributed.dp_shard=2", "--eval.enabled=false"});
  const fs::path two_ranks = fx.checkpoint_dir / "step_5";
  const auto meta = nlohmann::json::parse(file_bytes(two_ranks / "metadata.json"));
  ASSERT_EQ(meta["world_size"], 2);
  ASSERT_EQ(meta["tensors"]["model/layers.0.attention.q_proj.weight"]["shards"].size(), 2u);  // row slices
  // The same weights, assembled and written again by one rank.
  checkpoint::Snapshot whole = checkpoint::CheckpointManager::load(two_ranks);
  whole.placements.clear();
  whole.optimizer.clear();
  whole.train_state["data"] = nlohmann::json::array({whole.train_state["data"][0]});
  const fs::path one_rank = checkpoint::CheckpointManager(temp_dir("one_rank"), 0, nullptr).save(whole);
  ASSERT_EQ(nlohmann::json::parse(file_bytes(one_rank / "metadata.json"))["world_size"], 1);
  const fs::path a = export_to_hf(two_ranks, "--dtype float32", "hf_fsdp2");
  const fs::path b = export_to_hf(one_rank, "--dtype float32", "hf_fsdp1");
  EXPECT_EQ(file_bytes(a / "model.safetensors"), file_bytes(b / "model.safetensors"));
  EXPECT_EQ(file_bytes(a / "config.json"), file_bytes(b / "config.json"));
  EXPECT_LT(oracle_error(two_ranks, a), kLogitTolerance);
}

}  // namespace
}  // namespace kforge::test::interop
