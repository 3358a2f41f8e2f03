// Training with [data] pack_sequences = true: where the EOS id comes from (the tokenizer, else prepare-data's
// metadata.json, which a mixture's sources must agree on), the refusals (a model without the document_mask
// capability, no EOS id anywhere, sources with different EOS ids), a short run whose micro-batches carry
// document ids and ignored cross-document labels and whose loss is finite, and a packed 3-source mixture
// that resumes exactly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "data/documents.h"
#include "data/npy_writer.h"
#include "feed/packing.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/launch_job.h"
#include "support/tiny_tokenizer.h"
#include "train/step.h"

namespace kforge::test {
namespace {

constexpr uint32_t kDocumentMaskCap = KFORGE_CAP_DOCUMENT_MASK;

std::string packing_refusal(const config::JobConfig& job, uint32_t capabilities) {
  try {
    feed::packing_eos_id(job, capabilities);
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(Packing, OffIsNoEosIdWhateverTheModel) {
  const TrainFixture fx;
  EXPECT_EQ(feed::packing_eos_id(fx.job(), 0), -1);
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
  EXPECT_EQ(feed::packing_eos_id(fx.job({"--data.pack_sequences=true", "--data.tokenizer_path=" + model.string()}),
                                  kDocumentMaskCap),
            2);  // SentencePiece's eos as prepare-data trains it
}

TEST(Packing, WithoutATokenizerTheEosIdComesFromPrepareDataMetadata) {
  const TrainFixture fx;
  std::ofstream(fx.data_dir.parent_path() / "metadata.json")
      << R"({"format": "kforge-tokens-v1", "vocab_size": 64, "eos_id": 5, "shards": {"train": [], "eval": []}})";
  EXPECT_EQ(feed::packing_eos_id(fx.job({"--data.pack_sequences=true"}), kDocumentMaskCap), 5);
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

// Three mixture sources "a", "b", "c" under the fixture's root in place of its dataset_path, each a
// cyclic token stream holding every id (so the EOS 2 once every 64 tokens) with a metadata.json
// saying which EOS id prepared it.
void make_packed_mixture(TrainFixture& fx, const std::vector<int>& eos_ids) {
  std::string sources;
  for (size_t s = 0; s < eos_ids.size(); ++s) {
    const std::string name(1, static_cast<char>('a' + s));
    const auto dir = fx.root / "mix" / name;
    std::filesystem::create_directories(dir);
    std::vector<int> tokens(1200 + 500 * s);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>((i * (3 + 2 * s) + s) % 64);
    data::write_npy_tokens(dir / "shard_0.npy", data::TokenDtype::uint16, tokens);
    std::ofstream(dir / "metadata.json") << fmt::format(
        R"({{"format": "kforge-tokens-v1", "vocab_size": 64, "eos_id": {}, "shards": {{"train": [], "eval": []}}}})",
        eos_ids[s]);
    sources += fmt::format("[[data.datasets]]\npath = \"{}\"\nweight = {}\n", dir.string(), s + 1);
  }
  const std::string path_line = fmt::format("dataset_path = \"{}\"\n", fx.data_dir.string());
  const size_t at = fx.toml.find(path_line);
  ASSERT_NE(at, std::string::npos);
  fx.toml.replace(at, path_line.size(), "");
  fx.toml += sources;
}

TEST(Packing, AMixtureTakesTheEosIdItsSourcesAgreeOnAndRefusesSourcesThatDisagreeNamingThem) {
  TrainFixture agree, disagree;
  make_packed_mixture(agree, {2, 2, 2});
  EXPECT_EQ(feed::packing_eos_id(agree.job({"--data.pack_sequences=true"}), kDocumentMaskCap), 2);
  make_packed_mixture(disagree, {2, 2, 7});
  const std::string refusal = packing_refusal(disagree.job({"--data.pack_sequences=true"}), kDocumentMaskCap);
  expect_has(refusal, {"[data] pack_sequences = true", "source 'a' (", "eos_id 2", "source 'c' (", "eos_id 7",
                       "set [data] tokenizer_path"});
  // The tokenizer decides when it is set.
  const auto tokenizer = tiny_tokenizer(disagree.root);
  EXPECT_EQ(
      feed::packing_eos_id(disagree.job({"--data.pack_sequences=true", "--data.tokenizer_path=" + tokenizer.string()}),
                            kDocumentMaskCap),
      2);
}

TEST(Packing, APackedThreeSourceMixtureTrainsOnDocumentsAndResumesExactly) {
  const std::vector<std::string> args = {"--data.pack_sequences=true", "--scheduler.name=constant",
                                         "--scheduler.warmup_steps=0", "--eval.enabled=false",
                                         "--checkpoint.interval=1000"};
  auto with = [&](const std::string& more) {
    std::vector<std::string> all = args;
    all.push_back(more);
    return all;
  };
  TrainFixture straight, split;
  make_packed_mixture(straight, {2, 2, 2});
  make_packed_mixture(split, {2, 2, 2});
  std::set<int64_t> packed_sources;
  const train::StepFn watching_step = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    for (const data::Batch& b : batches) {  // the fixture logs every step, so rows carry their sources
      const at::Tensor rows_with_documents = std::get<0>(b.doc_ids.max(1)).gt(0);
      for (int64_t r = 0; r < b.sources.size(0); ++r) {
        if (rows_with_documents[r].item<bool>()) packed_sources.insert(b.sources[r].item<int64_t>());
      }
    }
    return train::standard_step(trainer, batches);
  };
  straight.run(with("--train.max_steps=12"), {}, watching_step);
  EXPECT_EQ(packed_sources, (std::set<int64_t>{0, 1, 2})) << "each source's rows are split into documents";
  split.run(with("--train.max_steps=7"), {});
  const train::TrainingResult resumed = split.run(with("--train.max_steps=12"), {});
  ASSERT_EQ(resumed.resumed_from, 7);
  const auto la = metric(straight, "train/loss"), lb = metric(split, "train/loss");
  ASSERT_EQ(la.size(), 12u);
  for (int64_t step = 1; step <= 12; ++step) EXPECT_EQ(la.at(step), lb.at(step)) << "step " << step;
  const auto a = checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_12");
  const auto b = checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_12");
  EXPECT_EQ(a.train_state.at("mixture"), b.train_state.at("mixture"));
  for (const auto& [name, t] : a.model) EXPECT_TRUE(at::equal(t, b.model.at(name))) << name;
}

}  // namespace
}  // namespace kforge::test
