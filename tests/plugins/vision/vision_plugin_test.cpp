// The vision plugin through the host: every encoder and adapter it registers is built by the registry from
// its config section and runs a forward of the right shape; each encoder states the pixels it expects; a third
// party's encoder and adapter (the fixture_vision plugin) are registered, selected and configured the same way;
// list-plugins shows the kinds.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "core/plugins/fixtures.h"
#include "support/component_host.h"
#include "support/expect_text.h"
#include "support/tiny_tower.h"

namespace kforge::test {
namespace {

std::string encoder_toml(const std::string& type, const std::string& path) {
  return "[vision_encoder]\ntype = \"" + type + "\"\npath = \"" + path + "\"\n";
}

std::string adapter_toml(const std::string& type) { return "[adapter]\ntype = \"" + type + "\"\npool_heads = 2\n"; }

TEST(VisionPlugin, BuildsEachEncoderFromItsSectionWithTheRightOutputShape) {
  const std::string tower = tiny_tower_dir();
  const at::Tensor pixels = at::rand({2, 3, 8, 8});
  for (const char* type : {"siglip2", "clip"}) {
    const auto encoder = ComponentHost(encoder_toml(type, tower)).components.vision_encoder();
    EXPECT_EQ(encoder->forward(pixels).sizes(), at::IntArrayRef({2, 4, 8})) << type;
    EXPECT_EQ(encoder->num_tokens(), 4) << type;
    EXPECT_EQ(encoder->feature_dim(), 8) << type;
  }
  const auto random = ComponentHost(encoder_toml("random", "") + "num_tokens = 9\nfeature_dim = 5\nseed = 3\n")
                          .components.vision_encoder();
  EXPECT_EQ(random->forward(pixels).sizes(), at::IntArrayRef({2, 9, 5}));
  // The seed key reached the encoder: another seed, other features for the same image.
  const auto seed_0 =
      ComponentHost(encoder_toml("random", "") + "num_tokens = 9\nfeature_dim = 5\n").components.vision_encoder();
  EXPECT_FALSE(at::equal(random->forward(pixels), seed_0->forward(pixels)));
}

// What the data path makes of an image for each encoder: the tower's size and statistics; the stub takes any size.
TEST(VisionPlugin, EachEncoderStatesThePixelsItExpects) {
  const std::string tower = tiny_tower_dir();
  const sdk::PixelFormat siglip =
      ComponentHost(encoder_toml("siglip2", tower)).components.vision_encoder()->pixel_format();
  EXPECT_EQ(siglip.image_size, 8);
  EXPECT_EQ(siglip.mean, (std::array<float, 3>{0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(siglip.std, (std::array<float, 3>{0.5f, 0.5f, 0.5f}));
  const sdk::PixelFormat clip = ComponentHost(encoder_toml("clip", tower)).components.vision_encoder()->pixel_format();
  EXPECT_EQ(clip.image_size, 8);
  EXPECT_EQ(clip.mean, (std::array<float, 3>{0.48145466f, 0.4578275f, 0.40821073f}));
  EXPECT_EQ(clip.std, (std::array<float, 3>{0.26862954f, 0.26130258f, 0.27577711f}));
  const sdk::PixelFormat random = ComponentHost(encoder_toml("random", "")).components.vision_encoder()->pixel_format();
  EXPECT_EQ(random.image_size, 0);
  EXPECT_EQ(random.mean, (std::array<float, 3>{0.5f, 0.5f, 0.5f}));
}

TEST(VisionPlugin, AnEncoderLoadsHuggingFaceTensorsByNameAndReportsTheUnusedOnes) {
  const auto encoder = ComponentHost(encoder_toml("siglip2", tiny_tower_dir())).components.vision_encoder();
  std::map<std::string, at::Tensor> tensors;
  for (const auto& p : encoder->named_parameters()) tensors[p.key()] = at::full(p.value().sizes(), 0.25);
  tensors["logit_scale"] = at::zeros({1});
  EXPECT_EQ(encoder->load_hf_weights(tensors, "model.safetensors"), std::vector<std::string>{"logit_scale"});
  EXPECT_TRUE(at::equal(encoder->named_parameters()["vision_model.embeddings.patch_embedding.weight"],
                        at::full({8, 3, 4, 4}, 0.25)));
  // The random stub has nothing to load.
  const auto random = ComponentHost(encoder_toml("random", "")).components.vision_encoder();
  try {
    random->load_hf_weights(tensors, "m.safetensors");
    FAIL() << "expected sdk::Error";
  } catch (const sdk::Error& e) {
    expect_has(e.what(), {"m.safetensors", "no pretrained weights", "[vision_encoder] path"});
  }
}

TEST(VisionPlugin, BuildsEachAdapterFromItsSectionWithTheRightOutputShape) {
  const at::Tensor features = at::randn({2, 16, 8});  // a 4x4 patch grid
  const std::map<std::string, int64_t> tokens = {
      {"mlp_2layer", 16}, {"linear", 16}, {"avgpool", 4}, {"attentional_pool", 4}};
  for (const auto& [type, n] : tokens) {
    const auto adapter = ComponentHost(adapter_toml(type)).components.adapter({8, 6});
    EXPECT_EQ(adapter->output_num_tokens(16), n) << type;
    EXPECT_EQ(adapter->forward(features).sizes(), at::IntArrayRef({2, n, 6})) << type;
  }
  // A pooling adapter takes another window per call; a projection ignores it.
  const auto avgpool = ComponentHost(adapter_toml("avgpool")).components.adapter({8, 6});
  EXPECT_EQ(avgpool->output_num_tokens(16, 4), 1);
  EXPECT_EQ(avgpool->forward(features, 4).sizes(), at::IntArrayRef({2, 1, 6}));
  const auto linear = ComponentHost(adapter_toml("linear")).components.adapter({8, 6});
  EXPECT_EQ(linear->forward(features, 4).sizes(), at::IntArrayRef({2, 16, 6}));
  // The section's keys reach the adapter: mlp_2layer's hidden width.
  const auto mlp = ComponentHost("[adapter]\nhidden_dim = 10\n").components.adapter({8, 6});
  EXPECT_EQ(mlp->named_parameters()["proj1.weight"].sizes(), at::IntArrayRef({10, 8}));
}

TEST(VisionPlugin, AThirdPartysEncoderAndAdapterAreSelectedAndConfiguredByTheirSections) {
  const auto host = load_builtin_plugins({fixture_dir("vision").string()});
  const config::JobConfig job = job_from_toml(
      "[vision_encoder]\ntype = \"fixture_channel_mean\"\n[adapter]\ntype = \"fixture_repeat\"\n"
      "fixture_repeat_times = 3\n",
      host->registry);
  const plugins::Components components(host->registry, job);
  const auto encoder = components.vision_encoder();
  const auto adapter = components.adapter({encoder->feature_dim(), 4});
  const at::Tensor features = encoder->forward(at::rand({2, 3, 8, 8}));
  EXPECT_EQ(features.sizes(), at::IntArrayRef({2, 1, 3}));
  EXPECT_EQ(adapter->forward(features).sizes(), at::IntArrayRef({2, 3, 4}));
  EXPECT_EQ(adapter->output_num_tokens(encoder->num_tokens()), 3);
}

TEST(VisionPlugin, ListPluginsShowsTheVisionKindsAndTheirKeys) {
  std::string out;
  const std::string kforge = std::string(KFORGE_BIN) + " list-plugins";
  ASSERT_EQ(run_command(kforge + " -v --plugin-dir " + fixture_dir("vision").string(), &out), 0) << out;
  expect_has(out, {"vision_encoder     random ", "vision_encoder     siglip2 ", "vision_encoder     clip ",
                   "[vision_encoder] path (string, default \"\")", "[vision_encoder] seed (int, default 0)",
                   "adapter            mlp_2layer ", "adapter            linear ", "adapter            avgpool ",
                   "adapter            attentional_pool ", "[adapter] pool_heads (int, default 16)",
                   "vision_encoder     fixture_channel_mean ", "libkforge_fixture_vision.so",
                   "[adapter] fixture_repeat_times (int, default 2)"});
  EXPECT_EQ(out.find("REFUSED"), std::string::npos) << out;
  ASSERT_EQ(run_command(kforge + " --json", &out), 0) << out;
  std::map<std::string, std::string> sections;
  for (const auto& file : nlohmann::json::parse(out)) {
    for (const auto& c : file["components"]) {
      sections[c["kind"].get<std::string>() + " " + c["name"].get<std::string>()] = c["section"].get<std::string>();
    }
  }
  EXPECT_EQ(sections["vision_encoder clip"], "vision_encoder");
  EXPECT_EQ(sections["adapter attentional_pool"], "adapter");
}

}  // namespace
}  // namespace kforge::test
