// Cross-section rules that need the world size (JobConfig.validate, §1.2), run by check_world
// once the process group exists.
#include <gtest/gtest.h>

#include "config_helpers.h"
#include "config/rules.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

void expect_ok(const std::string& toml, int world_size, const std::vector<std::string>& overrides = {}) {
  const config::JobConfig job = load(toml, overrides);
  EXPECT_NO_THROW(config::check_world(job.tree, world_size)) << toml;
}

TEST(WorldRules, ParallelProductMustEqualWorldSize) {
  const std::string toml = "[distributed]\ndp_shard = 2\ntp = 2\n";
  expect_ok(toml, 4);
  expect_has(world_error(toml, 8), {"cfg.toml:2:12: [distributed] dp_shard = 2",
                                    "Parallelism dimensions (dp_replicate=1 x dp_shard=2 x tp=2 x pp=1 x cp=1 x ep=1) "
                                    "do not match world_size (8)"});
  // cp is counted in the product.
  expect_has(world_error("[distributed]\ndp_shard = 2\ncp = 2\n", 2), {"cp=2", "world_size (2)"});
}

TEST(WorldRules, AutoDpShardNeedsDivisibility) {
  expect_ok("", 1);
  expect_ok("", 7);
  expect_ok("[distributed]\ntp = 2\ndp_replicate = 2\n", 8);
  expect_has(world_error("[distributed]\ntp = 2\npp = 2\n", 6),
             {"[distributed] dp_shard = -1", "auto dp_shard needs world_size (6) divisible by dp_replicate*tp*pp*cp*ep (4)"});
  expect_has(world_error("[distributed]\ntp = 4\n", 2), {"world_size (2) divisible", "(4)"});
}

TEST(WorldRules, ContextParallelComposesWithDataAndTensorParallelismOnly) {
  expect_ok("[distributed]\ncp = 2\ndp_shard = 2\n", 4);
  expect_ok("[distributed]\ncp = 2\ntp = 2\n", 4);
  expect_has(world_error("[model]\nnum_experts = 4\n[distributed]\ncp = 2\nep = 2\n", 4),
             {"[distributed] ep = 2", "composes with data parallelism, FSDP and tensor parallelism only"});
  expect_has(world_error("[distributed]\ncp = 2\npp = 2\n", 4), {"[distributed] pp = 2", "set pp = 1"});
  expect_has(world_error("[model]\nnum_experts = 4\n[distributed]\ncp = 2\n", 2),
             {"[distributed] cp = 2", "a dense model"});
  expect_has(world_error("[train]\nseq_len = 1022\n[distributed]\ncp = 2\n", 2),
             {"[train] seq_len = 1022", "must be a multiple of 2 x [distributed] cp = 4"});
}

TEST(WorldRules, SeqLenAtMostMaxSeqLen) {
  expect_ok("[train]\nseq_len = 2048\n", 1);
  expect_has(world_error("[train]\nseq_len = 4096\n", 1),
             {"cfg.toml:2:11: [train] seq_len = 4096", "must be <= [model] max_seq_len (2048)"});
}

TEST(WorldRules, TiedEmbeddingsWithPipeline) {
  expect_ok("[model]\ntie_embeddings = true\n", 2, {"--distributed.dp_shard=2"});
  expect_has(world_error("[model]\ntie_embeddings = true\n[distributed]\npp = 2\n", 2),
             {"[distributed] pp = 2", "Tied embeddings are not supported with pipeline parallelism"});
}

TEST(WorldRules, EvalEnabledNeedsData) {
  expect_has(world_error("[eval]\nenabled = true\n", 1),
             {"cfg.toml:2:11: [eval] enabled = true", "neither [eval] dataset_path nor hf_dataset_name is set"});
  expect_ok("[eval]\nenabled = true\ndataset_path = \"val\"\n", 1);
  expect_ok("[eval]\nenabled = true\nhf_dataset_name = \"wikitext\"\n", 1);
}

TEST(WorldRules, TensorParallelDivisibility) {
  expect_ok("[model]\nn_heads = 32\nn_kv_heads = 8\n[distributed]\ntp = 4\n", 4);
  expect_has(world_error("[model]\ndim = 4608\nn_heads = 36\n[distributed]\ntp = 8\n", 8),
             {"[distributed] tp = 8", "[model] n_heads (36) must be divisible by tp"});
  expect_has(world_error("[model]\nn_heads = 32\nn_kv_heads = 2\n[distributed]\ntp = 4\n", 4),
             {"[distributed] tp = 4", "[model] n_kv_heads (2) must be divisible by tp"});
  expect_has(world_error("[model]\nvocab_size = 33\n[distributed]\ntp = 2\n", 2),
             {"[distributed] tp = 2", "[model] vocab_size (33) must be divisible by tp", "pad vocab_size"});
}

TEST(WorldRules, Fp8WithTensorParallel) {
  expect_ok("[train]\nmixed_precision = \"fp8\"\n", 2);
  expect_has(world_error("[train]\nmixed_precision = \"fp8\"\n[distributed]\ntp = 2\n", 2),
             {"[distributed] tp = 2", "FP8 + Tensor Parallelism is not yet supported"});
}

TEST(WorldRules, MoeWithPipeline) {
  expect_ok("[model]\nnum_experts = 8\n", 2);
  expect_has(world_error("[model]\nnum_experts = 8\n[distributed]\npp = 2\n", 2),
             {"[distributed] pp = 2", "MoE + Pipeline Parallelism is not supported"});
}

TEST(WorldRules, ExpertParallelRules) {
  expect_ok("[model]\nnum_experts = 8\n[distributed]\nep = 4\n", 4);
  expect_has(world_error("[distributed]\nep = 2\n", 2),
             {"[distributed] ep = 2", "expert parallelism (ep > 1) needs an MoE model"});
  expect_has(world_error("[model]\nnum_experts = 6\n[distributed]\nep = 4\n", 4),
             {"[distributed] ep = 4", "[model] num_experts (6) must be divisible by ep"});
}

}  // namespace
}  // namespace kforge::test
