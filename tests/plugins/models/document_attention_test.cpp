// Document-masked attention ([data] pack_sequences): every kernel (tiled flash_attention, the explicit
// causal_attention with the fused causal_softmax and with its masked_fill composite) against a float64
// block-diagonal causal reference built from the document ids (same document and key <= query), outputs
// and q/k/v gradients, at every vector width; document_starts itself; and a row of one document equal to
// plain causal attention.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attention_grads.h"
#include "kforge/sdk/error.h"
#include "support/every_width.h"
#include "support/max_abs_diff.h"
#include "transformer/attention.h"
#include "transformer/causal_softmax.h"
#include "transformer/document_starts.h"
#include "transformer/flash_attention.h"
#include "transformer/rope.h"

namespace kforge::test {
namespace {

using builtin::models::FlashTiles;

// Document ids of rows made of documents of the given lengths (each row's lengths sum to the same S).
at::Tensor ids_of(const std::vector<std::vector<int64_t>>& rows) {
  std::vector<at::Tensor> out;
  for (const auto& lengths : rows) {
    std::vector<int64_t> ids;
    for (size_t d = 0; d < lengths.size(); ++d) ids.insert(ids.end(), lengths[d], static_cast<int64_t>(d));
    out.push_back(at::tensor(ids, at::kLong));
  }
  return at::stack(out);
}

using Grads = AttentionGrads;

// Output and gradients of sum(out * weight) through `attend` (attention_grads), keys as many as queries.
template <typename Attend>
Grads run(int64_t batch, int64_t heads, int64_t kv_heads, int64_t seq, int64_t hd, at::ScalarType dtype,
          Attend attend) {
  return attention_grads({batch, heads, kv_heads, seq, seq, hd}, dtype, attend, 11);
}

// softmax(q k^T / sqrt(hd) masked to the same document at or before the query) v, in float64, from the ids.
at::Tensor block_diagonal_reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const at::Tensor& ids) {
  const int64_t group = q.size(1) / k.size(1), seq = q.size(2);
  const at::Tensor kh = k.repeat_interleave(group, 1), vh = v.repeat_interleave(group, 1);
  const at::Tensor scores = at::matmul(q, kh.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
  const at::Tensor same_doc = ids.unsqueeze(2).eq(ids.unsqueeze(1));  // [B, S, S]
  const at::Tensor causal = at::ones({seq, seq}, ids.options().dtype(at::kBool)).tril();
  const at::Tensor visible = same_doc.logical_and(causal).unsqueeze(1);  // [B, 1, S, S]
  return at::matmul(scores.masked_fill(visible.logical_not(), -INFINITY).softmax(-1), vh);
}

struct DocCase {
  std::string name;
  int64_t heads, kv_heads, hd;
  std::vector<std::vector<int64_t>> documents;  ///< per row, its documents' lengths
  FlashTiles tiles;
};

class DocumentAttention : public ::testing::TestWithParam<DocCase> {};

// float32 kernels against the float64 reference: 1e-5 relative to the largest magnitude (float32 rounding of
// dot products over <= a few hundred terms, as FlashVsExplicit).
TEST_P(DocumentAttention, EveryKernelMatchesTheBlockDiagonalReference) {
  const DocCase c = GetParam();
  const at::Tensor ids = ids_of(c.documents);
  const at::Tensor starts = builtin::models::document_starts(ids);
  const int64_t batch = ids.size(0), seq = ids.size(1);
  const Grads want = run(batch, c.heads, c.kv_heads, seq, c.hd, at::kDouble,
                         [&](auto& q, auto& k, auto& v) { return block_diagonal_reference(q, k, v, ids); });
  at_every_width(builtin::models::flash_attention_width, builtin::models::set_flash_attention_width, [&] {
    expect_close(
        run(batch, c.heads, c.kv_heads, seq, c.hd, at::kFloat,
            [&](auto& q, auto& k, auto& v) { return builtin::models::flash_attention(q, k, v, c.tiles, starts); }),
        want, 1e-5);
  });
  at_every_width(builtin::models::causal_softmax_width, builtin::models::set_causal_softmax_width, [&] {
    expect_close(
        run(batch, c.heads, c.kv_heads, seq, c.hd, at::kFloat,
            [&](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v, true, starts); }),
        want, 1e-5);
  });
  expect_close(
      run(batch, c.heads, c.kv_heads, seq, c.hd, at::kFloat,
          [&](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v, false, starts); }),
      want, 1e-5);
  // float64 takes the composite whatever `fused` says: exact up to float64 rounding.
  expect_close(run(batch, c.heads, c.kv_heads, seq, c.hd, at::kDouble,
                   [&](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v, true, starts); }),
               want, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Layouts, DocumentAttention,
                         ::testing::Values(
                             // An EOS first (a document of one), consecutive ones, documents across uneven tiles.
                             DocCase{"UnevenTilesGqa", 4, 2, 8, {{1, 12, 1, 1, 15, 7}, {37}}, {5, 7}},
                             DocCase{"TallTilesMqa", 4, 1, 8, {{3, 3, 3, 3, 25}, {20, 17}}, {16, 4}},
                             DocCase{"OneTokenDocuments", 2, 2, 8, {std::vector<int64_t>(19, 1)}, {4, 4}},
                             // Default tiles (64) and the explicit path's 128-query blocks, with rows whose first
                             // query's document starts at different keys.
                             DocCase{"QueryBlocksMha", 2, 2, 16, {{100, 120, 80}, {5, 250, 45}}, {}},
                             DocCase{"DocumentsAcrossQueryBlocks", 4, 2, 16, {{129, 1, 170}, {127, 173}}, {32, 48}}),
                         [](const ::testing::TestParamInfo<DocCase>& info) { return info.param.name; });

// A row of one document is plain causal attention, bit for bit in every kernel.
TEST(DocumentAttention, OneDocumentIsPlainCausal) {
  const at::Tensor ids = at::zeros({2, 45}, at::kLong);
  const at::Tensor starts = builtin::models::document_starts(ids);
  const auto same = [&](auto attend_docs, auto attend_plain) {
    const Grads a = run(2, 4, 2, 45, 8, at::kFloat, attend_docs), b = run(2, 4, 2, 45, 8, at::kFloat, attend_plain);
    expect_close(a, b, 0.0);
  };
  same(
      [&](auto& q, auto& k, auto& v) {
        return builtin::models::flash_attention(q, k, v, {8, 8}, starts);
      },
      [&](auto& q, auto& k, auto& v) {
        return builtin::models::flash_attention(q, k, v, {8, 8});
      });
  same([&](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v, true, starts); },
       [&](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v, true); });
  same([&](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v, false, starts); },
       [&](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v, false); });
}

TEST(DocumentStarts, EachTokensDocumentStart) {
  const at::Tensor starts = builtin::models::document_starts(ids_of({{1, 3, 1, 2}, {7}}));
  EXPECT_TRUE(starts.equal(at::tensor({0, 1, 1, 1, 4, 5, 5, 0, 0, 0, 0, 0, 0, 0}, at::kLong).view({2, 7})));
  // Ids need not start at 0 or be consecutive; only the changes count.
  EXPECT_TRUE(builtin::models::document_starts(at::tensor({4, 4, 9, 9, 9}, at::kLong).view({1, 5}))
                  .equal(at::tensor({0, 0, 2, 2, 2}, at::kLong).view({1, 5})));
}

TEST(DocumentStarts, RefusesDecreasingIdsAndOtherShapes) {
  try {
    builtin::models::document_starts(at::tensor({0, 0, 1, 0, 1, 0}, at::kLong).view({2, 3}));
    FAIL() << "decreasing ids accepted";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 goes down after position 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(builtin::models::document_starts(at::zeros({4}, at::kLong)), sdk::Error);
  EXPECT_THROW(builtin::models::document_starts(at::zeros({2, 4}, at::kInt)), sdk::Error);
}

// Packed rows' RoPE tables: row b, token t takes the table row of its position in its document.
TEST(DocumentStarts, RopePositionsRestartAtEachDocument) {
  builtin::models::RopeTables rope(8, 16, 10000.0);
  const at::Tensor ids = ids_of({{3, 5}, {8}});
  const at::Tensor positions = at::arange(8, at::kLong) - builtin::models::document_starts(ids);
  EXPECT_TRUE(positions.equal(at::tensor({0, 1, 2, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 6, 7}, at::kLong).view({2, 8})));
  const auto [cos, sin] = rope.gather(positions, at::zeros({1}));
  ASSERT_EQ(cos.sizes(), (std::vector<int64_t>{2, 1, 8, 4}));
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t t = 0; t < 8; ++t) {
      const int64_t p = positions[b][t].item<int64_t>();
      EXPECT_TRUE(cos[b][0][t].equal(rope.cos()[p])) << b << ", " << t;
      EXPECT_TRUE(sin[b][0][t].equal(rope.sin()[p])) << b << ", " << t;
    }
  }
}

// The kernels refuse document starts with a KV cache's extra keys (packing is for training only).
TEST(DocumentAttention, RefusesDocumentsWithFewerQueriesThanKeys) {
  const at::Tensor q = at::randn({1, 2, 3, 8}), k = at::randn({1, 2, 5, 8});
  EXPECT_THROW(builtin::models::flash_attention(q, k, k, {}, at::zeros({1, 3}, at::kLong)), sdk::Error);
  EXPECT_THROW(builtin::models::causal_softmax(at::randn({1, 2, 3, 5}), 1.0, 3, true, at::full({1, 3}, 4, at::kLong)),
               sdk::Error);  // a first key past its query
}

}  // namespace
}  // namespace kforge::test
