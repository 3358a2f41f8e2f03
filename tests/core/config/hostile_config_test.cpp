// Hostile configs (issue 13): deep nesting, numbers out of range or not finite, empty files, directories,
// symlink loops, oversized files, and a 10 MB config that must parse in linear time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/limits.h"
#include "config/rules.h"
#include "config/schema.h"
#include "config_helpers.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

std::string repeat_joined(const std::string& part, size_t n, const std::string& separator) {
  std::string out;
  out.reserve(n * (part.size() + separator.size()));
  for (size_t k = 0; k < n; ++k) out += (k ? separator : "") + part;
  return out;
}

std::filesystem::path write_file(const std::string& label, const std::string& text) {
  const auto path = temp_dir(label) / "cfg.toml";
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The ConfigError that load_job_config raises on `path`; "" (and a failure) when it loads.
std::string file_error(const std::filesystem::path& path) {
  try {
    config::load_job_config(path, {}, base_catalog());
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "'" << path.string() << "' loaded without error";
  return "";
}

// ---- deep nesting ----------------------------------------------------------------------------

TEST(HostileConfig, DottedKeyTwentyThousandPartsDeepIsRefusedWithTheLimit) {
  expect_has(load_error("[model]\n" + repeat_joined("a", 20000, ".") + " = 1\n"),
             {"cfg.toml:2:1: a dotted key or [table] header of more than 32 parts"});
  // Quoted parts and spaces around the dots count the same.
  expect_has(load_error("[model]\n" + repeat_joined("\"a.b\"", 40, " . ") + " = 1\n"),
             {"cfg.toml:2:1: a dotted key or [table] header of more than 32 parts"});
}

TEST(HostileConfig, TableHeaderTwentyThousandPartsDeepIsRefusedWithTheLimit) {
  expect_has(load_error("[model]\ndim = 64\n[" + repeat_joined("a", 20000, ".") + "]\nx = 1\n"),
             {"cfg.toml:3:2: a dotted key or [table] header of more than 32 parts"});
  expect_has(load_error("[[" + repeat_joined("a", 200000, ".") + "]]\n"),
             {"cfg.toml:1:3: a dotted key or [table] header of more than 32 parts"});
}

TEST(HostileConfig, NestedArraysAndInlineTablesDeeperThanTheLimitAreRefused) {
  expect_has(load_error("[data]\nanneal_weights = " + std::string(100, '[') + std::string(100, ']') + "\n"),
             {"cfg.toml:", "nested more than 32 levels deep"});
  expect_has(
      load_error("[data]\nanneal_weights = " + repeat_joined("{ a = ", 40, "") + "1" + std::string(40, '}') + "\n"),
      {"cfg.toml:", "nested more than 32 levels deep"});
}

TEST(HostileConfig, OverrideKeyDeeperThanTheLimitIsRefused) {
  expect_has(load_error("", {"--" + repeat_joined("a", 20000, ".") + "=1"}), {"a key of more than 32 parts"});
}

TEST(HostileConfig, DotsInStringsCommentsNumbersAndDatesAreNotKeyParts) {
  const std::string dots = repeat_joined("a", 100, ".");
  const auto job = load("# " + dots + "\n[checkpoint] # " + dots + "\ndir = \"" + dots + "\"\nload_path = '" + dots +
                        "'\n[metrics]\nrun_dir = \"\"\"\n" + dots + "\n\"" + dots + "\"\"\"\"\nwandb_run_id = '''" +
                        dots + "\n" + dots + "'''\nwandb_project = \"q\\\"" + dots + "\"\npeak_tflops = 1.5e2\n");
  EXPECT_EQ(job.checkpoint.dir, dots);
  EXPECT_EQ(at(job, "metrics", "run_dir").s, dots + "\n\"" + dots + "\"");
  EXPECT_DOUBLE_EQ(job.metrics.peak_tflops, 150.0);
}

TEST(HostileConfig, NestingWithinTheLimitLoads) {
  const auto job = load(
      "[checkpoint.dyn_ckpt_window]\nstop = 64\n[[train.freeze_schedule]]\nstart_step = 0\n"
      "[[train.freeze_schedule.specs]]\nmodule = \"layers.0.*\"\n");
  EXPECT_EQ(job.checkpoint.window->stop, 64);
}

// ---- number bounds, through the schema ---------------------------------------------------------

bool is_number(config::KeyType type) {
  return type == config::KeyType::Int || type == config::KeyType::Float || type == config::KeyType::IntList ||
         type == config::KeyType::FloatList;
}

// `value` as the key's TOML: a list for list keys, a one-entry table for dicts.
std::string as_key_value(const config::KeySpec& key, const std::string& value) {
  if (key.type == config::KeyType::Dict) return "{ x = " + value + " }";
  if (key.type == config::KeyType::IntList || key.type == config::KeyType::FloatList) return "[" + value + "]";
  return value;
}

bool is_number_dict(const config::KeySpec& key) {
  return key.type == config::KeyType::Dict && key.item != config::KeyType::StringList;
}

// A TOML document that sets one number key of the schema to a value.
struct NumberKey {
  std::string prefix;  ///< the lines before the key: its table's header (and [vlm] arch)
  const config::KeySpec* key;
  std::string toml(const std::string& value) const {
    return prefix + key->name + " = " + as_key_value(*key, value) + "\n";
  }
  bool is_float() const {
    return key->type == config::KeyType::Float || key->type == config::KeyType::FloatList ||
           (key->type == config::KeyType::Dict && key->item == config::KeyType::Float);
  }
};

// Every number key (Int, Float, their lists, number dicts) under `path`, in nested tables and
// arrays of tables too.
void add_number_keys(const config::SectionSpec& spec, const std::string& path, const std::string& prefix,
                     std::vector<NumberKey>& out) {
  for (const config::KeySpec& key : spec.keys) {
    const std::string sub = path + "." + key.name;
    if (is_number(key.type) || is_number_dict(key)) out.push_back({prefix, &key});
    if (key.type == config::KeyType::Table) add_number_keys(*key.sub, sub, "[" + sub + "]\n", out);
    if (key.type == config::KeyType::TableList) add_number_keys(*key.sub, sub, "[[" + sub + "]]\n", out);
  }
}

// The number keys of the whole schema, and those of each [vlm] arch of the built-in strategies (their own keys).
std::vector<NumberKey> schema_number_keys() {
  static const config::Catalog catalog = base_catalog();
  std::vector<NumberKey> out;
  for (const config::SectionSpec& section : config::core_schema()) {
    add_number_keys(section, section.name, "[" + section.name + "]\n", out);
  }
  for (const config::ComponentKeys& arch : catalog) {
    if (arch.kind != "modality_strategy") continue;
    for (const config::KeySpec& key : arch.keys) {
      if (is_number(key.type) || is_number_dict(key)) out.push_back({"[vlm]\narch = \"" + arch.name + "\"\n", &key});
    }
  }
  return out;
}

TEST(HostileConfig, EveryNumberKeyRefusesAHugeValueNamingTheKeyFileAndValue) {
  const std::vector<NumberKey> keys = schema_number_keys();
  for (const NumberKey& k : keys) {
    const std::string huge = k.is_float() ? "1e300" : "4294967296";
    const std::string message = load_error(k.toml(huge));
    expect_has(message,
               {"cfg.toml:", "] " + k.key->name, k.is_float() ? "1e+300" : huge, "out of range: must be between"});
  }
  EXPECT_GE(keys.size(), 80u);  // every Int and Float key of the schema, not a hand-picked few
}

// LibTorch starts [train] num_threads threads: more than Linux's most CPUs is refused, not left to hang the run.
TEST(HostileConfig, NumThreadsBeyondLinuxsMostCpusIsRefused) {
  expect_has(load_error("", {"--train.num_threads=1000000"}),
             {"command line: [train] num_threads = 1000000: out of range: must be between -8192 and 8192"});
  EXPECT_EQ(load("", {"--train.num_threads=8192"}).train.num_threads, 8192);
}

TEST(HostileConfig, DataWorkersAndPrefetchBeyondTheirBoundsAreRefused) {
  expect_has(load_error("", {"--data.num_workers=1000000"}),
             {"command line: [data] num_workers = 1000000: out of range: must be between -8192 and 8192"});
  expect_has(load_error("", {"--data.prefetch_factor=2000000000"}),
             {"command line: [data] prefetch_factor = 2000000000: out of range: must be between -1024 and 1024"});
  const config::JobConfig job = load("", {"--data.num_workers=8192", "--data.prefetch_factor=1024"});
  EXPECT_EQ(job.view("data").get_int("num_workers"), 8192);
  EXPECT_EQ(job.view("data").get_int("prefetch_factor"), 1024);
}

TEST(HostileConfig, EveryFloatKeyRefusesInfinityAndNan) {
  int checked = 0;
  for (const NumberKey& k : schema_number_keys()) {
    if (!k.is_float()) continue;
    for (const std::string value : {"inf", "-inf", "nan"}) {
      expect_has(load_error(k.toml(value)), {"cfg.toml:", "] " + k.key->name, value, "must be a finite number"});
    }
    ++checked;
  }
  EXPECT_GE(checked, 25);  // every Float key, [vlm] arches included
}

TEST(HostileConfig, LrInfinityIsRefusedFromTheFileAndTheCommandLine) {
  expect_has(load_error("[optimizer]\nlr = inf\n"), {"cfg.toml:2:6: [optimizer] lr = inf: must be a finite number"});
  expect_has(load_error("", {"--optimizer.lr=nan"}), {"command line: [optimizer] lr = nan: must be a finite number"});
}

TEST(HostileConfig, TimeoutsAreBoundedToAYear) {
  expect_has(load_error("[distributed]\nnccl_timeout_sec = 9223372036854775807\n"),
             {"cfg.toml:2:20: [distributed] nccl_timeout_sec = 9223372036854775807: out of range: must be between "
              "-31536000 and 31536000"});
  expect_has(load_error("[train]\nshutdown_timeout_sec = 1e300\n"),
             {"cfg.toml:2:24: [train] shutdown_timeout_sec = 1e+300: out of range"});
  expect_has(load_error("", {"--distributed.nccl_timeout_sec=31536001"}), {"command line:", "out of range"});
  EXPECT_EQ(load("[distributed]\nnccl_timeout_sec = 31536000\n").distributed.timeout_sec, 31536000);
}

TEST(HostileConfig, PluginDeclaredNumberKeysAreBoundedToo) {
  const config::Catalog extra = {{"optimizer",
                                  "lion",
                                  "1.0.0",
                                  "libkforge_lion.so",
                                  {config::plugin_key_spec("lion_steps", "int", "3", "steps", "optimizer 'lion'"),
                                   config::plugin_key_spec("lion_beta", "float", "0.9", "beta", "optimizer 'lion'")}}};
  const std::string cfg = "[optimizer]\nname = \"lion\"\n";
  expect_has(load_error(cfg + "lion_steps = 9999999999\n", {}, base_catalog(extra)),
             {"cfg.toml:3:14: [optimizer] lion_steps = 9999999999: out of range"});
  expect_has(load_error(cfg + "lion_beta = -inf\n", {}, base_catalog(extra)),
             {"cfg.toml:3:13: [optimizer] lion_beta = -inf: must be a finite number"});
}

// ---- the parallel product ------------------------------------------------------------------

TEST(HostileConfig, ParallelProductThatOverflowsIsAnErrorNotASigfpe) {
  // 2^30 five times is 2^150: in int64 arithmetic that wraps to 0, and world_size % 0 traps.
  const std::vector<std::string> degrees = {"--distributed.dp_replicate=1073741824", "--distributed.tp=1073741824",
                                            "--distributed.pp=1073741824", "--distributed.cp=1073741824",
                                            "--distributed.ep=1073741824"};
  expect_has(world_error("", 8, degrees), {"[distributed] dp_replicate = 1073741824",
                                           "multiply to more than an int64 holds, so never to world_size (8)"});
  // 20 x 5581 x 8681 x 49477 x 384773 is 2^64 + 4: in int64 arithmetic it wraps to a world size of 4.
  expect_has(world_error("", 4,
                         {"--distributed.dp_shard=20", "--distributed.dp_replicate=5581", "--distributed.tp=8681",
                          "--distributed.pp=49477", "--distributed.cp=384773"}),
             {"[distributed] dp_shard = 20", "do not match world_size (4)"});
}

TEST(HostileConfig, ParallelDegreesBeyondTheBoundAreRefusedAtLoad) {
  expect_has(load_error("", {"--distributed.dp_replicate=4294967296", "--distributed.tp=4294967296"}),
             {"command line: [distributed] dp_replicate = 4294967296: out of range"});
}

// ---- files ---------------------------------------------------------------------------------

TEST(HostileConfig, EmptyFileIsRefusedSayingHowToAskForDefaults) {
  const auto path = write_file("empty", "");
  expect_has(file_error(path), {"config file '" + path.string() + "' sets nothing", "such as [train]"});
}

TEST(HostileConfig, CommentOnlyFileIsRefused) {
  expect_has(file_error(write_file("comments", "# all defaults\n\n   \n# really\n")), {"sets nothing"});
}

TEST(HostileConfig, SectionHeaderAloneRunsOnDefaults) {
  const auto job = config::load_job_config(write_file("header", "# all defaults\n[train]\n"), {}, base_catalog());
  EXPECT_EQ(at(job, "model", "dim").i, 4096);
}

TEST(HostileConfig, DirectoryIsRefusedNamingIt) {
  const auto dir = temp_dir("config_dir");
  expect_has(file_error(dir), {"cannot read config file '" + dir.string() + "': it is a directory"});
}

TEST(HostileConfig, SymlinkLoopIsAConfigErrorNamingThePath) {
  const auto dir = temp_dir("symlink_loop");
  std::filesystem::create_symlink(dir / "b.toml", dir / "a.toml");
  std::filesystem::create_symlink(dir / "a.toml", dir / "b.toml");
  expect_has(file_error(dir / "a.toml"),
             {"cannot read config file '" + (dir / "a.toml").string() + "': Too many levels of symbolic links"});
}

TEST(HostileConfig, FileLargerThanTheLimitIsRefused) {
  const std::string line = "# " + std::string(1021, 'x') + "\n";
  std::string text = "[train]\n";
  while (text.size() <= config::kMaxConfigBytes) text += line;
  const auto path = write_file("huge", text);
  expect_has(file_error(path), {"cannot read config file '" + path.string() + "': it is larger than " +
                                std::to_string(config::kMaxConfigBytes >> 20) + " MiB"});
}

// ---- size ----------------------------------------------------------------------------------

TEST(HostileConfig, AConfigJustUnderTheSizeLimitLoadsEveryKey) {
  // The largest config accepted, as one huge dict (the shape that once made parsing quadratic: 46 s for
  // 100k keys). Its load time is measured by benchmarks/config_load.sh, not here.
  std::string text = "[data.anneal_weights]\n";
  size_t keys = 0;
  for (; text.size() + 16 < config::kMaxConfigBytes; ++keys)
    text.append("w").append(std::to_string(1000000 + keys)).append(" = 0.5\n");
  const auto path = write_file("at_limit", text);
  const config::JobConfig job = config::load_job_config(path, {}, base_catalog());
  EXPECT_EQ(at(job, "data", "anneal_weights").table.size(), keys);
  EXPECT_GT(keys, size_t{100000});
}

TEST(HostileConfig, AHugeValueInAnErrorIsCutToAFewLinesSayingHowBigItIs) {
  std::string list = "[1";
  for (int k = 2; k <= 10000; ++k) list += ", " + std::to_string(k);
  const std::string message = load_error("[train]\nmax_steps = " + list + "]\n");
  expect_has(message, {"cfg.toml:2:13: [train] max_steps = [1, 2, 3, ", "... (10000 entries in all)"});
  EXPECT_LT(message.size(), 1000u) << message;
  const std::string text(5000, 'x');
  expect_has(load_error("[train]\nmax_steps = \"" + text + "\"\n"), {"... (5002 characters in all)"});
}

}  // namespace
}  // namespace kforge::test
