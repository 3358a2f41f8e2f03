// End to end: train a tiny model, then `kforge generate` (also --interactive, and its defaults) and `kforge eval` on
// its checkpoint via the binary.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/command_tables.h"
#include "core/train/train_fixture.h"
#include "generate/checkpoint_model.h"
#include "plugins/components.h"
#include "support/read_file.h"
#include "support/test_host.h"
#include "support/tiny_tokenizer.h"
#include "train/evaluator.h"

namespace kforge::test {
namespace {

std::string kforge(const std::string& args, int* rc) {
  std::string output;
  *rc = run_command(fmt::format("{} {} 2>&1", KFORGE_BIN, args), &output);
  return output;
}

class GenerateEvalCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture_ = new TrainFixture();
    tokenizer_ = new std::filesystem::path(tiny_tokenizer(fixture_->root));
    fixture_->run({"--data.tokenizer_path=" + tokenizer_->string(), "--train.max_steps=10"}, {});
  }
  static void TearDownTestSuite() {
    delete fixture_;
    delete tokenizer_;
  }
  static std::string step_dir() { return (fixture_->checkpoint_dir / "step_10").string(); }
  static TrainFixture* fixture_;
  static std::filesystem::path* tokenizer_;
};
TrainFixture* GenerateEvalCli::fixture_ = nullptr;
std::filesystem::path* GenerateEvalCli::tokenizer_ = nullptr;

TEST_F(GenerateEvalCli, GenerateGreedyPrintsPromptAndContinuationDeterministically) {
  int rc = 0;
  const std::string args = fmt::format("generate --checkpoint {} --prompt 'abc de' --prompt 'x' --max-new-tokens 8 "
                                       "--temperature 0",
                                       step_dir());
  const std::string out = kforge(args, &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("=== prompt 0 ===\nabc de"), std::string::npos) << out;
  EXPECT_NE(out.find("=== prompt 1 ===\nx"), std::string::npos) << out;
  EXPECT_EQ(kforge(args, &rc), out);
  // The checkpoint.dir itself resolves to its newest checkpoint (the same one here).
  const std::string from_dir = kforge(fmt::format("generate --checkpoint {} --prompt 'abc de' --prompt 'x' "
                                                  "--max-new-tokens 8 --temperature 0",
                                                  fixture_->checkpoint_dir.string()),
                                      &rc);
  EXPECT_EQ(from_dir, out);
}

TEST_F(GenerateEvalCli, GenerateRefusesBadArgumentsWithExit2) {
  int rc = 0;
  std::string out = kforge("generate --prompt hi", &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("--checkpoint"), std::string::npos) << out;
  out = kforge(fmt::format("generate --checkpoint {} --prompt hi --max-new-tokens 100", step_dir()), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("max_seq_len"), std::string::npos) << out;
  out = kforge(fmt::format("generate --checkpoint {} --prompts-file /nonexistent/p.txt", step_dir()), &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("/nonexistent/p.txt"), std::string::npos) << out;
  out = kforge("generate --checkpoint /nonexistent/ckpt --prompt hi", &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("/nonexistent/ckpt"), std::string::npos) << out;
}

// --interactive continues each line of stdin as `--prompt LINE` does, in one process: blank lines are skipped, and
// a prompt too long for the model is reported while the lines after it still get their continuations.
TEST_F(GenerateEvalCli, InteractiveContinuesEachLineOfStdinAsItsOwnPrompt) {
  int rc = 0;
  const std::string options = " --max-new-tokens 8 --temperature 0";
  std::string expected;
  for (const char* prompt : {"abc de", "x"}) {
    std::string out;
    ASSERT_EQ(run_command(fmt::format("{{ {} generate --checkpoint {} --prompt '{}'{} 2>/dev/null; }}", KFORGE_BIN,
                                      step_dir(), prompt, options),
                          &out),
              0)
        << out;  // stdout alone
    expected += out;
  }
  const std::string too_long(600, 'a');
  std::string out;
  const std::filesystem::path stderr_file = fixture_->root / "interactive.err";
  rc = run_command(fmt::format("{{ printf 'abc de\\n\\n   \\n{}\\nx\\n' | {} generate --checkpoint {} --interactive{} "
                               "2>'{}'; }}",
                               too_long, KFORGE_BIN, step_dir(), options, stderr_file.string()),
                   &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, expected);
  const std::string said = read_file(stderr_file);
  EXPECT_NE(said.find("max_seq_len"), std::string::npos) << said;
  EXPECT_EQ(said.find(">>> "), std::string::npos) << "no prompt marker when stdin is not a terminal\n" << said;
  const std::string refused =
      kforge(fmt::format("generate --checkpoint {} --interactive --prompt hi", step_dir()), &rc);
  EXPECT_NE(refused.find("--interactive reads the prompts from stdin: drop --prompt and --prompts-file"),
            std::string::npos)
      << refused;
  EXPECT_EQ(rc, 2);
}

// KempnerForge's scripts/generate.py defaults: 128 new tokens, temperature 1.0, top-k 0 and top-p 1.0 (both off).
TEST(GenerateOptions, DefaultsAreKempnerForges) {
  cxxopts::Options options = cli::generate_options();
  const char* argv[] = {"generate"};
  const cxxopts::ParseResult args = options.parse(1, argv);
  EXPECT_EQ(args["max-new-tokens"].as<int64_t>(), 128);
  EXPECT_EQ(args["temperature"].as<double>(), 1.0);
  EXPECT_EQ(args["top-k"].as<int64_t>(), 0);
  EXPECT_EQ(args["top-p"].as<double>(), 1.0);
}

TEST_F(GenerateEvalCli, EvalMatchesTrainEvaluateOnTheSameWeights) {
  int rc = 0;
  const std::string out = kforge(fmt::format("eval --checkpoint {}", step_dir()), &rc);
  ASSERT_EQ(rc, 0) << out;
  const auto json = nlohmann::json::parse(out.substr(out.rfind('{')));
  EXPECT_EQ(json["step"], 10);
  EXPECT_GT(json["tokens_seen"].get<int64_t>(), 0);

  const auto ckpt = generate::load_checkpoint_model(step_dir(), fixture_->plugins->registry);
  const plugins::Components components(fixture_->plugins->registry, ckpt.job);
  auto loss = components.loss();
  auto data = components.dataset(ckpt.job.eval.dataset_path, ckpt.job.eval.file_pattern,
                                 ckpt.job.view("model").get_int("vocab_size"));
  const auto metrics = train::evaluate(*ckpt.model, *loss, *data, ckpt.job.train.batch_size, ckpt.job.eval.steps,
                                       ckpt.job.view("model").get_int("vocab_size"));
  EXPECT_NEAR(json["eval/loss"].get<double>(), metrics[0].second, 1e-6);
  EXPECT_NEAR(json["eval/perplexity"].get<double>(), metrics[1].second, 1e-4);
  EXPECT_NE(out.find("eval/loss"), std::string::npos);

  const std::string more = kforge(fmt::format("eval --checkpoint {} --eval.steps=3", step_dir()), &rc);
  ASSERT_EQ(rc, 0) << more;
  const auto bad = kforge(fmt::format("eval --checkpoint {} --eval.nonsense=1", step_dir()), &rc);
  EXPECT_EQ(rc, 2) << bad;
}

}  // namespace
}  // namespace kforge::test
