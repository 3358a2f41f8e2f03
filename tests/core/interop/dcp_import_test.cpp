// `kforge convert --from dcp`: KempnerForge-layout checkpoints written by python3-torch 1.13 (tests/oracles/
// kempnerforge_checkpoint.py) from a kforge run's tensors carry every tensor bit for bit, and training continues
// exactly as the kforge run would have.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "checkpoint/checkpoint_manager.h"
#include "core/interop/interop_test_util.h"
#include "interop/pickle_reader.h"
#include "kforge/sdk/error.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test::interop {
namespace {
namespace fs = std::filesystem;

const std::vector<std::string> kRunFlags = {"--eval.enabled=false"};

// A tiny dense run of 10 steps (AdamW, cosine), once per test process; its config as a file for --config.
const TrainFixture& source_run() {
  static TrainFixture* fx = [] {
    auto* f = new TrainFixture();
    std::vector<std::string> overrides = kRunFlags;
    overrides.push_back("--train.max_steps=10");
    f->run(overrides, {});
    std::ofstream(f->root / "job.toml") << f->toml;
    return f;
  }();
  return *fx;
}

fs::path source_step() { return source_run().checkpoint_dir / "step_10"; }

// The oracle's KempnerForge checkpoint of source_step(), in `layout` (torch113 or torch2-sharded).
fs::path oracle_written(const std::string& layout, const std::string& label, const std::string& extra = "") {
  const fs::path step = temp_dir(label) / "step_10";
  std::vector<std::string> args = {source_step().string(), step.string(), layout};
  if (!extra.empty()) args.push_back(extra);
  std::string output;
  EXPECT_EQ(run_oracle("kempnerforge_checkpoint.py", args, &output), 0) << output;
  return step;
}

std::string convert(const fs::path& dcp, const fs::path& out, int* rc, const std::string& extra = "") {
  return kforge_cli(fmt::format("convert --from dcp {} {} --config {}{}", dcp.string(), out.string(),
                                (source_run().root / "job.toml").string(), extra),
                    rc);
}

// `dcp` converted into a new directory's checkpoint (the command succeeds); returns that directory.
fs::path converted(const fs::path& dcp, const std::string& label, std::string* text = nullptr) {
  const fs::path out = temp_dir(label) / "ckpt";
  int rc = 0;
  const std::string output = convert(dcp, out, &rc);
  EXPECT_EQ(rc, 0) << output;
  if (text) *text = output;
  return out;
}

void expect_same_tensors(const checkpoint::TensorMap& ours, const checkpoint::TensorMap& source, const char* what) {
  EXPECT_EQ(ours.size(), source.size()) << what;
  for (const auto& [name, t] : source) {
    const auto it = ours.find(name);
    ASSERT_NE(it, ours.end()) << what << " " << name;
    EXPECT_EQ(it->second.scalar_type(), t.scalar_type()) << name;
    EXPECT_TRUE(it->second.sizes().equals(t.sizes()) && at::equal(it->second, t)) << what << " " << name;
  }
}

// Everything training resumes from equals the source kforge checkpoint's: the oracle wrote those very values.
void expect_carried(const fs::path& converted) {
  const checkpoint::Snapshot ours = checkpoint::CheckpointManager::load(converted);
  const checkpoint::Snapshot source = checkpoint::CheckpointManager::load(source_step());
  expect_same_tensors(ours.model, source.model, "model");
  expect_same_tensors(ours.optimizer, source.optimizer, "optimizer");
  EXPECT_TRUE(at::equal(ours.rng, source.rng));
  EXPECT_EQ(ours.step, 10);
  EXPECT_EQ(ours.tokens_seen, source.tokens_seen);
  EXPECT_EQ(ours.train_state.at("data").at(0).at("epoch"), source.train_state.at("data").at(0).at("epoch"));
  EXPECT_EQ(ours.train_state.at("data").at(0).at("batches_yielded"),
            source.train_state.at("data").at(0).at("batches_yielded"));
  EXPECT_FALSE(ours.train_state.value("weights_only", false));
}

// Losses of steps 11-13 resumed from the checkpoint directory `dir`.
std::map<int64_t, double> resumed_losses(const fs::path& dir) {
  auto hook = std::make_shared<RecordingHook>();
  std::vector<std::string> overrides = kRunFlags;
  overrides.push_back("--train.max_steps=13");
  overrides.push_back("--checkpoint.dir=" + dir.string());
  source_run().run(overrides, {hook});
  return hook->losses;
}

TEST(DcpImport, Torch113WriterCarriesEveryTensorAndTrainingContinuesBitExactly) {
  ASSERT_TRUE(oracle_available());
  std::string text;
  const fs::path out = converted(oracle_written("torch113", "dcp_torch113"), "dcp_torch113_out", &text);
  EXPECT_NE(text.find("optimizer: AdamW exp_avg, exp_avg_sq and step of"), std::string::npos) << text;
  EXPECT_NE(text.find("scheduler: step 10 of 'cosine' (LambdaLR last_epoch 10)"), std::string::npos) << text;
  EXPECT_NE(text.find("rng.numpy: kforge draws from no NumPy generator"), std::string::npos) << text;
  EXPECT_NE(text.find("rng.python: kforge draws from no Python generator"), std::string::npos) << text;
  expect_carried(out / "step_10");

  // The kforge run resumed from its own step_10 (a copy) is the reference.
  const fs::path own = temp_dir("dcp_own_resume") / "ckpt";
  fs::create_directories(own);
  fs::copy(source_step(), own / "step_10", fs::copy_options::recursive);
  const auto reference = resumed_losses(own);
  ASSERT_EQ(reference.size(), 3u);
  EXPECT_EQ(resumed_losses(out), reference);
}

TEST(DcpImport, ShardedTorch2LayoutThroughLatestGivesTheSameCheckpoint) {
  ASSERT_TRUE(oracle_available());
  const fs::path dcp = oracle_written("torch2-sharded", "dcp_sharded");
  fs::create_directory_symlink("step_10", dcp.parent_path() / "latest");  // a KempnerForge checkpoint.dir
  expect_carried(converted(dcp.parent_path(), "dcp_sharded_out") / "step_10");
}

TEST(DcpImport, PipelineStagesAreJoined) {
  ASSERT_TRUE(oracle_available());
  expect_carried(converted(oracle_written("torch113", "dcp_pp2", "--pp2"), "dcp_pp2_out") / "step_10");
}

TEST(DcpImport, IndexKeyedOptimizerStateIsNotCarriedAndSaysWhy) {
  ASSERT_TRUE(oracle_available());
  std::string text;
  const fs::path out = converted(oracle_written("torch113", "dcp_by_index", "--by-index"), "dcp_by_index_out", &text);
  EXPECT_NE(text.find("keyed by parameter index"), std::string::npos) << text;
  const checkpoint::Snapshot ours = checkpoint::CheckpointManager::load(out / "step_10");
  expect_same_tensors(ours.model, checkpoint::CheckpointManager::load(source_step()).model, "model");
  EXPECT_TRUE(ours.optimizer.empty());
  EXPECT_TRUE(ours.train_state.value("weights_only", false));
}

TEST(DcpImport, ConfigOfAnotherShapeIsRefusedNamingTheTensor) {
  ASSERT_TRUE(oracle_available());
  const fs::path dcp = oracle_written("torch113", "dcp_other_shape");
  int rc = 0;
  const std::string text = convert(dcp, temp_dir("dcp_other_shape_out") / "ckpt", &rc, " --model.dim=48");
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("'model.token_embedding.embedding.weight' has shape [64, 32]"), std::string::npos) << text;
}

TEST(DcpImport, ConfigIsRequiredAndOnlyForDcp) {
  int rc = 0;
  std::string text = kforge_cli("convert --from dcp a b", &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("--from dcp needs --config TOML"), std::string::npos) << text;
  text = kforge_cli("convert --to hf a b --config c.toml", &rc);
  EXPECT_EQ(rc, 2) << text;
  EXPECT_NE(text.find("--config applies to --from dcp only"), std::string::npos) << text;
}

TEST(PickleReader, RefusesAGlobalOutsideTheFormatNamingIt) {
  // Protocol 2: GLOBAL os.system, a string argument, REDUCE, STOP (what a malicious pickle does).
  using namespace std::string_literals;
  const std::string bytes = "\x80\x02"s + "cos\nsystem\n"s + "X\x02\0\0\0id"s + "\x85R."s;
  try {
    kforge::interop::read_pickle(bytes, {"torch._utils._rebuild_tensor_v2"}, "evil.pkl");
    FAIL() << "a pickle naming os.system was read";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("evil.pkl: the pickle names os.system, which this reader does not accept"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace kforge::test::interop
