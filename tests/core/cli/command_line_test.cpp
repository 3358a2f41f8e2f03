// Command-line habits the kforge binary accepts: --section.key value (space form) for run, eval and
// launch's workers; torchrun's --nproc_per_node spellings and no `--` before launch's worker
// command; an unknown option, a stray argument or a bad option value refused in one line that
// names it ("did you mean" for an option), exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/expect_text.h"
#include "support/test_host.h"
#include "support/token_corpus.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

int kforge(const std::string& args, std::string* output) {
  return run_command(std::string("'") + KFORGE_BIN + "' " + args, output);
}

// A valid config, so that a bad override is the only error.
fs::path small_config(const std::string& label) {
  const fs::path path = temp_dir(label) / "small.toml";
  std::ofstream(path) << "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 256\nmax_seq_len = 128\n"
                         "[train]\nbatch_size = 2\nseq_len = 64\nmax_steps = 100\n";
  return path;
}

// The type error that --model.n_layers two raises once the override has reached the config.
const char* kBadLayers = "command line: [model] n_layers = \"two\": expected an integer";

TEST(CommandLine, RunTakesSpaceFormOverrides) {
  const fs::path cfg = small_config("cli_space_run");
  std::string out;
  EXPECT_EQ(kforge("run '" + cfg.string() + "' --dry-run --train.max_steps 7 --model.n_layers two", &out), 2) << out;
  expect_has(out, {kBadLayers});
  const std::string data = write_token_corpus(cfg.parent_path() / "data", 256).string();
  EXPECT_EQ(kforge("run '" + cfg.string() + "' --dry-run --train.max_steps 7 --data.dataset_path '" + data + "'", &out),
            0)
      << out;
  expect_has(out, {"max_steps = 7\n", "dataset_path = \"" + data + "\"\n"});
}

TEST(CommandLine, EvalTakesSpaceFormOverrides) {
  // The value is taken with its key, not left over as a stray argument: the error is the missing --checkpoint.
  std::string out;
  EXPECT_EQ(kforge("eval --eval.steps 3", &out), 2) << out;
  expect_has(out, {"kforge eval: missing --checkpoint DIR"});
  EXPECT_EQ(out.find("unexpected argument"), std::string::npos) << out;
}

TEST(CommandLine, LaunchAcceptsTorchrunSpellingsWithoutTheSeparator) {
  const fs::path cfg = small_config("cli_launch_torchrun");
  const fs::path logs = cfg.parent_path() / "logs";
  std::string out;
  const int code = kforge("launch --nproc_per_node 2 --nnodes 1 --node_rank 0 --master_addr 127.0.0.1 "
                          "--master_port 29512 --log_dir '" + logs.string() + "' --grace_sec 1 run '" + cfg.string() +
                              "' --dry-run --model.n_layers two",
                          &out);
  EXPECT_EQ(code, 2) << out;  // the workers' config error, passed through with its space-form override
  expect_has(out, {"2 workers (ranks 0..1 of 2), rendezvous 127.0.0.1:29512, logs in " + logs.string(), kBadLayers});
  EXPECT_TRUE(fs::exists(logs / "rank_1.log"));
}

TEST(CommandLine, LaunchSeparatorIsOptional) {
  const fs::path cfg = small_config("cli_launch_separator");
  for (const std::string separator : {"-- ", ""}) {
    std::string out;
    EXPECT_EQ(kforge("launch --nproc-per-node 1 --grace-sec 1 " + separator + "run '" + cfg.string() +
                         "' --dry-run --model.n_layers=two",
                     &out),
              2)
        << separator << out;
    expect_has(out, {"1 workers (ranks 0..0 of 1)", kBadLayers});
  }
}

TEST(CommandLine, LaunchHelpNamesItsOptionsAndWhatEachWorkerGets) {
  std::string out;
  EXPECT_EQ(kforge("launch --help", &out), 0) << out;
  expect_has(out, {"Start N local worker processes", "--nproc-per-node", "--grace-sec", "KFORGE_LAUNCHER_PID",
                   "forks of the launcher"});
}

TEST(CommandLine, LaunchWithoutAWorkerCommandExits2) {
  std::string out;
  EXPECT_EQ(kforge("launch --nproc_per_node 2", &out), 2) << out;
  expect_has(out, {"kforge launch: missing the worker command (e.g. run cfg.toml) after the options"});
}

TEST(CommandLine, UnknownOptionSuggestsTheClosestInOneLine) {
  const fs::path cfg = small_config("cli_unknown_option");
  const struct {
    std::string args, message;
  } cases[] = {
      {"run '" + cfg.string() + "' --dryrun",
       "kforge run: unknown option '--dryrun'. Did you mean '--dry-run'? (kforge run --help lists the options)\n"},
      {"run '" + cfg.string() + "' --plugin-dirs=x",
       "kforge run: unknown option '--plugin-dirs'. Did you mean '--plugin-dir'? (kforge run --help lists the "
       "options)\n"},
      {"eval --checkpont x", "kforge eval: unknown option '--checkpont'. Did you mean '--checkpoint'?"},
      {"launch --nproc-per-nod 2 run '" + cfg.string() + "'",
       "kforge launch: unknown option '--nproc-per-nod'. Did you mean '--nproc-per-node'?"},
      {"list-plugins --jsn", "kforge list-plugins: unknown option '--jsn'. Did you mean '--json'?"},
      {"prepare-data --ouput x", "kforge prepare-data: unknown option '--ouput'. Did you mean '--output'?"},
      {"generate --checkpoint x --promt hi", "kforge generate: unknown option '--promt'. Did you mean '--prompt'?"},
      {"check-env --jsonn", "kforge check-env: unknown option '--jsonn'. Did you mean '--json'?"},
      {"run '" + cfg.string() + "' --xyzzy-plugh",
       "kforge run: unknown option '--xyzzy-plugh'. (kforge run --help lists the options)\n"},
  };
  for (const auto& c : cases) {
    std::string out;
    EXPECT_EQ(kforge(c.args, &out), 2) << c.args << "\n" << out;
    expect_has(out, {c.message});
    EXPECT_EQ(out.find("Usage:"), std::string::npos) << "no help dump for " << c.args << ":\n" << out;
  }
}

TEST(CommandLine, BadOptionValueNamesTheOption) {
  for (const char* args : {"--grace-sec x --nproc-per-node 1", "--nproc-per-node 1 --grace_sec=x"}) {
    std::string out;
    EXPECT_EQ(kforge(std::string("launch ") + args + " run cfg.toml", &out), 2) << args << "\n" << out;
    expect_has(out, {"kforge launch: 'x' is not a valid value for --grace", "(kforge launch --help lists the options)"});
  }
}

TEST(CommandLine, StrayArgumentIsRefused) {
  const fs::path cfg = small_config("cli_stray");
  std::string out;
  EXPECT_EQ(kforge("run '" + cfg.string() + "' extra.toml --dry-run", &out), 2) << out;
  expect_has(out, {"kforge run: unexpected argument 'extra.toml'. (kforge run --help lists the options)"});
}

}  // namespace
}  // namespace kforge::test
