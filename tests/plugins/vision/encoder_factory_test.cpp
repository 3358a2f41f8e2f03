// make_vision_encoder: each [vision_encoder] type by name, sizes from the tower's config.json, and the
// refusals naming the key (unknown type, no path, a size the tower does not have).
#include "encoder_factory.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/expect_text.h"
#include "support/test_host.h"
#include "vit_encoder.h"

namespace kforge::test {
namespace {

vision::EncoderOptions encoder_options(const std::string& type, const std::string& path = "") {
  vision::EncoderOptions o;
  o.type = type;
  o.path = path;
  return o;
}

std::string tower_dir(const std::string& config_json) {
  const auto dir = temp_dir("encoder_factory");
  std::ofstream(dir / "config.json") << config_json;
  return dir.string();
}

TEST(EncoderFactory, BuildsEachTypeWithItsSizes) {
  const auto random = vision::make_vision_encoder(encoder_options("random"));
  EXPECT_EQ(random->num_tokens(), 16);
  EXPECT_EQ(random->feature_dim(), 768);
  auto o = encoder_options("random");
  o.num_tokens = 4;
  o.feature_dim = 6;
  EXPECT_EQ(vision::make_vision_encoder(o)->forward(at::zeros({2, 3, 8, 8})).sizes(), at::IntArrayRef({2, 4, 6}));

  const std::string small = R"({"hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1,
                                "num_attention_heads": 2, "image_size": 8, "patch_size": 4})";
  const auto siglip = vision::make_vision_encoder(encoder_options("siglip2", tower_dir(small)));
  EXPECT_EQ(siglip->num_tokens(), 4);
  EXPECT_EQ(siglip->feature_dim(), 8);
  const auto clip = vision::make_vision_encoder(encoder_options("clip", tower_dir(small)));
  EXPECT_EQ(dynamic_cast<vision::VitEncoder&>(*clip).config().hidden_act, "quick_gelu");
  EXPECT_EQ(clip->forward(at::zeros({1, 3, 8, 8})).sizes(), at::IntArrayRef({1, 4, 8})) << "CLS stripped";
  o = encoder_options("siglip2", tower_dir(small));
  o.num_tokens = 4;  // equal to the tower's: accepted
  EXPECT_EQ(vision::make_vision_encoder(o)->num_tokens(), 4);
}

TEST(EncoderFactory, RefusalsNameTheKey) {
  expect_has(config_error_of([] { vision::make_vision_encoder(encoder_options("dino")); }),
             {"[vision_encoder] type = \"dino\"", "random, siglip2, clip"});
  expect_has(config_error_of([] { vision::make_vision_encoder(encoder_options("clip")); }),
             {"[vision_encoder] path is required for type = \"clip\""});
  auto o = encoder_options(
      "siglip2",
      tower_dir(
          R"({"hidden_size": 8, "intermediate_size": 12, "num_attention_heads": 2, "num_hidden_layers": 1, "image_size": 32, "patch_size": 16})"));
  o.num_tokens = 16;
  expect_has(config_error_of([&] { vision::make_vision_encoder(o); }),
             {"[vision_encoder] num_tokens = 16", "gives 4", "set num_tokens = 0 or 4"});
  o = encoder_options("random");
  o.feature_dim = -1;
  expect_has(config_error_of([&] { vision::make_vision_encoder(o); }), {"feature_dim = -1"});
}

}  // namespace
}  // namespace kforge::test
