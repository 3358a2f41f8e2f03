// A frozen encoder's forward (sdk::VisionEncoder::forward_frozen) records no autograd graph: its output has no
// grad_fn, gradients reach the adapter but never the encoder or the pixels, and the values equal forward's.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "mlp_adapter.h"
#include "plugins/vision/tiny_vit.h"
#include "vit_encoder.h"

namespace kforge::test {
namespace {

TEST(FrozenEncoder, ForwardFrozenRecordsNoGraph) {
  vision::VitEncoder encoder(tiny_vit_config(vision::VitTower::clip));
  vision::MlpAdapter adapter(8, 12);
  const at::Tensor pixels = at::randn({2, 3, 8, 8}).requires_grad_(true);

  const at::Tensor frozen = encoder.forward_frozen(pixels);
  EXPECT_TRUE(at::GradMode::is_enabled()) << "grad mode is restored afterwards";
  EXPECT_FALSE(frozen.requires_grad());
  EXPECT_EQ(frozen.grad_fn(), nullptr);
  EXPECT_TRUE(at::equal(frozen, encoder.forward(pixels))) << "the same values as forward";

  adapter.forward(frozen).sum().backward();
  for (const auto& p : adapter.named_parameters()) EXPECT_TRUE(p.value().grad().defined()) << p.key();
  for (const auto& p : encoder.named_parameters()) EXPECT_FALSE(p.value().grad().defined()) << p.key();
  EXPECT_FALSE(pixels.grad().defined());
}

}  // namespace
}  // namespace kforge::test
