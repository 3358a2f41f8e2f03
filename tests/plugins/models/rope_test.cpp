// RoPE: table values, identity at position 0, norm preservation, relative-position property.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>
#include <torch/utils.h>

#include <cmath>

#include "transformer/rope.h"

namespace kforge::test::models {
namespace {

using kforge::builtin::models::apply_rope;
using kforge::builtin::models::RopeTables;

TEST(ModelRope, TablesAreThetaPowers) {
  RopeTables rope(16, 64, 10000.0);
  ASSERT_EQ(rope.cos().sizes(), (at::IntArrayRef{64, 8}));
  EXPECT_EQ(rope.cos().scalar_type(), at::kFloat);
  for (int64_t p : {0, 1, 5, 63}) {
    for (int64_t i = 0; i < 8; ++i) {
      const double angle = static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(i) / 16.0);
      EXPECT_NEAR(rope.cos()[p][i].item<double>(), std::cos(angle), 1e-5) << p << "," << i;
      EXPECT_NEAR(rope.sin()[p][i].item<double>(), std::sin(angle), 1e-5) << p << "," << i;
    }
  }
}

TEST(ModelRope, PositionZeroIsIdentity) {
  RopeTables rope(32, 16, 10000.0);
  const at::Tensor x = at::randn({2, 4, 1, 32});
  const auto [cos, sin] = rope.slice(1, x);
  EXPECT_TRUE(at::equal(apply_rope(x, cos, sin), x));
}

TEST(ModelRope, UnitMagnitudeRotationPreservesPairNorms) {
  RopeTables rope(32, 128, 500000.0);
  const at::Tensor mag = rope.cos().pow(2) + rope.sin().pow(2);
  EXPECT_TRUE(at::allclose(mag, at::ones_like(mag), 0, 1e-6));
  const at::Tensor x = at::randn({2, 3, 128, 32});
  const auto [cos, sin] = rope.slice(128, x);
  const at::Tensor y = apply_rope(x, cos, sin);
  // Rotate-half layout: dims i and i + 16 form a pair; each pair keeps its length.
  auto pair_norm = [](const at::Tensor& t) { return t.narrow(-1, 0, 16).pow(2) + t.narrow(-1, 16, 16).pow(2); };
  EXPECT_TRUE(at::allclose(pair_norm(y), pair_norm(x), 1e-5, 1e-5));
}

TEST(ModelRope, RotateHalfPairsAndRelativePositions) {
  RopeTables rope(8, 32, 10000.0);
  // A unit vector on dim 0 at position p becomes (cos a0, 0,0,0, sin a0, 0,0,0): pairs (i, i + hd/2).
  at::Tensor e0 = at::zeros({1, 1, 32, 8});
  e0.select(-1, 0).fill_(1.0);
  const auto [cos, sin] = rope.slice(32, e0);
  const at::Tensor y = apply_rope(e0, cos, sin);
  EXPECT_TRUE(at::allclose(y.select(-1, 0).flatten(), cos.select(-1, 0)));
  EXPECT_TRUE(at::allclose(y.select(-1, 4).flatten(), sin.select(-1, 0)));
  EXPECT_EQ(y.narrow(-1, 1, 3).abs().max().item<double>(), 0.0);
  // <rope(q, m), rope(k, n)> depends only on m - n.
  const at::Tensor q = at::randn({8}), k = at::randn({8});
  auto at_pos = [&](const at::Tensor& v, int64_t p) {
    return apply_rope(v.view({1, 1, 1, 8}), cos.narrow(0, p, 1), sin.narrow(0, p, 1)).flatten();
  };
  const double d1 = at::dot(at_pos(q, 9), at_pos(k, 4)).item<double>();
  const double d2 = at::dot(at_pos(q, 25), at_pos(k, 20)).item<double>();
  EXPECT_NEAR(d1, d2, 1e-5);
}

TEST(ModelRope, SliceBeyondTableIsRejected) {
  RopeTables rope(8, 16, 10000.0);
  EXPECT_THROW(rope.slice(17, at::zeros({1})), sdk::ConfigError);
  const auto [cos, sin] = rope.slice(5, at::zeros({1}, at::kDouble));
  EXPECT_EQ(cos.sizes(), (at::IntArrayRef{5, 4}));
  EXPECT_EQ(cos.scalar_type(), at::kDouble);
}

}  // namespace
}  // namespace kforge::test::models
