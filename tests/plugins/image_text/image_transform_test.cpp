// Resize and normalisation against torch's F.interpolate (bilinear, align_corners=False, antialias=False) run
// by python3-torch (tests/oracles/image_resize.py), down, up and anisotropic, with SigLIP and CLIP statistics.
#include "image_text_io/image_transform.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "image_fixtures.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using image_text::Normalization;

// Both sides compute in float32 on values up to 255 with at most ~6 rounded operations each (the oracle in a
// different order), so they agree within 6 x 255 x 2^-24 ~ 1e-4 before the division by 255 x std (std >= 0.26):
// 2e-6 after it. 1e-5 leaves room and still catches a half-pixel shift (~1e-2) or a wrong weight.
constexpr double kPixelTolerance = 1e-5;

TEST(ImageTransform, ResizeAndNormaliseMatchTorchInterpolate) {
  ASSERT_TRUE(oracle_available()) << "python3-torch and python3-numpy are required (scripts/setup.sh)";
  struct Case {
    int64_t in_h, in_w, out_h, out_w;
    Normalization norm;
  };
  const std::vector<Case> cases = {{23, 37, 16, 16, image_text::siglip_normalization()},
                                   {7, 5, 12, 9, image_text::clip_normalization()},
                                   {48, 64, 24, 20, image_text::siglip_normalization()},
                                   {1, 3, 4, 4, image_text::clip_normalization()}};
  const auto dir = temp_dir("image_resize");
  std::vector<std::string> args;
  std::vector<at::Tensor> ours;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const image_text::RgbImage image = test_pattern(c.in_w, c.in_h, static_cast<uint32_t>(i));
    const at::Tensor pixels =
        at::tensor(std::vector<float>(image.pixels.begin(), image.pixels.end()), at::kFloat).view({c.in_h, c.in_w, 3});
    write_npy(dir / fmt::format("in{}.npy", i), pixels);
    args.push_back(fmt::format("{}:{}:{}:{}:{}:{}", (dir / fmt::format("in{}.npy", i)).string(),
                               (dir / fmt::format("out{}.npy", i)).string(), c.out_h, c.out_w,
                               fmt::join(c.norm.mean, ","), fmt::join(c.norm.std, ",")));
    ours.push_back(image_text::to_pixel_values(image, c.out_h, c.out_w, c.norm));
  }
  std::string output;
  ASSERT_EQ(run_oracle("image_resize.py", args, &output), 0) << output;
  for (size_t i = 0; i < cases.size(); ++i) {
    const at::Tensor reference = read_npy(dir / fmt::format("out{}.npy", i));
    ASSERT_EQ(ours[i].sizes(), reference.sizes()) << "case " << i;
    EXPECT_LE((ours[i] - reference).abs().max().item<double>(), kPixelTolerance) << "case " << i;
  }
}

TEST(ImageTransform, SameSizeOnlyNormalises) {
  const image_text::RgbImage image = test_pattern(6, 4, 9);
  const at::Tensor out = image_text::to_pixel_values(image, 4, 6, image_text::siglip_normalization());
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < 4; ++y) {
      for (int64_t x = 0; x < 6; ++x) {
        const float expected = (image.pixels[(y * 6 + x) * 3 + c] / 255.0f - 0.5f) / 0.5f;
        EXPECT_FLOAT_EQ(out[c][y][x].item<float>(), expected);
      }
    }
  }
}

}  // namespace
}  // namespace kforge::test
