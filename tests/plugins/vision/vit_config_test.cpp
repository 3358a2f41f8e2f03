// read_vit_config: a full model's vision_config or a vision-only config.json, Hugging Face's defaults for
// absent keys, and errors that name the file, the key and the value.
#include "vit_config.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using vision::VitTower;

std::filesystem::path config_dir(const std::string& json) {
  const auto dir = temp_dir("vit_config");
  std::ofstream(dir / "config.json") << json;
  return dir;
}

// The message of the ConfigError read_vit_config throws for `json`.
std::string config_error(const std::string& json, VitTower tower) {
  const auto dir = config_dir(json);
  return config_error_of([&] { vision::read_vit_config(dir, tower); });
}

TEST(VitConfig, ReadsANestedVisionConfigWithSiglipDefaults) {
  const auto c = vision::read_vit_config(
      config_dir(R"({"model_type": "siglip", "vision_config": {"hidden_size": 64, "num_attention_heads": 4,
                     "image_size": 32, "patch_size": 8}})"),
      VitTower::siglip2);
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.num_attention_heads, 4);
  EXPECT_EQ(c.num_patches(), 16);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.num_hidden_layers, 12);
  EXPECT_EQ(c.num_channels, 3);
  EXPECT_EQ(c.hidden_act, "gelu_pytorch_tanh");
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-6);
}

TEST(VitConfig, ReadsAVisionOnlyConfigWithClipDefaults) {
  const auto c = vision::read_vit_config(config_dir(R"({"model_type": "clip_vision_model"})"), VitTower::clip);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.patch_size, 32);
  EXPECT_EQ(c.image_size, 224);
  EXPECT_EQ(c.num_patches(), 49);
  EXPECT_EQ(c.hidden_act, "quick_gelu");
  EXPECT_DOUBLE_EQ(c.layer_norm_eps, 1e-5);
}

TEST(VitConfig, ErrorsNameTheFileKeyAndValue) {
  expect_has(config_error(R"({"vision_config": {"hidden_size": "64"}})", VitTower::siglip2),
             {"config.json: vision_config.hidden_size = \"64\": expected an integer"});
  expect_has(config_error(R"({"hidden_size": 30, "num_attention_heads": 4})", VitTower::clip),
             {"config.json: hidden_size = 30", "multiple of num_attention_heads (4)"});
  expect_has(config_error(R"({"model_type": "siglip2"})", VitTower::siglip2),
             {"config.json: model_type = \"siglip2\"", "NaFlex"});
  expect_has(config_error(R"({"model_type": "siglip"})", VitTower::clip), {"model_type = \"siglip\"", "clip"});
  expect_has(config_error(R"({"vision_config": {"hidden_act": "swish"}})", VitTower::siglip2),
             {"vision_config.hidden_act = \"swish\"", "gelu_pytorch_tanh, quick_gelu, gelu"});
  expect_has(config_error(R"({"attention_dropout": 0.1})", VitTower::clip), {"attention_dropout = 0.1"});
  expect_has(config_error(R"({"patch_size": 0})", VitTower::clip), {"patch_size = 0: must be positive"});
  expect_has(config_error("{not json", VitTower::clip), {"config.json: not valid JSON"});
  expect_has(config_error_of([] { vision::read_vit_config(temp_dir("vit_config_none"), VitTower::siglip2); }),
             {"config.json", "[vision_encoder] path", "local Hugging Face model directory"});
}

}  // namespace
}  // namespace kforge::test
