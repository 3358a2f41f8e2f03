// ring_attention against python3-torch's plain float64 attention over the whole sequence (tests/oracles/
// ring_attention.py): output and q/k/v gradients of every rank's positions, the ranks simulated by threads passing
// blocks around a ring (thread_ring.h), for 1, 2 and 4 ranks, grouped-query heads, with and without packed documents
// that cross the chunk boundaries.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <kforge/sdk/context_parallel.h>
#include <kforge/sdk/error.h>

#include <string>
#include <vector>

#include "support/npy.h"
#include "support/oracle.h"
#include "support/test_host.h"
#include "thread_ring.h"
#include "transformer/document_starts.h"
#include "transformer/ring_attention.h"

namespace kforge::test {
namespace {

struct RingCase {
  int ranks;
  bool documents;
  at::ScalarType dtype;
};

class RingAttentionOracle : public ::testing::TestWithParam<RingCase> {};

TEST_P(RingAttentionOracle, EveryRanksOutputAndGradientsMatchFullAttention) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the attention oracle";
  const RingCase c = GetParam();
  const int64_t batch = 2, heads = 4, kv_heads = 2, hd = 8, seq = 8 * c.ranks * 2;  // chunks of 8 positions
  at::manual_seed(5);
  const at::Tensor q = at::randn({batch, heads, seq, hd}, at::kDouble);
  const at::Tensor k = at::randn({batch, kv_heads, seq, hd}, at::kDouble);
  const at::Tensor v = at::randn({batch, kv_heads, seq, hd}, at::kDouble);
  const at::Tensor d_out = at::randn({batch, heads, seq, hd}, at::kDouble);
  // Documents of 5, 13, ... positions: their bounds fall inside chunks and documents span several chunks.
  const at::Tensor ids = at::stack({at::arange(seq, at::kLong).div(5, "floor"), at::arange(seq, at::kLong).div(13, "floor")});

  const auto dir = temp_dir("ring_attention_oracle");
  for (const auto& [name, t] : {std::pair{"q.npy", q}, {"k.npy", k}, {"v.npy", v}, {"d_out.npy", d_out}}) {
    write_npy(dir / name, t);
  }
  if (c.documents) write_npy(dir / "doc_ids.npy", ids);
  std::string log;
  ASSERT_EQ(run_oracle("ring_attention.py", {dir.string()}, &log), 0) << log;

  const at::Tensor starts = builtin::models::document_starts(ids);
  at::Tensor out = at::zeros_like(q), d_q = at::zeros_like(q), d_k = at::zeros_like(k), d_v = at::zeros_like(v);
  const ThreadRing threads(c.ranks);
  threads.run([&](int rank) {
    const at::Tensor pos = sdk::context_positions(rank, c.ranks, seq);
    auto mine = [&](const at::Tensor& t) { return t.index_select(2, pos).to(c.dtype).requires_grad_(true); };
    const at::Tensor lq = mine(q), lk = mine(k), lv = mine(v);
    const at::Tensor local_starts = c.documents ? starts.index_select(1, pos) : at::Tensor();
    const at::Tensor lo = builtin::models::ring_attention(lq, lk, lv, threads.ring(rank), local_starts);
    (lo * d_out.index_select(2, pos).to(c.dtype)).sum().backward();
    // Each rank writes only its own positions.
    out.index_copy_(2, pos, lo.detach().to(at::kDouble));
    d_q.index_copy_(2, pos, lq.grad().to(at::kDouble));
    d_k.index_copy_(2, pos, lk.grad().to(at::kDouble));
    d_v.index_copy_(2, pos, lv.grad().to(at::kDouble));
  });
  // float64 against float64: sums of a few dozen terms of order 1 (1e-12); float32: its oracle tolerance.
  const double atol = c.dtype == at::kDouble ? 1e-12 : 1e-5, rtol = c.dtype == at::kDouble ? 1e-10 : 1e-4;
  expect_within(out, read_npy(dir / "out.npy"), "output", atol, rtol);
  expect_within(d_q, read_npy(dir / "d_q.npy"), "d_q", atol, rtol);
  expect_within(d_k, read_npy(dir / "d_k.npy"), "d_k", atol, rtol);
  expect_within(d_v, read_npy(dir / "d_v.npy"), "d_v", atol, rtol);
}

INSTANTIATE_TEST_SUITE_P(Cases, RingAttentionOracle,
                         ::testing::Values(RingCase{1, false, at::kDouble}, RingCase{2, false, at::kDouble},
                                           RingCase{4, false, at::kDouble}, RingCase{2, true, at::kDouble},
                                           RingCase{4, true, at::kDouble}, RingCase{4, true, at::kFloat}),
                         [](const ::testing::TestParamInfo<RingCase>& info) {
                           return std::to_string(info.param.ranks) + "Ranks" +
                                  (info.param.documents ? "Documents" : "") +
                                  (info.param.dtype == at::kDouble ? "Float64" : "Float32");
                         });

TEST(RingAttention, RefusesAnOddLocalSequence) {
  const at::Tensor x = at::zeros({1, 2, 3, 4});
  const builtin::models::Ring alone;
  EXPECT_THROW(builtin::models::ring_attention(x, x, x, alone), sdk::Error);
}

}  // namespace
}  // namespace kforge::test
