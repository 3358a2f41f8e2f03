// --section.key=value overrides, parsed as KempnerForge's loader does (§1.3): Python literals,
// bare flags, nested keys, raw strings, list coercion, and their precedence over the file; the
// space form --section.key value taken out of a command line.
#include <gtest/gtest.h>

#include "config_helpers.h"
#include "config/overrides.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

using config::Value;

TEST(OverrideSyntax, WhatCountsAsAnOverride) {
  EXPECT_TRUE(config::is_override("--model.dim=8"));
  EXPECT_TRUE(config::is_override("--train.compile_model"));
  EXPECT_TRUE(config::is_override("--checkpoint.dyn_ckpt_window.stop=128"));
  EXPECT_FALSE(config::is_override("--dry-run"));
  EXPECT_FALSE(config::is_override("--plugin-dir=./a.b"));  // the key part has no dot
  EXPECT_FALSE(config::is_override("-model.dim=8"));
  EXPECT_FALSE(config::is_override("--.dim=8"));
  EXPECT_FALSE(config::is_override("--model.=8"));
  EXPECT_FALSE(config::is_override("cfg.toml"));
}

// split_overrides on a command line given as strings: the overrides, then the rest joined by spaces.
std::pair<std::vector<std::string>, std::string> split(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const config::SplitArguments out = config::split_overrides(static_cast<int>(argv.size()), argv.data());
  std::string rest;
  for (const char* a : out.rest) rest += (rest.empty() ? "" : " ") + std::string(a);
  return {out.overrides, rest};
}

using Strings = std::vector<std::string>;

TEST(OverrideSyntax, SpaceFormTakesTheNextArgumentAsTheValue) {
  EXPECT_EQ(split({"run", "cfg.toml", "--train.max_steps", "20", "--dry-run"}),
            std::make_pair(Strings{"--train.max_steps=20"}, std::string("run cfg.toml --dry-run")));
  EXPECT_EQ(split({"run", "--optimizer.lr", "1e-3", "--optimizer.betas", "(0.9, 0.95)", "cfg.toml"}),
            std::make_pair(Strings{"--optimizer.lr=1e-3", "--optimizer.betas=(0.9, 0.95)"},
                           std::string("run cfg.toml")));
  // Negative numbers are values, not flags.
  EXPECT_EQ(split({"run", "--train.seed", "-1", "--optimizer.lr", "-.5"}).first,
            (Strings{"--train.seed=-1", "--optimizer.lr=-.5"}));
  // The = form does not take the next argument.
  EXPECT_EQ(split({"run", "--train.max_steps=20", "cfg.toml"}),
            std::make_pair(Strings{"--train.max_steps=20"}, std::string("run cfg.toml")));
}

TEST(OverrideSyntax, BareOverrideBeforeAFlagOrAtTheEndStaysTrue) {
  EXPECT_EQ(split({"run", "cfg.toml", "--model.qk_norm", "--dry-run", "--train.compile_model"}),
            std::make_pair(Strings{"--model.qk_norm", "--train.compile_model"}, std::string("run cfg.toml --dry-run")));
  EXPECT_EQ(split({"run", "--model.qk_norm", "--train.max_steps", "3"}).first,
            (Strings{"--model.qk_norm", "--train.max_steps=3"}));
  // The space form's value, like the = form's, parses as true.
  Value root = Value::make_table();
  config::apply_override(root, split({"run", "--model.qk_norm", "True"}).first.at(0));
  EXPECT_TRUE(root.find("model")->find("qk_norm")->b);
}

TEST(OverrideSyntax, MalformedArgumentsAreRejected) {
  Value root = Value::make_table();
  EXPECT_THROW(config::apply_override(root, "--model..dim=8"), sdk::ConfigError);
  EXPECT_THROW(config::apply_override(root, "model.dim=8"), sdk::ConfigError);
}

TEST(OverrideValues, NumbersAndPythonLiterals) {
  EXPECT_EQ(config::parse_override_value("42").type, Value::Type::Int);
  EXPECT_EQ(config::parse_override_value("-1").i, -1);
  const Value lr = config::parse_override_value("3e-4");
  EXPECT_EQ(lr.type, Value::Type::Float);
  EXPECT_DOUBLE_EQ(lr.f, 3e-4);
  EXPECT_EQ(config::parse_override_value("[1,2]").to_toml(), "[1, 2]");
  EXPECT_EQ(config::parse_override_value("(0.9, 0.95)").to_toml(), "[0.9, 0.95]");
  EXPECT_EQ(config::parse_override_value("[True, False]").to_toml(), "[true, false]");
  EXPECT_EQ(config::parse_override_value("['a', \"b\"]").to_toml(), "[\"a\", \"b\"]");
  EXPECT_EQ(config::parse_override_value("{'wiki': 0.5, 'code': 1}").to_toml(), "{ code = 1, wiki = 0.5 }");
  EXPECT_EQ(config::parse_override_value("[{'path': 'x', 'weight': 2.0}]").to_toml(),
            "[{ path = \"x\", weight = 2.0 }]");
}

TEST(OverrideValues, BooleansNoneAndStrings) {
  for (const char* t : {"True", "true", "TRUE"}) {
    const Value v = config::parse_override_value(t);
    EXPECT_EQ(v.type, Value::Type::Bool) << t;
    EXPECT_TRUE(v.b) << t;
  }
  for (const char* f : {"False", "false"}) EXPECT_FALSE(config::parse_override_value(f).b) << f;
  EXPECT_EQ(config::parse_override_value("/data/run-1/*.npy").s, "/data/run-1/*.npy");
  EXPECT_EQ(config::parse_override_value("'single quoted'").s, "single quoted");
  EXPECT_EQ(config::parse_override_value("\"double quoted\"").s, "double quoted");
  const Value date = config::parse_override_value("2024-01-01");
  EXPECT_EQ(date.type, Value::Type::String);
  EXPECT_EQ(date.s, "2024-01-01");
  for (const char* raw : {"[not, a literal", "a=b", ""}) {
    const Value v = config::parse_override_value(raw);
    EXPECT_EQ(v.type, Value::Type::String) << raw;
    EXPECT_EQ(v.s, raw);
  }
  for (const auto* v : {"1", "3e-4", "True", "[1]", "None"}) {
    EXPECT_EQ(config::parse_override_value(v).source.describe(), "command line") << v;
  }
}

// Python's ast.literal_eval, which KempnerForge's loader uses: only None is null; any other spelling is a string.
TEST(OverrideValues, OnlyTheWordNoneIsNull) {
  EXPECT_TRUE(config::parse_override_value("None").is_null());
  for (const char* word : {"none", "null", "NONE", "Null", "nil"}) {
    const Value v = config::parse_override_value(word);
    EXPECT_EQ(v.type, Value::Type::String) << word;
    EXPECT_EQ(v.s, word);
  }
}

TEST(Overrides, NoneSpelledLowercaseIsAStringValueAsInKempnerForge) {
  const config::Catalog none_scheduler = {{"scheduler", "none", "1.0.0", "libkforge_schedulers.so", {}}};
  const auto job =
      load("[train]\nactivation_checkpointing = \"full\"\n",
           {"--scheduler.name=none", "--train.activation_checkpointing=none", "--checkpoint.load_path=null"},
           base_catalog(none_scheduler));
  EXPECT_EQ(at(job, "scheduler", "name").s, "none");
  EXPECT_EQ(at(job, "train", "activation_checkpointing").s, "none");
  EXPECT_EQ(job.checkpoint.load_path, std::optional<std::string>("null"));  // a nullable key keeps the string
  // An integer key refuses the string, naming None as the way to unset it.
  expect_has(load_error("", {"--model.n_kv_heads=none"}),
             {"command line: [model] n_kv_heads = \"none\": expected an integer or None"});
}

TEST(Overrides, IntsFloatsAndLists) {
  const auto job = load("", {"--model.dim=512", "--model.n_heads=8", "--optimizer.lr=3e-4",
                             "--optimizer.betas=(0.9, 0.95)", "--optimizer.weight_decay=0",
                             "--train.max_steps=1e3", "--scheduler.warmup_steps=10"});
  EXPECT_EQ(at(job, "model", "dim").i, 512);
  EXPECT_DOUBLE_EQ(at(job, "optimizer", "lr").f, 3e-4);
  EXPECT_EQ(at(job, "optimizer", "betas").to_toml(), "[0.9, 0.95]");
  EXPECT_EQ(at(job, "optimizer", "weight_decay").type, Value::Type::Float);  // int coerced to the float key
  EXPECT_EQ(at(job, "train", "max_steps").i, 1000);
  EXPECT_EQ(at(job, "scheduler", "warmup_steps").i, 10);
  EXPECT_EQ(at(load("", {"--optimizer.betas=[0.8,0.99]"}), "optimizer", "betas").to_toml(), "[0.8, 0.99]");
}

TEST(Overrides, BooleansAsKempnerForgeParsesThem) {
  const struct {
    const char* text;
    bool value;
  } cases[] = {{"True", true}, {"true", true}, {"1", true}, {"yes", true},
               {"False", false}, {"false", false}, {"0", false}, {"no", false}};
  for (const auto& c : cases) {
    const auto job = load("[train]\ncompile_model = " + std::string(c.value ? "false" : "true") + "\n",
                          {std::string("--train.compile_model=") + c.text});
    EXPECT_EQ(at(job, "train", "compile_model").b, c.value) << c.text;
  }
}

TEST(Overrides, BareFlagMeansTrue) {
  const auto job = load("[model]\nqk_norm = false\n", {"--model.qk_norm", "--train.compile_model"});
  EXPECT_TRUE(at(job, "model", "qk_norm").b);
  EXPECT_TRUE(at(job, "train", "compile_model").b);
}

TEST(Overrides, NoneForNullableKeys) {
  const auto job = load("[model]\nn_kv_heads = 8\n[checkpoint]\nload_path = \"a\"\n",
                        {"--model.n_kv_heads=None", "--checkpoint.load_path=None"});
  EXPECT_TRUE(at(job, "model", "n_kv_heads").is_null());
  EXPECT_FALSE(job.checkpoint.load_path.has_value());
  EXPECT_TRUE(at(load("[data]\nhf_dataset_name = \"wikitext\"\n", {"--data.hf_dataset_name=None"}), "data",
                 "hf_dataset_name")
                  .is_null());
  // A None for a dynamic window removes it.
  EXPECT_FALSE(load("[checkpoint.dyn_ckpt_window]\n", {"--checkpoint.dyn_ckpt_window=None"}).checkpoint.window);
}

TEST(Overrides, NestedKeysCreateAndMergeTables) {
  const auto created = load("", {"--checkpoint.dyn_ckpt_window.stop=128"});
  ASSERT_TRUE(created.checkpoint.window.has_value());
  EXPECT_EQ(created.checkpoint.window->start, 0);
  EXPECT_EQ(created.checkpoint.window->stop, 128);
  EXPECT_EQ(created.checkpoint.window->strategy, "power2");
  const auto merged = load("[checkpoint.dyn_ckpt_window]\nstart = 4\nstop = 64\n", {"--checkpoint.dyn_ckpt_window.stop=128"});
  EXPECT_EQ(merged.checkpoint.window->start, 4);
  EXPECT_EQ(merged.checkpoint.window->stop, 128);
  // Sections merge key by key.
  const auto section = load("[model]\ndim = 512\nn_heads = 8\n", {"--model.n_layers=2"});
  EXPECT_EQ(at(section, "model", "dim").i, 512);
  EXPECT_EQ(at(section, "model", "n_layers").i, 2);
}

TEST(Overrides, StringsAndPathsAreKeptRaw) {
  const auto job = load("", {"--checkpoint.dir=/scratch/run-1", "--data.file_pattern=tokenized_*.bin",
                             "--data.tokenizer_path=123", "--metrics.wandb_run_name=2024-01-01",
                             "--metrics.wandb_run_id=true", "--metrics.tensorboard_dir=\"tb dir\"",
                             "--data.hf_dataset_name=1e-3"});
  EXPECT_EQ(at(job, "checkpoint", "dir").s, "/scratch/run-1");
  EXPECT_EQ(at(job, "data", "file_pattern").s, "tokenized_*.bin");
  EXPECT_EQ(at(job, "data", "tokenizer_path").s, "123");
  EXPECT_EQ(at(job, "metrics", "wandb_run_name").s, "2024-01-01");
  EXPECT_EQ(at(job, "metrics", "wandb_run_id").s, "true");
  EXPECT_EQ(at(job, "metrics", "tensorboard_dir").s, "tb dir");
  EXPECT_EQ(at(job, "data", "hf_dataset_name").s, "1e-3");
}

TEST(Overrides, BareScalarForAListKeyIsAOneElementList) {
  const auto job = load("", {"--metrics.backends=console", "--checkpoint.exclude_from_loading=optimizer"});
  EXPECT_EQ(at(job, "metrics", "backends").to_toml(), "[\"console\"]");
  EXPECT_EQ(job.checkpoint.exclude_from_loading, std::vector<std::string>{"optimizer"});
  // The same in the file.
  EXPECT_EQ(at(load("[metrics]\nbackends = \"jsonl\"\n"), "metrics", "backends").to_toml(), "[\"jsonl\"]");
}

TEST(Overrides, OverrideBeatsFileAndLaterBeatsEarlier) {
  const auto job = load("[train]\nmax_steps = 500\nseq_len = 128\n", {"--train.max_steps=7", "--train.seq_len=64",
                                                                      "--train.seq_len=32"});
  EXPECT_EQ(job.train.max_steps, 7);
  EXPECT_EQ(job.train.seq_len, 32);
}

TEST(Overrides, DictsAndListsAreReplacedWholesale) {
  const std::string toml =
      "[data]\nanneal_start_step = 10\nanneal_weights = { a = 0.5, b = 0.5 }\n"
      "[[data.datasets]]\npath = \"a\"\n[[data.datasets]]\npath = \"b\"\n";
  const auto literal = load(toml, {"--data.anneal_weights={'c': 1.0}"});
  EXPECT_EQ(at(literal, "data", "anneal_weights").to_toml(), "{ c = 1.0 }");
  // A dotted key into a dict also replaces it (KempnerForge's plain-dict fields do not merge).
  const auto dotted = load(toml, {"--data.anneal_weights.c=1.0"});
  EXPECT_EQ(at(dotted, "data", "anneal_weights").to_toml(), "{ c = 1.0 }");
  const auto lists = load(toml, {"--data.datasets=[{'path': 'x', 'weight': 3}]", "--optimizer.betas=[0.5, 0.6]"});
  EXPECT_EQ(at(lists, "data", "datasets").list.size(), 1u);
  EXPECT_EQ(at(lists, "data", "datasets").list[0].find("path")->s, "x");
  EXPECT_DOUBLE_EQ(at(lists, "data", "datasets").list[0].find("weight")->f, 3.0);
}

TEST(Overrides, OptionalSectionsFromTheCommandLine) {
  const auto job = load("", {"--vision_encoder.num_tokens=16", "--vlm.arch=cross_attention",
                             "--vlm.cross_attention_every_n_layers=2"});
  EXPECT_EQ(at(job, "vlm", "cross_attention_every_n_layers").i, 2);
  EXPECT_EQ(at(job, "adapter", "type").s, "mlp_2layer");
}

}  // namespace
}  // namespace kforge::test
