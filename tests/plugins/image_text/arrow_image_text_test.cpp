// A Hugging Face image-text dataset in Arrow files, as KempnerForge's VLM presets name it ([data] hf_dataset_name with
// hf_dataset_image_field, hf_dataset_text_field, hf_dataset_prompt_field), against a COCO-style save_to_disk export
// written by an independent writer (tests/oracles/write_arrow_coco.py, from the Arrow and PNG specifications): each
// row's image bytes (embedded, or read from the path a row has instead), caption and prompt exactly the oracle's; the
// samples ImageTextData serves from it identical to those of a JSONL manifest of the same PNG files; and the columns
// refused by name.
#include "image_text_io/arrow_image_text.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "image_fixtures.h"
#include "image_text/image_text_data.h"
#include "image_text_io/image_transform.h"
#include "image_text_io/sample_error.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;
using image_text::ArrowImageTextColumns;
using image_text::ArrowImageTextSource;

struct Coco {
  fs::path dir;
  nlohmann::json expected;  // {"rows", "images" (hex), "captions", "prompts"}
  fs::path arrow() const { return dir / "export" / "data-00000-of-00001.arrow"; }
};

Coco oracle_coco() {
  Coco c{temp_dir("arrow_coco"), {}};
  std::string out;
  EXPECT_EQ(run_oracle("write_arrow_coco.py", {c.dir.string()}, &out), 0) << out;
  c.expected = nlohmann::json::parse(out);
  return c;
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

TEST(ArrowImageText, EachRowGivesTheOraclesImageBytesCaptionAndPrompt) {
  ASSERT_TRUE(oracle_available());
  const Coco coco = oracle_coco();
  const ArrowImageTextSource source({coco.arrow()}, ArrowImageTextColumns{"image", "caption", "question"});
  const int64_t rows = coco.expected["rows"].get<int64_t>();
  ASSERT_EQ(source.size(), rows);
  for (int64_t i = 0; i < rows; ++i) {
    const image_text::RawSample s = source.load(i);
    EXPECT_EQ(s.image, unhex(coco.expected["images"][i].get<std::string>())) << "row " << i;
    EXPECT_EQ(s.caption, coco.expected["captions"][i].get<std::string>()) << "row " << i;
    const nlohmann::json& prompt = coco.expected["prompts"][i];
    EXPECT_EQ(s.prompt, prompt.is_null() ? "" : prompt.get<std::string>()) << "row " << i;
    EXPECT_EQ(s.origin, coco.arrow().string());
  }
  // Without a prompt column, no row has a prompt.
  const ArrowImageTextSource captions_only({coco.arrow()}, ArrowImageTextColumns{"image", "caption", ""});
  EXPECT_EQ(captions_only.load(0).prompt, "");
  // An image over the cap is one sample skipped, embedded or read from its path (row 3).
  const ArrowImageTextSource capped({coco.arrow()}, ArrowImageTextColumns{"image", "caption", ""}, 40);
  EXPECT_THROW(capped.load(0), image_text::SampleError);
  EXPECT_THROW(capped.load(3), image_text::SampleError);
}

sdk::ImageTextSpec spec_of(const std::string& path, const std::optional<sdk::HfImageText>& hf) {
  sdk::ImageTextSpec spec;
  spec.path = path;
  spec.hf = hf;
  spec.image_size = 6;
  const image_text::Normalization clip = image_text::clip_normalization();
  spec.pixels.mean = clip.mean;
  spec.pixels.std = clip.std;
  spec.max_text_len = 24;
  spec.pad_id = 0;
  spec.eos_id = 1;
  spec.tokenize = byte_tokenizer();
  spec.num_workers = 2;
  spec.queue_depth = 3;
  return spec;
}

std::vector<sdk::ImageTextSample> all_samples(const image_text::ImageTextData& data) {
  std::vector<sdk::ImageTextSample> out;
  auto stream = data.stream([](int64_t p) { return p; }, 0, data.size());
  while (auto s = stream->next()) out.push_back(std::move(*s));
  return out;
}

TEST(ArrowImageText, TheDatasetServesTheSamplesOfAManifestOfTheSameImages) {
  ASSERT_TRUE(oracle_available());
  const Coco coco = oracle_coco();
  const sdk::HfImageText hf{{coco.arrow().string()}, "image", "caption", "question", "t.toml:4: hf_dataset_name"};
  const image_text::ImageTextData arrow(spec_of("", hf));
  const image_text::ImageTextData manifest(spec_of((coco.dir / "manifest.jsonl").string(), std::nullopt));
  EXPECT_EQ(arrow.describe(), "Hugging Face dataset: 1 Arrow file in " + (coco.dir / "export").string() +
                                  ", 6 samples");
  const std::vector<sdk::ImageTextSample> a = all_samples(arrow), m = all_samples(manifest);
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(m.size(), 6u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].position, m[i].position);
    EXPECT_TRUE(at::equal(a[i].pixel_values, m[i].pixel_values)) << "sample " << i;
    EXPECT_TRUE(at::equal(a[i].input_ids, m[i].input_ids)) << "sample " << i;
    EXPECT_TRUE(at::equal(a[i].labels, m[i].labels)) << "sample " << i;
  }
}

std::string refusal(const fs::path& arrow, const std::string& image, const std::string& text,
                    const std::string& prompt) {
  try {
    image_text::ImageTextData data(spec_of("", sdk::HfImageText{{arrow.string()}, image, text, prompt, "t.toml:4: X"}));
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ArrowImageText, AMissingColumnOrOneOfAnotherKindIsRefusedNamingTheKeys) {
  ASSERT_TRUE(oracle_available());
  const Coco coco = oracle_coco();
  expect_has(refusal(coco.arrow(), "img", "caption", ""),
             {"t.toml:4: X: Arrow file '" + coco.arrow().string() + "', byte ",
              "no column 'img.bytes' (its columns: 'image', 'caption', 'question')",
              "[data] hf_dataset_image_field = \"img\", an Image column: a struct of bytes and path"});
  expect_has(refusal(coco.arrow(), "caption", "caption", ""), {"no column 'caption.bytes'"});
  expect_has(refusal(coco.arrow(), "image", "text", ""), {"no column 'text'", "hf_dataset_text_field = \"text\""});
  expect_has(refusal(coco.arrow(), "image", "caption", "prompt"),
             {"no column 'prompt'", "hf_dataset_prompt_field = \"prompt\""});
}

}  // namespace
}  // namespace kforge::test
