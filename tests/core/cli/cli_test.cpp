// The kforge binary as a user runs it: --version, --help, each subcommand's --help, exit codes
// (0 ok, 2 usage/config), and `run --dry-run` printing the resolved config as TOML.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "config/toml_reader.h"
#include "support/expect_text.h"
#include "support/read_file.h"
#include "support/test_host.h"
#include "support/token_corpus.h"

namespace kforge::test {
namespace {

struct CliRun {
  int status;
  std::string output;  ///< stdout and stderr together
};

CliRun kforge(const std::string& args) {
  CliRun r;
  r.status = run_command(std::string("'") + KFORGE_BIN + "' " + args, &r.output);
  return r;
}

std::filesystem::path write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

const char* kSmallConfig =
    "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 256\nmax_seq_len = 128\n"
    "[train]\nbatch_size = 2\nseq_len = 64\nmax_steps = 100\n"
    "[checkpoint]\ndir = \"ckpt\"\n";

TEST(Cli, Version) {
  const CliRun r = kforge("--version");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_has(r.output, {"kforge ", "plugin ABI", "LibTorch", "compiler"});
}

TEST(Cli, HelpNamesTheCommands) {
  for (const char* flag : {"--help", "-h", "help"}) {
    const CliRun r = kforge(flag);
    EXPECT_EQ(r.status, 0) << flag << "\n" << r.output;
    expect_has(r.output, {"Usage:", "kforge run CONFIG.toml", "list-plugins", "prepare-data", "--section.key=value"});
  }
}

TEST(Cli, NoCommandIsAUsageError) {
  const CliRun r = kforge("");
  EXPECT_EQ(r.status, 2);
  expect_has(r.output, {"Usage:"});
}

TEST(Cli, UnknownCommandExits2) {
  const CliRun r = kforge("frobnicate");
  EXPECT_EQ(r.status, 2);
  expect_has(r.output, {"unknown command 'frobnicate'", "Usage:"});
}

TEST(Cli, UnknownCommandSuggestsTheClosest) {
  const CliRun r = kforge("lst-plugins --json");
  EXPECT_EQ(r.status, 2);
  expect_has(r.output, {"kforge: unknown command 'lst-plugins'. Did you mean 'list-plugins'?\n", "Usage:"});
  const CliRun far = kforge("frobnicate");
  EXPECT_EQ(far.output.find("Did you mean"), std::string::npos) << far.output;
}

TEST(Cli, RunHelpNamesItsOptions) {
  const CliRun r = kforge("run --help");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_has(r.output, {"kforge run", "CONFIG.toml", "--plugin-dir", "--dry-run", "--section.key=value", "75"});
}

TEST(Cli, ListPluginsHelpNamesItsOptions) {
  const CliRun r = kforge("list-plugins --help");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_has(r.output, {"kforge list-plugins", "--plugin-dir", "--json", "--verbose"});
}

TEST(Cli, PrepareDataHelpNamesItsOptions) {
  const CliRun r = kforge("prepare-data --help");
  EXPECT_EQ(r.status, 0) << r.output;
  expect_has(r.output, {"kforge prepare-data", "--input", "--output", "--tokenizer", "--train-tokenizer", "--vocab-size"});
}

TEST(Cli, AnExceptionEscapingACommandIsAnErrorMessageAndExitTwoNotAnAbort) {
  // launch creates its --log-dir with std::filesystem, which throws for a path under /proc.
  const CliRun r = kforge("launch --nproc-per-node 1 --log-dir /proc/kforge_no_such_dir/logs -- run cfg.toml");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"kforge: error: ", "/proc/kforge_no_such_dir/logs"});
}

TEST(Cli, RunWithoutConfigExits2) {
  const CliRun r = kforge("run");
  EXPECT_EQ(r.status, 2);
  expect_has(r.output, {"missing CONFIG.toml"});
}

TEST(Cli, DryRunPrintsTheResolvedConfig) {
  const auto dir = temp_dir("cli_dry_run");
  const auto data = write_token_corpus(dir / "data", 256);
  const auto cfg =
      write(dir / "small.toml", std::string(kSmallConfig) + "[data]\ndataset_path = \"" + data.string() + "\"\n");
  const auto out = dir / "resolved.toml";
  const CliRun r = kforge("run '" + cfg.string() +
                          "' --dry-run --train.max_steps=7 --optimizer.lr=1e-3 "
                          "--optimizer.betas='(0.8, 0.9)' --checkpoint.dyn_ckpt_window.stop=16 > '" +
                          out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output << read_file(out);
  const std::string text = read_file(out);
  expect_has(text, {"# kforge run --dry-run: " + cfg.string(), "[model]", "[optimizer]", "[checkpoint.dyn_ckpt_window]"});
  // The printed text is TOML that holds the file's values, the overrides and the defaults.
  config::Value tree;
  ASSERT_NO_THROW(tree = config::read_toml_string(text, "dry-run output")) << text;
  EXPECT_EQ(tree.find("model")->find("dim")->i, 64);
  EXPECT_EQ(tree.find("train")->find("max_steps")->i, 7);
  EXPECT_DOUBLE_EQ(tree.find("optimizer")->find("lr")->f, 1e-3);
  EXPECT_DOUBLE_EQ(tree.find("optimizer")->find("betas")->list.at(0).f, 0.8);
  EXPECT_EQ(tree.find("checkpoint")->find("dyn_ckpt_window")->find("stop")->i, 16);
  EXPECT_EQ(tree.find("scheduler")->find("warmup_steps")->i, 2000);
  EXPECT_EQ(tree.find("checkpoint")->find("dir")->s, "ckpt");

  // Fed back to kforge, the printed config resolves to the same config. It now sets, among the
  // defaults, the keys that have no effect here, which warn (on stderr).
  const auto again = dir / "again.toml", warnings = dir / "again.err";
  CliRun r2;
  r2.status = run_command("{ '" + std::string(KFORGE_BIN) + "' run '" + out.string() + "' --dry-run >'" +
                              again.string() + "' 2>'" + warnings.string() + "'; }",
                          &r2.output);
  ASSERT_EQ(r2.status, 0) << r2.output << read_file(again);
  expect_has(read_file(warnings), {"[data] num_workers = 4: has no effect", "[data] pin_memory = true: has no effect"});
  const std::string text2 = read_file(again);
  EXPECT_EQ(text.substr(text.find('\n')), text2.substr(text2.find('\n')));  // all but the header line
}

// The start-up line that counts the decayed tensors states kforge's choice on embeddings and KempnerForge's
// behaviour; decay_embeddings = true adds the embedding tensors to the count.
TEST(Cli, TheWeightDecayLineSaysWhetherEmbeddingsAreDecayedAndWhatKempnerForgeDoes) {
  const auto dir = temp_dir("cli_decay_line");
  const auto data = write_token_corpus(dir / "data", 256);
  const auto cfg = write(dir / "small.toml", std::string(kSmallConfig) + "[data]\ndataset_path = \"" + data.string() +
                                                 "\"\n[metrics]\nbackends = [\"console\"]\n");
  const auto decayed = [&](const std::string& overrides, const std::string& says) {
    const CliRun r = kforge("run '" + cfg.string() + "' --train.max_steps=1 --checkpoint.dir='" +
                            (dir / "ckpt").string() + "' " + overrides);
    EXPECT_EQ(r.status, 0) << r.output;
    const size_t at = r.output.find("adamw: weight decay on ");
    EXPECT_NE(at, std::string::npos) << r.output;
    if (at == std::string::npos) return -1;
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    EXPECT_NE(line.find(says), std::string::npos) << line;
    std::filesystem::remove_all(dir / "ckpt");
    return std::stoi(line.substr(std::string("adamw: weight decay on ").size()));
  };
  const int without = decayed("", "(embeddings excluded ([optimizer] decay_embeddings = false); KempnerForge's code "
                                  "decays them, whatever its docstring says: set decay_embeddings = true to match it)");
  const int with = decayed("--optimizer.decay_embeddings=true",
                           "(embeddings included ([optimizer] decay_embeddings = true), as KempnerForge's code decays "
                           "them)");
  EXPECT_GT(with, without);
}

TEST(Cli, ConfigErrorExits2WithTheMessage) {
  const auto dir = temp_dir("cli_config_error");
  const auto cfg = write(dir / "bad.toml", std::string(kSmallConfig) + "[optimizer]\nweight_decy = 0.1\n");
  const CliRun r = kforge("run '" + cfg.string() + "' --dry-run");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {cfg.string() + ":14:15: unknown key 'weight_decy' in [optimizer]", "Did you mean 'weight_decay'?"});
}

TEST(Cli, OverrideErrorExits2NamingTheCommandLine) {
  const auto dir = temp_dir("cli_override_error");
  const auto cfg = write(dir / "small.toml", kSmallConfig);
  const CliRun r = kforge("run '" + cfg.string() + "' --dry-run --model.n_layers=two");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"command line: [model] n_layers = \"two\": expected an integer"});
}

TEST(Cli, DryRunChecksTheWorldRules) {
  const auto dir = temp_dir("cli_world");
  const auto cfg = write(dir / "small.toml", kSmallConfig);
  const CliRun r = kforge("run '" + cfg.string() + "' --dry-run --train.seq_len=256");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"[train] seq_len = 256", "must be <= [model] max_seq_len (128)"});
}

TEST(Cli, MalformedTomlExits2WithThePosition) {
  const auto dir = temp_dir("cli_malformed");
  const auto cfg = write(dir / "broken.toml", "[model]\ndim = = 4\n");
  const CliRun r = kforge("run '" + cfg.string() + "' --dry-run");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {cfg.string() + ":2:", "malformed TOML"});
}

TEST(Cli, MissingConfigFileExits2NamingIt) {
  const CliRun r = kforge("run /nonexistent/kforge-test/missing.toml --dry-run");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"/nonexistent/kforge-test/missing.toml", "no such file"});
}

}  // namespace
}  // namespace kforge::test
