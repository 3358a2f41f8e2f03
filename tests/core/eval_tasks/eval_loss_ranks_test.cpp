// `kforge eval` (the eval loss) on two ranks under `kforge launch`: the batches are shared out and rank 0 prints, bit
// for bit, what one process prints; the other rank prints no result.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "core/interop/interop_test_util.h"
#include "support/test_host.h"

namespace kforge::test::eval_tasks {
namespace {
namespace fs = std::filesystem;
using interop::dense_fixture;
using interop::file_bytes;
using interop::kforge_cli;
using interop::trained_dense;

/// The result line (`{"step": ...}`) of an eval's output; empty when there is none.
std::string result_line(const std::string& output) {
  const size_t at = output.find("{\"eval/loss\"");
  return at == std::string::npos ? "" : output.substr(at, output.find('\n', at) - at);
}

TEST(EvalLossRanks, TwoRanksPrintOneRanksLossAndPerplexityBitForBit) {
  // 5 batches: rank 0 scores 3 of them, rank 1 two; the training shards, whose windows differ batch to batch.
  const std::string eval = fmt::format("eval --checkpoint {} --eval.dataset_path={} --eval.steps=5",
                                       trained_dense().string(), dense_fixture().data_dir.string());
  int rc = 0;
  const std::string one = kforge_cli(eval, &rc);
  ASSERT_EQ(rc, 0) << one;
  ASSERT_FALSE(result_line(one).empty()) << one;
  const fs::path logs = temp_dir("eval_loss_two_ranks");
  const std::string two =
      kforge_cli(fmt::format("launch --nproc-per-node 2 --log-dir {} -- {}", logs.string(), eval), &rc);
  ASSERT_EQ(rc, 0) << two;
  EXPECT_EQ(result_line(file_bytes(logs / "rank_0.log")), result_line(one));
  EXPECT_EQ(result_line(file_bytes(logs / "rank_1.log")), "");
}

}  // namespace
}  // namespace kforge::test::eval_tasks
