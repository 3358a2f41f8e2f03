// load_hf_tensors: copies by name, and refuses, before copying anything, a checkpoint that lacks a
// parameter or holds one of another shape, naming the file and each tensor.
#include "hf_tensors.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <kforge/sdk/error.h>

#include "plugins/vision/tiny_vit.h"
#include "support/expect_text.h"
#include "vit_encoder.h"

namespace kforge::test {
namespace {

std::shared_ptr<vision::VitEncoder> tiny_siglip() {
  return std::make_shared<vision::VitEncoder>(tiny_vit_config(vision::VitTower::siglip2));
}

std::map<std::string, at::Tensor> random_tensors_for(torch::nn::Module& module) {
  std::map<std::string, at::Tensor> tensors;
  for (const auto& p : module.named_parameters()) tensors[p.key()] = at::randn(p.value().sizes(), at::kDouble);
  return tensors;
}

TEST(HfTensors, CopiesEveryParameterByNameInTheParametersDtype) {
  auto encoder = tiny_siglip();
  const auto tensors = random_tensors_for(*encoder);
  ASSERT_EQ(tensors.count("vision_model.encoder.layers.1.self_attn.q_proj.weight"), 1u);
  ASSERT_EQ(tensors.count("vision_model.embeddings.patch_embedding.bias"), 1u);
  EXPECT_TRUE(vision::load_hf_tensors(*encoder, tensors, "m.safetensors").empty());
  for (const auto& p : encoder->named_parameters()) {
    EXPECT_EQ(p.value().scalar_type(), at::kFloat) << p.key();
    EXPECT_TRUE(at::equal(p.value(), tensors.at(p.key()).to(at::kFloat))) << p.key();
  }
}

TEST(HfTensors, RefusesMissingAndMisshapenTensorsNamingThemAndTheFile) {
  auto encoder = tiny_siglip();
  auto tensors = random_tensors_for(*encoder);
  const at::Tensor before = encoder->named_parameters()["vision_model.post_layernorm.weight"].clone();
  tensors.erase("vision_model.encoder.layers.1.mlp.fc2.bias");
  tensors["vision_model.embeddings.position_embedding.weight"] = at::zeros({5, 8});
  try {
    vision::load_hf_tensors(*encoder, tensors, "/ckpt/model.safetensors");
    ADD_FAILURE() << "no error";
  } catch (const sdk::Error& e) {
    expect_has(e.what(),
               {"/ckpt/model.safetensors", "missing tensors", "vision_model.encoder.layers.1.mlp.fc2.bias [8]",
                "wrong shape", "vision_model.embeddings.position_embedding.weight: expected [4, 8], found [5, 8]"});
  }
  EXPECT_TRUE(at::equal(encoder->named_parameters()["vision_model.post_layernorm.weight"], before))
      << "nothing is copied from a checkpoint that does not fit";
}

}  // namespace
}  // namespace kforge::test
