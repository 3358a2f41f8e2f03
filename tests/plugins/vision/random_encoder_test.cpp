// The `random` encoder: KempnerForge's RandomVisionEncoder output for output (tests/oracles/vit_towers.py
// runs its algorithm in python3-torch), the same tokens for the same image, no parameters.
#include "random_encoder.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "plugins/vision/vision_oracle.h"
#include "support/max_abs_diff.h"

namespace kforge::test {
namespace {

TEST(RandomEncoder, MatchesKempnerForgesStubIncludingANegativeSeed) {
  const auto dir = vision_oracle_dir("vit_towers.py");
  ASSERT_FALSE(dir.empty());
  const auto expected = read_tensors(dir / "random" / "expected.safetensors");
  vision::RandomEncoder encoder(/*num_tokens=*/5, /*feature_dim=*/7, /*seed=*/11);  // as the oracle
  const at::Tensor pixels = expected.at("pixel_values");
  ASSERT_LT(pixels[2].sum().item<double>(), 0) << "the case must include a negative seed";
  const at::Tensor out = encoder.forward(pixels);
  ASSERT_EQ(out.sizes(), at::IntArrayRef({3, 5, 7}));
  // The same generator and the same draws: bit for bit.
  EXPECT_EQ(max_abs_diff(out, expected.at("output")), 0.0);
}

TEST(RandomEncoder, IsDeterministicPerImageAndHasNoParameters) {
  vision::RandomEncoder encoder;
  EXPECT_EQ(encoder.num_tokens(), 16);
  EXPECT_EQ(encoder.feature_dim(), 768);
  EXPECT_TRUE(encoder.parameters().empty());
  const at::Tensor a = at::full({1, 3, 8, 8}, 0.25), b = at::full({1, 3, 8, 8}, 0.5);
  const at::Tensor batch = encoder.forward(at::cat({a, b, a}));
  EXPECT_TRUE(at::equal(batch[0], batch[2])) << "the same image gives the same tokens within a batch";
  EXPECT_TRUE(at::equal(encoder.forward(a)[0], batch[0])) << "and across calls";
  EXPECT_FALSE(at::equal(batch[0], batch[1]));
  EXPECT_NEAR(batch.mean().item<double>(), 0.0, 0.1);  // standard normal draws: 3*16*768 of them
  EXPECT_NEAR(batch.std().item<double>(), 1.0, 0.1);
  EXPECT_THROW(vision::RandomEncoder(0, 4), std::exception);
  EXPECT_THROW(encoder.forward(at::full({1, 3, 2, 2}, NAN)), std::exception) << "a NaN image seeds nothing";
}

}  // namespace
}  // namespace kforge::test
