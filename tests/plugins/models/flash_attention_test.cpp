// Tiled causal attention against the explicit one (attention.h): outputs and q/k/v gradients for
// MHA/GQA/MQA, uneven tiles, fewer queries than keys (decode), bfloat16, at every vector width this CPU
// runs, and Attention with a KV cache.
#include "transformer/flash_attention.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "attention_grads.h"
#include "kforge/sdk/error.h"
#include "support/every_width.h"
#include "support/max_abs_diff.h"
#include "transformer/attention.h"
#include "transformer/kv_cache.h"
#include "transformer/rope.h"

namespace kforge::test {
namespace {

using builtin::models::FlashTiles;

struct Case {
  std::string name;
  int64_t batch, heads, kv_heads, sq, sk, hd;
  FlashTiles tiles;
};

using Result = AttentionGrads;

// Output and gradients of sum(out * weight) through `attend`, computed in `dtype`.
template <typename Attend>
Result run(const Case& c, at::ScalarType dtype, Attend attend) {
  return attention_grads({c.batch, c.heads, c.kv_heads, c.sq, c.sk, c.hd}, dtype, attend);
}

class FlashVsExplicit : public ::testing::TestWithParam<Case> {};

// Within 1e-5 (relative to max(1, the largest magnitude)), with the row kernels at every width.
TEST_P(FlashVsExplicit, Float32OutputAndGradientsWithin1e5) {
  const Case c = GetParam();
  const Result plain = run(c, at::kFloat, [](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v); });
  at_every_width(builtin::models::flash_attention_width, builtin::models::set_flash_attention_width, [&] {
    const Result tiled =
        run(c, at::kFloat, [&](auto& q, auto& k, auto& v) { return builtin::models::flash_attention(q, k, v, c.tiles); });
    expect_close(tiled, plain, 1e-5);
  });
}

// bfloat16 in and out, float32 inside, against the float32 explicit path on the same bf16 values:
// both round their results to bfloat16 (the reference its gradients, through .to), so they may
// differ by one bf16 ulp, at most 2^-7 of the largest magnitude.
TEST_P(FlashVsExplicit, BFloat16WithinItsOutputRounding) {
  const Case c = GetParam();
  const Result tiled =
      run(c, at::kBFloat16, [&](auto& q, auto& k, auto& v) { return builtin::models::flash_attention(q, k, v, c.tiles); });
  const Result plain = run(c, at::kBFloat16, [](auto& q, auto& k, auto& v) {
    return builtin::models::causal_attention(q.to(at::kFloat), k.to(at::kFloat), v.to(at::kFloat));
  });
  expect_close(tiled, plain, 1.0 / 128);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FlashVsExplicit,
                         ::testing::Values(Case{"MHA", 2, 4, 4, 64, 64, 16, {16, 16}},
                                           Case{"GQA", 2, 4, 2, 48, 48, 16, {16, 16}},
                                           Case{"MQA", 1, 4, 1, 40, 40, 8, {16, 8}},
                                           Case{"UnevenTiles", 2, 2, 1, 37, 37, 8, {7, 5}},
                                           Case{"TilesLargerThanSeq", 1, 2, 2, 9, 9, 8, {64, 64}},
                                           Case{"FewerQueriesThanKeys", 2, 4, 2, 5, 23, 8, {4, 6}},
                                           Case{"OneQueryManyKeys", 1, 2, 1, 1, 19, 8, {4, 4}},
                                           Case{"DefaultTilesHead64", 1, 2, 1, 130, 130, 64, {}},
                                           Case{"ThreeQueryBlocksGqa", 1, 4, 2, 300, 300, 16, {32, 32}},
                                           Case{"QueryBlocksFewerQueriesThanKeys", 1, 2, 1, 200, 330, 8, {32, 16}}),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// The explicit attention's query blocks against the whole masked product in float64 (heads
// repeated for GQA): one and several blocks, uneven last block, fewer queries than keys.
TEST(CausalAttention, QueryBlocksEqualTheFullMaskedProductInFloat64) {
  const auto full_product = [](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    const int64_t group = q.size(1) / k.size(1), sq = q.size(2), sk = k.size(2);
    const at::Tensor scores = at::matmul(q, k.repeat_interleave(group, 1).transpose(-2, -1)) / std::sqrt(q.size(3));
    const at::Tensor future = at::ones({sq, sk}, at::kBool).triu(sk - sq + 1);
    return at::matmul(at::softmax(scores.masked_fill(future, -INFINITY), -1), v.repeat_interleave(group, 1));
  };
  for (const Case& c : {Case{"OneBlock", 2, 4, 2, 100, 100, 16, {}}, Case{"ThreeBlocks", 1, 4, 2, 300, 300, 16, {}},
                        Case{"BlocksAfterACache", 1, 2, 1, 200, 330, 8, {}}}) {
    SCOPED_TRACE(c.name);
    const Result blocked =
        run(c, at::kFloat, [](auto& q, auto& k, auto& v) { return builtin::models::causal_attention(q, k, v); });
    expect_close(blocked, run(c, at::kDouble, full_product), 1e-5);
  }
}

TEST(FlashAttention, ReadsStridedKeysInPlaceLikeAKvCacheView) {
  at::manual_seed(3);
  const at::Tensor q = at::randn({1, 2, 3, 8});
  const at::Tensor storage_k = at::randn({1, 1, 32, 8}), storage_v = at::randn({1, 1, 32, 8});
  const at::Tensor k = storage_k.narrow(2, 0, 11), v = storage_v.narrow(2, 0, 11);
  EXPECT_LE(max_abs_diff(builtin::models::flash_attention(q, k, v, {2, 4}),
                         builtin::models::causal_attention(q, k.contiguous(), v.contiguous())),
            1e-5);
}

// On a CPU without bf16 instructions (LibTorch's bf16 GEMMs emulated), "auto" is tiled in bf16 too.
TEST(FlashAttention, AutoIsTiledInFloat32AndExplicitForShortBfloat16SequencesOnBf16Hardware) {
  const at::Tensor f = at::zeros({1, 2, 4, 8}), b = f.to(at::kBFloat16);
  const bool emulated = !builtin::models::cpu_has_bf16_instructions();
  EXPECT_TRUE(builtin::models::use_tiled_attention("auto", f, 512));
  EXPECT_EQ(builtin::models::use_tiled_attention("auto", b, 512), emulated);
  EXPECT_EQ(builtin::models::use_tiled_attention("auto", b, builtin::models::kAutoMathMaxKeys), emulated);
  EXPECT_TRUE(builtin::models::use_tiled_attention("auto", b, builtin::models::kAutoMathMaxKeys + 1));
  EXPECT_TRUE(builtin::models::use_tiled_attention("flash", b, 512));
  EXPECT_FALSE(builtin::models::use_tiled_attention("math", f, 512));
  EXPECT_FALSE(builtin::models::use_tiled_attention("flash", f.to(at::kDouble), 512));  // unsupported dtype
}

TEST(FlashAttention, RefusesFloat64AndMismatchedHeads) {
  EXPECT_FALSE(builtin::models::flash_attention_supports(at::zeros({1, 1, 2, 4}, at::kDouble)));
  const at::Tensor q = at::zeros({1, 3, 2, 4}), k = at::zeros({1, 2, 2, 4});
  EXPECT_THROW(builtin::models::flash_attention(q, k, k), sdk::Error);
}

// Attention with sdpa_backend "auto" (tiled) equals "math", for a full sequence and for a prefill
// followed by single-token decode steps through the KV cache.
TEST(FlashAttention, AttentionModuleMatchesMathBackendWithAndWithoutKvCache) {
  builtin::models::ModelConfig config;
  config.dim = 32;
  config.n_heads = 4;
  config.n_kv_heads = 2;
  config.max_seq_len = 16;
  at::manual_seed(5);
  config.sdpa_backend = "math";
  builtin::models::Attention math(config);
  config.sdpa_backend = "auto";
  builtin::models::Attention tiled(config);
  {
    at::NoGradGuard no_grad;
    const auto src = math.parameters(), dst = tiled.parameters();
    for (size_t i = 0; i < src.size(); ++i) {
      src[i].normal_(0.0, 0.2);  // Linear's weights start uninitialised (the model's init_weights sets them)
      dst[i].copy_(src[i]);
    }
  }
  builtin::models::RopeTables rope(config.head_dim(), config.max_seq_len, config.rope_theta);
  const at::Tensor x = at::randn({2, 8, config.dim});
  const auto [cos, sin] = rope.slice(8, x);
  const at::Tensor full = math.forward(x, cos, sin);
  EXPECT_LE(max_abs_diff(tiled.forward(x, cos, sin), full), 1e-5);

  at::NoGradGuard no_grad;
  builtin::models::KVCache cache(1, 2, config.max_seq_len);
  const at::Tensor prefill = tiled.forward(x.narrow(1, 0, 5), cos.narrow(0, 0, 5), sin.narrow(0, 0, 5), &cache, 0);
  cache.advance(5);
  EXPECT_LE(max_abs_diff(prefill, full.narrow(1, 0, 5)), 1e-5);
  for (int64_t p = 5; p < 8; ++p) {
    const at::Tensor step = tiled.forward(x.narrow(1, p, 1), cos.narrow(0, p, 1), sin.narrow(0, p, 1), &cache, 0);
    cache.advance(1);
    EXPECT_LE(max_abs_diff(step, full.narrow(1, p, 1)), 1e-5) << "position " << p;
  }
}

}  // namespace
}  // namespace kforge::test
