// The siglip2 and clip encoders against tests/oracles/vit_towers.py: a random-weight Hugging Face
// directory (config.json, model.safetensors under the real names) loads by name, and the output and the
// gradients of pixel_values and of every parameter match the independent python3-torch tower.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "hf_tensors.h"
#include "plugins/vision/vision_oracle.h"
#include "vit_encoder.h"

namespace kforge::test {
namespace {

using vision::VitTower;

class VitOracle : public ::testing::TestWithParam<VitTower> {
 protected:
  std::filesystem::path tower_dir() {
    const auto dir = vision_oracle_dir("vit_towers.py");
    return dir.empty() ? dir : dir / vision::tower_name(GetParam());
  }
};

TEST_P(VitOracle, OutputAndGradientsMatchTorch) {
  const auto dir = tower_dir();
  ASSERT_FALSE(dir.empty());
  vision::VitEncoder encoder(vision::read_vit_config(dir, GetParam()));
  vision::load_hf_tensors(encoder, read_tensors(dir / "model.safetensors"), (dir / "model.safetensors").string());
  auto expected = read_tensors(dir / "expected.safetensors");

  const at::Tensor pixels = expected.at("pixel_values").clone().requires_grad_(true);
  const at::Tensor out = encoder.forward(pixels);
  ASSERT_EQ(out.sizes(), at::IntArrayRef({2, encoder.num_tokens(), encoder.feature_dim()}));
  expect_close(out, expected.at("output"), "output");

  (out * expected.at("cotangent")).sum().backward();
  expect_close(pixels.grad(), expected.at("grad/pixel_values"), "grad/pixel_values");
  size_t compared = 0;
  for (const auto& p : encoder.named_parameters()) {
    auto it = expected.find("grad/" + p.key());
    ASSERT_NE(it, expected.end()) << p.key() << " is no parameter of the reference tower";
    expect_close(p.value().grad(), it->second, "grad/" + p.key());
    ++compared;
  }
  EXPECT_EQ(compared + 1,
            static_cast<size_t>(std::count_if(expected.begin(), expected.end(),
                                              [](const auto& e) { return e.first.rfind("grad/", 0) == 0; })))
      << "every parameter of the reference tower is one of the encoder's";
}

TEST_P(VitOracle, ReportsTheCheckpointTensorsItDoesNotUse) {
  const auto dir = tower_dir();
  ASSERT_FALSE(dir.empty());
  vision::VitEncoder encoder(vision::read_vit_config(dir, GetParam()));
  const auto unused = vision::load_hf_tensors(encoder, read_tensors(dir / "model.safetensors"), "model.safetensors");
  const std::vector<std::string> want =
      GetParam() == VitTower::siglip2
          ? std::vector<std::string>{"logit_scale", "text_model.embeddings.token_embedding.weight",
                                     "vision_model.head.attention.in_proj_weight", "vision_model.head.probe"}
          : std::vector<std::string>{"vision_model.embeddings.position_ids", "vision_model.post_layernorm.bias",
                                     "vision_model.post_layernorm.weight", "visual_projection.weight"};
  EXPECT_EQ(unused, want);
}

INSTANTIATE_TEST_SUITE_P(Towers, VitOracle, ::testing::Values(VitTower::siglip2, VitTower::clip),
                         [](const ::testing::TestParamInfo<VitTower>& info) {
                           return std::string(vision::tower_name(info.param));
                         });

}  // namespace
}  // namespace kforge::test
