// Hostile configs through `kforge run --dry-run` (issue 13): each one is refused with its message and
// exit code 2 (bad config, nothing ran), never a crash, an abort or a run on defaults.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/expect_text.h"
#include "support/test_host.h"
#include "support/token_corpus.h"

namespace kforge::test {
namespace {

struct DryRun {
  int status;
  std::string output;  ///< stdout and stderr together
};

// `env` (assignments) kforge run '<config>' --dry-run <args>.
DryRun dry_run(const std::filesystem::path& config, const std::string& args = "", const std::string& env = "") {
  DryRun r;
  r.status = run_command(env + " '" + std::string(KFORGE_BIN) + "' run '" + config.string() + "' --dry-run " + args,
                         &r.output);
  return r;
}

// A small valid config over a real token corpus (a dry run of it exits 0), plus `extra` lines.
std::filesystem::path small_config(const std::string& label, const std::string& extra = "") {
  const auto dir = temp_dir(label);
  const auto data = write_token_corpus(dir / "data", 256);
  const auto path = dir / "cfg.toml";
  std::ofstream(path) << "[model]\ndim = 64\nn_layers = 2\nn_heads = 4\nvocab_size = 256\nmax_seq_len = 128\n"
                         "[train]\nbatch_size = 2\nseq_len = 64\nmax_steps = 10\n[checkpoint]\ndir = \""
                      << (dir / "ckpt").string() << "\"\n[data]\ndataset_path = \"" << data.string() << "\"\n"
                      << extra;
  return path;
}

TEST(HostileConfigCli, TheSmallConfigDryRunsCleanly) {
  const DryRun r = dry_run(small_config("hostile_ok"));
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(HostileConfigCli, DeepDottedKeyExits2) {
  const auto path = temp_dir("hostile_deep") / "deep.toml";
  std::string key = "a";
  for (int k = 1; k < 20000; ++k) key += ".a";
  std::ofstream(path) << "[model]\n" << key << " = 1\n";
  const DryRun r = dry_run(path);
  EXPECT_EQ(r.status, 2) << r.output.substr(0, 2000);
  expect_has(r.output.substr(0, 2000), {path.string() + ":2:1: a dotted key or [table] header of more than 32 parts"});
}

TEST(HostileConfigCli, SymlinkLoopExits2NamingThePath) {
  const auto dir = temp_dir("hostile_loop");
  std::filesystem::create_symlink(dir / "b.toml", dir / "a.toml");
  std::filesystem::create_symlink(dir / "a.toml", dir / "b.toml");
  const DryRun r = dry_run(dir / "a.toml");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"cannot read config file '" + (dir / "a.toml").string() + "'", "symbolic links"});
}

TEST(HostileConfigCli, DirectoryExits2NamingIt) {
  const auto dir = temp_dir("hostile_dir");
  const DryRun r = dry_run(dir);
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"cannot read config file '" + dir.string() + "': it is a directory"});
}

TEST(HostileConfigCli, EmptyFileExits2) {
  const auto path = temp_dir("hostile_empty") / "empty.toml";
  std::ofstream{path};
  const DryRun r = dry_run(path);
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"config file '" + path.string() + "' sets nothing"});
}

TEST(HostileConfigCli, InfiniteLrExits2) {
  const DryRun r = dry_run(small_config("hostile_lr", "[optimizer]\nlr = inf\n"));
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"cfg.toml:16:6: [optimizer] lr = inf: must be a finite number"});
}

TEST(HostileConfigCli, HugeTimeoutsExit2) {
  const DryRun nccl = dry_run(small_config("hostile_nccl", "[distributed]\nnccl_timeout_sec = 9223372036854775807\n"));
  EXPECT_EQ(nccl.status, 2) << nccl.output;
  expect_has(nccl.output, {"cfg.toml:16:20: [distributed] nccl_timeout_sec = 9223372036854775807: out of range"});
  const DryRun shutdown = dry_run(small_config("hostile_shutdown"), "--train.shutdown_timeout_sec=1e300");
  EXPECT_EQ(shutdown.status, 2) << shutdown.output;
  expect_has(shutdown.output, {"command line: [train] shutdown_timeout_sec = 1e+300: out of range"});
}

TEST(HostileConfigCli, OverflowingParallelSizesExit2) {
  const DryRun r =
      dry_run(small_config("hostile_dims"), "--distributed.dp_replicate=4294967296 --distributed.tp=4294967296");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"command line: [distributed] dp_replicate = 4294967296: out of range"});
}

// Pipeline orders hold 2 x pp x chunks x grad_accum_steps passes: their size is checked before any is built, so a
// dry run within a 3 GiB address space (kforge-host needs about 1 GiB) refuses them instead of running out of memory.
TEST(HostileConfigCli, HugePipelineOrdersExit2UnderAMemoryLimitNamingTheKeys) {
  const std::string three_gib = "ulimit -v 3145728;";
  const DryRun pp = dry_run(small_config("hostile_pipeline"), "--distributed.pp=65536 --train.grad_accum_steps=65536",
                            three_gib);
  EXPECT_EQ(pp.status, 2) << pp.output;
  expect_has(pp.output, {"kforge run: [distributed] pp = 65536 x 1 model chunks per rank (pp_schedule \"1f1b\") x "
                         "[train] grad_accum_steps = 65536 micro-batches: 8589934592 forward and backward passes per "
                         "step, more than the 16777216 a step may hold; lower pp or grad_accum_steps"});
  const DryRun chunks = dry_run(small_config("hostile_virtual_stages"),
                                "--distributed.pp=64 --train.grad_accum_steps=512 "
                                "--distributed.pp_schedule=interleaved_1f1b --distributed.virtual_stages=1024",
                                three_gib);
  EXPECT_EQ(chunks.status, 2) << chunks.output;
  expect_has(chunks.output, {"[distributed] pp = 64 x 1024 model chunks per rank (pp_schedule \"interleaved_1f1b\") x "
                             "[train] grad_accum_steps = 512 micro-batches: 67108864 forward and backward passes"});
}

TEST(HostileConfigCli, NonNumericSlurmJobIdExits2NamingIt) {
  const DryRun r = dry_run(small_config("hostile_slurm"), "", "SLURM_NTASKS=1 SLURM_JOB_ID=abc");
  EXPECT_EQ(r.status, 2) << r.output;
  expect_has(r.output, {"SLURM_JOB_ID='abc' is not an integer"});
}

}  // namespace
}  // namespace kforge::test
