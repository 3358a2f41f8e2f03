// Training with [data] pack_sequences = true: where the EOS id comes from (the tokenizer, else prepare-data's
// metadata.json), the refusals (a model without the document_mask capability, no EOS id anywhere), and a short
// run whose micro-batches carry document ids and ignored cross-document labels and whose loss is finite.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/train/train_fixture.h"
#include "data/documents.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/tiny_tokenizer.h"
#include "train/packing.h"
#include "train/step.h"

namespace kforge::test {
namespace {

constexpr uint32_t kDocumentMaskCap = KFORGE_CAP_DOCUMENT_MASK;

std::string packing_refusal(const config::JobConfig& job, uint32_t capabilities) {
  try {
    train::packing_eos_id(job, capabilities);
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Packing, OffIsNoEosIdWhateverTheModel) {
  const TrainFixture fx;
  EXPECT_EQ(train::packing_eos_id(fx.job(), 0), -1);
}

TEST(Packing, AModelWithoutTheCapabilityIsRefusedNamingTheKeyAndTheModel) {
  const TrainFixture fx;
  expect_has(packing_refusal(fx.job({"--data.pack_sequences=true"}), KFORGE_CAP_LLAMA_LAYOUT),
             {"[data] pack_sequences = true", "model_type = \"transformer\"", "document_mask capability"});
}

TEST(Packing, NoTokenizerAndNoMetadataIsRefusedNamingTokenizerPath) {
  const TrainFixture fx;
  expect_has(packing_refusal(fx.job({"--data.pack_sequences=true"}), kDocumentMaskCap),
             {"[data] pack_sequences = true", "[data] tokenizer_path", "metadata.json"});
}

TEST(Packing, TheEosIdComesFromTheTokenizer) {
  const TrainFixture fx;
  const auto model = tiny_tokenizer(fx.root);
  EXPECT_EQ(train::packing_eos_id(fx.job({"--data.pack_sequences=true", "--data.tokenizer_path=" + model.string()}),
                                  kDocumentMaskCap),
            2);  // SentencePiece's eos as prepare-data trains it
}

TEST(Packing, WithoutATokenizerTheEosIdComesFromPrepareDataMetadata) {
  const TrainFixture fx;
  std::ofstream(fx.data_dir.parent_path() / "metadata.json")
      << R"({"format": "kforge-tokens-v1", "vocab_size": 64, "eos_id": 5, "shards": {"train": [], "eval": []}})";
  EXPECT_EQ(train::packing_eos_id(fx.job({"--data.pack_sequences=true"}), kDocumentMaskCap), 5);
  std::ofstream(fx.data_dir / "metadata.json") << R"({"format": "kforge-tokens-v1", "eos_id": -1})";
  expect_has(packing_refusal(fx.job({"--data.pack_sequences=true"}), kDocumentMaskCap),
             {"metadata.json has no eos_id >= 0 (got -1)", "[data] tokenizer_path"});
}

TEST(Packing, APackedRunTrainsOnDocuments) {
  const TrainFixture fx;
  const auto tokenizer = tiny_tokenizer(fx.root);
  int64_t packed_batches = 0, ignored_labels = 0;
  const train::StepFn counting_step = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    for (const data::Batch& b : batches) {
      if (b.doc_ids.defined() && b.doc_ids.max().item<int64_t>() > 0) ++packed_batches;
      ignored_labels += b.labels.eq(data::kIgnoredLabel).sum().item<int64_t>();
    }
    return train::standard_step(trainer, batches);
  };
  auto hook = std::make_shared<RecordingHook>();
  const train::TrainingResult result =
      fx.run({"--data.pack_sequences=true", "--data.tokenizer_path=" + tokenizer.string(), "--train.max_steps=6"},
             {hook}, counting_step);
  EXPECT_EQ(result.step, 6);
  ASSERT_EQ(hook->losses.size(), 6u);
  for (const auto& [step, loss] : hook->losses) EXPECT_TRUE(std::isfinite(loss)) << "step " << step;
  // The corpus holds token 2 (the EOS) every 64 tokens: windows of 17 meet one about every fourth window.
  EXPECT_GT(packed_batches, 0);
  EXPECT_GT(ignored_labels, 0);
}

}  // namespace
}  // namespace kforge::test
