// The dry run refuses what the run refuses: for each refusal case, `kforge run --dry-run` and
// `kforge run` exit 2 with the same message and the run trains nothing; keys that have no effect
// let both go on with one warning per key.
#include <gtest/gtest.h>

#include <fstream>

#include "support/expect_text.h"
#include "support/test_host.h"
#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

struct Outcome {
  int status;
  std::string output;  ///< stdout and stderr together
};

struct Case {
  const char* name;
  std::string toml;  ///< appended to the fixture's config
  std::string overrides;
  std::string expect;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RunAndDryRun : public ::testing::TestWithParam<Case> {
 protected:
  // `kforge run` on the fixture's config plus the case's lines, with `args`.
  Outcome kforge(const std::string& args) {
    const auto cfg = fixture_.root / "cfg.toml";
    std::ofstream(cfg) << fixture_.toml << GetParam().toml;
    Outcome o;
    o.status = run_command("cd '" + fixture_.root.string() + "' && '" + KFORGE_BIN + "' run '" + cfg.string() + "' " +
                               GetParam().overrides + " " + args,
                           &o.output);
    return o;
  }
  TrainFixture fixture_;
};

// The message itself: the lines after "kforge run: " (dry run) or "error " (run's log line).
std::string message(const std::string& output, const std::string& expect) {
  const size_t at = output.find(expect);
  return at == std::string::npos ? "" : output.substr(at, output.find('\n', at) - at);
}

TEST_P(RunAndDryRun, BothRefuseWithExit2AndTheSameMessageAndTheRunTrainsNothing) {
  const Outcome dry = kforge("--dry-run");
  const Outcome run = kforge("");
  EXPECT_EQ(dry.status, 2) << dry.output;
  EXPECT_EQ(run.status, 2) << run.output;
  const std::string dry_message = message(dry.output, GetParam().expect);
  EXPECT_FALSE(dry_message.empty()) << "dry run output lacks '" << GetParam().expect << "':\n" << dry.output;
  EXPECT_EQ(dry_message, message(run.output, GetParam().expect)) << "run output:\n" << run.output;
  EXPECT_FALSE(std::filesystem::exists(fixture_.checkpoint_dir / "latest")) << run.output;
}

const Case kCases[] = {
    {"vlm_without_dataset_path", "[vision_encoder]\ntype = \"random\"\n[vlm]\narch = \"joint_decoder\"\n",
     "--data.dataset_path=''",
     "[data] dataset_path is not set: a vision-language run trains on a directory of WebDataset .tar shards"},
    {"mixture_unknown_phase_source",
     "[[data.datasets]]\npath = \"a\"\n[[data.phases]]\nstart_step = 10\ndataset_weights = { wiki = 0.5 }\n",
     "--data.dataset_path=''",
     "[data.phases[0]] dataset_weights = { wiki = 0.5 }: 'wiki' is not the name of a [[data.datasets]] source "
     "(sources: 'a')"},
    {"mixture_and_dataset_path", "[[data.datasets]]\npath = \"a\"\n", "", "[data] dataset_path = \""},
    {"pack_sequences_without_eos", "", "--data.pack_sequences=true",
     "[data] pack_sequences = true needs the EOS id that separates documents"},
    {"hf_hub_id", "", "--data.dataset_path='' --data.hf_dataset_name=allenai/c4 --data.tokenizer_path=tok.model",
     "[data] hf_dataset_name = \"allenai/c4\": 'allenai/c4' is not a local path, and the local Hugging Face caches "
     "do not hold split 'train' of it: looked for "},
    {"tensor_parallel_vision_language_arch", "[vision_encoder]\ntype = \"random\"\n[vlm]\narch = \"mot\"\n",
     "--distributed.tp=2",
     "[distributed] tp = 2 in a vision-language run: [vlm] arch = \"mot\" does not declare the tensor_parallel "
     "capability"},
    {"tensor_parallel_whole_matrix_optimizer", "", "--distributed.tp=2 --optimizer.name=muon",
     "[distributed] tp = 2: optimizer 'muon' updates whole weight matrices"},
    {"pipeline_too_few_micro_batches", "", "--distributed.pp=2",
     "[train] grad_accum_steps = 1 (the micro-batches of a step) with [distributed] pp = 2: pp_schedule \"1f1b\" needs "
     "at least pp micro-batches"},
    {"expert_parallel_vision_language_arch", "[vision_encoder]\ntype = \"random\"\n[vlm]\narch = \"mot\"\n",
     "--distributed.ep=2 --model.num_experts=4",
     "[distributed] ep = 2 in a vision-language run: [vlm] arch = \"mot\" does not declare the expert_parallel "
     "capability"},
    {"cuda_in_a_cpu_build", "", "--train.device=cuda",
     "[train] device = \"cuda\": this kforge is a CPU build (LibTorch without CUDA)"},
    {"fp8_vision_language", "[vision_encoder]\ntype = \"random\"\n[vlm]\narch = \"joint_decoder\"\n",
     "--train.mixed_precision=fp8",
     "[train] mixed_precision = \"fp8\" in a vision-language run ([vlm]): kforge computes the linear layers of text "
     "models in float8 only"},
    {"missing_dataset_path", "", "--data.dataset_path=''", "[data] dataset_path is not set"},
    {"missing_dataset_directory", "", "--data.dataset_path=/nonexistent/kforge-data",
     "data directory '/nonexistent/kforge-data' does not exist"},
    {"world_rules", "", "--train.seq_len=64", "[train] seq_len = 64: must be <= [model] max_seq_len (32)"},
    // Checked by the optimizer plugin, which preflight builds over a stand-in matrix.
    {"optimizer_betas", "", "--optimizer.betas=[0.9,1.5]", "[optimizer] betas = "},
    {"muon_momentum", "", "--optimizer.name=muon --optimizer.muon_momentum=1.0", "[optimizer] muon_momentum = 1"},
};
INSTANTIATE_TEST_SUITE_P(Refusals, RunAndDryRun, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

class NoEffectKeys : public RunAndDryRun {};

TEST_P(NoEffectKeys, RunAndDryRunGoOnWithOneWarningPerKey) {
  const Outcome dry = kforge("--dry-run");
  const Outcome run = kforge("--train.max_steps=2");
  ASSERT_EQ(dry.status, 0) << dry.output;
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_TRUE(std::filesystem::exists(fixture_.checkpoint_dir / "latest")) << run.output;
  for (const char* key : {"[train] compile_model = true: has no effect in this kforge",
                          "[data] num_workers = 8: has no effect in a text run",
                          "[metrics] enable_wandb = true: has no effect in this kforge",
                          "[time_embedding] num_bands = 8: has no effect with type = \"none\"",
                          "[distributed] pp_layer_split = [1, 1]: has no effect with pp = 1"}) {
    for (const Outcome* o : {&dry, &run}) {
      const size_t first = o->output.find(key);
      EXPECT_NE(first, std::string::npos) << key << " in:\n" << o->output;
      EXPECT_EQ(o->output.find(key, first + 1), std::string::npos) << key << " twice in:\n" << o->output;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Warnings, NoEffectKeys,
                         ::testing::Values(Case{"speed_and_service_keys", "",
                                                "--train.compile_model=true --data.num_workers=8 "
                                                "--metrics.enable_wandb=true --time_embedding.num_bands=8 "
                                                "'--distributed.pp_layer_split=[1,1]'",
                                                ""}),
                         [](const auto& info) { return std::string(info.param.name); });

// A checkpoint whose shapes do not match the model is a config error (exit 2), not a failure.
TEST(Resume, ACheckpointOfAnotherModelShapeExits2NamingTheTensor) {
  TrainFixture fixture;
  const auto cfg = fixture.root / "cfg.toml";
  std::ofstream(cfg) << fixture.toml;
  const std::string run = "cd '" + fixture.root.string() + "' && '" + KFORGE_BIN + "' run '" + cfg.string() + "' ";
  std::string output;
  ASSERT_EQ(run_command(run + "--train.max_steps=2", &output), 0) << output;
  EXPECT_EQ(run_command(run + "--train.max_steps=4 --model.dim=64", &output), 2) << output;
  expect_has(output, {"checkpoint step 2: '", "' has shape [", "the [model] config changed since it was written"});
}

}  // namespace
}  // namespace kforge::test
