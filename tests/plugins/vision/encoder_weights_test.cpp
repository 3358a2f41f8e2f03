// The host loading [vision_encoder] path (checkpoint::load_encoder_weights): a siglip2 encoder built through the
// registry from tests/oracles/vit_towers.py's random-weight Hugging Face directory gives the reference tower's output,
// from model.safetensors and from shards named by model.safetensors.index.json, reports the file's other tensors, and
// a hub id, a directory without safetensors weights and a broken index are refused naming the key.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "checkpoint/encoder_weights.h"
#include "checkpoint/safetensors.h"
#include "plugins/vision/vision_oracle.h"
#include "support/component_host.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<sdk::VisionEncoder> siglip2(const fs::path& dir) {
  return ComponentHost("[vision_encoder]\ntype = \"siglip2\"\npath = \"" + dir.string() + "\"\n")
      .components.vision_encoder();
}

// The reference tower's output from the loaded encoder, and what the load reported.
checkpoint::EncoderWeights load_and_compare(const fs::path& dir, const fs::path& reference) {
  const auto encoder = siglip2(dir);
  const checkpoint::EncoderWeights report = checkpoint::load_encoder_weights(*encoder, dir);
  const auto expected = read_tensors(reference / "expected.safetensors");
  expect_close(encoder->forward(expected.at("pixel_values")).detach(), expected.at("output"), "output");
  EXPECT_EQ(report.loaded, encoder->named_parameters().size());
  EXPECT_EQ(report.unused, (std::vector<std::string>{"logit_scale", "text_model.embeddings.token_embedding.weight",
                                                     "vision_model.head.attention.in_proj_weight",
                                                     "vision_model.head.probe"}));
  return report;
}

TEST(EncoderWeights, LoadsTheTowerFromModelSafetensorsAndReportsTheRest) {
  const fs::path towers = vision_oracle_dir("vit_towers.py");
  ASSERT_FALSE(towers.empty());
  const auto report = load_and_compare(towers / "siglip2", towers / "siglip2");
  EXPECT_EQ(report.files, (std::vector<fs::path>{towers / "siglip2" / "model.safetensors"}));
}

TEST(EncoderWeights, LoadsShardsNamedByTheIndex) {
  const fs::path towers = vision_oracle_dir("vit_towers.py");
  ASSERT_FALSE(towers.empty());
  const fs::path dir = temp_dir("encoder_shards");
  fs::copy_file(towers / "siglip2" / "config.json", dir / "config.json");
  std::map<std::string, at::Tensor> halves[2];
  nlohmann::json map = nlohmann::json::object();
  size_t i = 0;
  for (const auto& [name, tensor] : read_tensors(towers / "siglip2" / "model.safetensors")) {
    const int shard = static_cast<int>(i++ % 2);
    halves[shard][name] = tensor;
    map[name] = "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
  }
  for (int shard = 0; shard < 2; ++shard) {
    checkpoint::write_safetensors(dir / ("model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors"),
                                  halves[shard]);
  }
  std::ofstream(dir / "model.safetensors.index.json") << nlohmann::json{{"weight_map", map}}.dump();
  EXPECT_EQ(load_and_compare(dir, towers / "siglip2").files.size(), 2u);
  fs::remove_all(dir);
}

TEST(EncoderWeights, RefusesAHubIdAMissingWeightFileAndABrokenIndex) {
  const fs::path towers = vision_oracle_dir("vit_towers.py");
  ASSERT_FALSE(towers.empty());
  const auto encoder = siglip2(towers / "siglip2");
  const auto expect_refused = [&](const fs::path& dir, const std::vector<std::string>& needles) {
    try {
      checkpoint::load_encoder_weights(*encoder, dir);
      ADD_FAILURE() << "expected a ConfigError for " << dir;
    } catch (const sdk::ConfigError& e) {
      expect_has(e.what(), needles);
    }
  };
  expect_refused("google/siglip2-base-patch16-224",
                 {"[vision_encoder] path = \"google/siglip2-base-patch16-224\": not a local directory",
                  "huggingface-cli download google/siglip2-base-patch16-224 --local-dir DIR"});
  const fs::path empty = temp_dir("encoder_no_weights");
  expect_refused(empty, {"no model.safetensors or model.safetensors.index.json", "safetensors files only"});
  std::ofstream(empty / "model.safetensors.index.json") << R"({"weight_map": ["model.safetensors"]})";
  expect_refused(empty, {"model.safetensors.index.json has no \"weight_map\" object"});
  fs::remove_all(empty);
}

}  // namespace
}  // namespace kforge::test
