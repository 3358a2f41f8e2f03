// Resolving against the schema: unknown sections and keys (valid keys, "did you mean"), keys that
// plugins declare, type errors naming their source, malformed TOML, and the TOML round trip.
#include <gtest/gtest.h>

#include <fstream>

#include "config_helpers.h"
#include "config/toml_reader.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

// ---- unknown sections and keys -------------------------------------------------------------

TEST(UnknownKeys, SectionWithValidSectionsAndSuggestion) {
  expect_has(load_error("[modle]\ndim = 8\n"),
             {"cfg.toml:1:1: unknown section [modle]",
              "Valid sections: model, train, optimizer, scheduler, data, eval, distributed, checkpoint, metrics, "
              "profiling, vision_encoder, adapter, vlm, video, time_embedding.",
              "Did you mean 'model'?"});
  expect_has(load_error("", {"--trian.seq_len=8"}), {"command line: unknown section [trian]", "Did you mean 'train'?"});
}

TEST(UnknownKeys, KeyWithValidKeysAndSuggestion) {
  const std::string message = load_error("[model]\ndimm = 512\n");
  expect_has(message, {"cfg.toml:2:8: unknown key 'dimm' in [model].", "Valid keys: dim, n_layers, n_heads, n_kv_heads",
                       "moe_router_z_loss_weight.", "Did you mean 'dim'?"});
  expect_has(load_error("", {"--optimizer.weight_decy=0.01"}),
             {"command line: unknown key 'weight_decy' in [optimizer]", "Did you mean 'weight_decay'?"});
}

TEST(UnknownKeys, NoSuggestionForAFarName) {
  const std::string message = load_error("[train]\nxyzzy_plugh = 1\n");
  expect_has(message, {"unknown key 'xyzzy_plugh' in [train]", "Valid keys: batch_size"});
  EXPECT_EQ(message.find("Did you mean"), std::string::npos) << message;
}

TEST(UnknownKeys, NestedTablesNameTheirPath) {
  expect_has(load_error("[checkpoint.dyn_ckpt_window]\nstpo = 5\n"),
             {"unknown key 'stpo' in [checkpoint.dyn_ckpt_window]. Valid keys: start, stop, strategy.",
              "Did you mean 'stop'?"});
  expect_has(load_error("[[data.datasets]]\npath = \"a\"\nwieght = 2.0\n"),
             {"cfg.toml:3:10: unknown key 'wieght' in [data.datasets[0]]", "Did you mean 'weight'?"});
}

TEST(UnknownKeys, KeyOfAnotherSectionNamesItsSection) {
  expect_has(load_error("[train]\nlr = 1e-3\n"),
             {"cfg.toml:2:6: unknown key 'lr' in [train]: it belongs to [optimizer] (lr: peak learning rate).",
              "Move it there (on the command line, e.g. --optimizer.lr=VALUE).", "Valid keys: batch_size"});
  expect_has(load_error("", {"--train.lr=1e-3"}),
             {"command line: unknown key 'lr' in [train]: it belongs to [optimizer]", "--optimizer.lr=VALUE"});
  // A key that several other sections have names each of them.
  expect_has(load_error("[metrics]\ninterval = 5\n"),
             {"unknown key 'interval' in [metrics]: it belongs to [eval] (interval: steps between evaluations) or "
              "[checkpoint] (interval: steps between checkpoints)."});
}

TEST(UnknownKeys, SectionMustBeATable) {
  expect_has(load_error("model = 5\n"), {"'model' must be a table ([model] section), not a int"});
}

// ---- keys declared by plugins --------------------------------------------------------------

config::Catalog plugin_catalog() {
  auto key = [](const char* name, const char* type, const char* def, const char* owner) {
    return config::plugin_key_spec(name, type, def, "test key", owner);
  };
  return base_catalog({
      {"optimizer", "lion", "2.0.0", "libthird_party_lion.so",
       {key("lion_beta3", "float", "0.5", "optimizer 'lion'"), key("lion_sign_eps", "float", "", "optimizer 'lion'")}},
      {"optimizer", "sgd", "1.0.0", "libsgd.so",
       {key("momentum", "float", "0.9", "optimizer 'sgd'"), key("nesterov", "bool", "false", "optimizer 'sgd'")}},
      {"hook", "ema", "1.0.0", "libema.so", {key("ema_decay", "float", "0.999", "hook 'ema'")}},
      {"hook", "spike_guard", "1.0.0", "libspike.so", {key("spike_factors", "int_list", "[2, 4]", "hook 'spike_guard'")}},
  });
}

TEST(PluginKeys, AcceptedInTheirSectionWhenSelected) {
  const auto job = load("[optimizer]\nname = \"lion\"\nlion_beta3 = 0.7\n", {}, plugin_catalog());
  EXPECT_DOUBLE_EQ(at(job, "optimizer", "lion_beta3").f, 0.7);
  EXPECT_TRUE(at(job, "optimizer", "lion_sign_eps").is_null());  // declared without a default: nullable
  // The plugin's default applies when the key is not given; its own keys follow the core keys.
  const auto defaults = load("[optimizer]\nname = \"sgd\"\n", {}, plugin_catalog());
  EXPECT_DOUBLE_EQ(at(defaults, "optimizer", "momentum").f, 0.9);
  EXPECT_FALSE(at(defaults, "optimizer", "nesterov").b);
  EXPECT_EQ(defaults.tree.find("optimizer")->table.back().first, "nesterov");
  // Overrides reach plugin keys like core ones.
  const auto cli = load("", {"--optimizer.name=sgd", "--optimizer.nesterov=True", "--optimizer.momentum=0.5"},
                        plugin_catalog());
  EXPECT_TRUE(at(cli, "optimizer", "nesterov").b);
  EXPECT_DOUBLE_EQ(at(cli, "optimizer", "momentum").f, 0.5);
}

TEST(PluginKeys, KeysOfEverySelectedHook) {
  const auto job = load("[train]\nhooks = [\"ema\", \"spike_guard\"]\nema_decay = 0.99\n", {}, plugin_catalog());
  EXPECT_DOUBLE_EQ(at(job, "train", "ema_decay").f, 0.99);
  EXPECT_EQ(at(job, "train", "spike_factors").to_toml(), "[2, 4]");
  // A hook listed twice contributes its keys once.
  EXPECT_NO_THROW(load("[train]\nhooks = [\"ema\", \"ema\"]\n", {}, plugin_catalog()));
}

TEST(PluginKeys, TypoCaughtByNameWithSuggestion) {
  expect_has(load_error("[optimizer]\nname = \"lion\"\nlion_bta3 = 0.7\n", {}, plugin_catalog()),
             {"cfg.toml:3:13: unknown key 'lion_bta3' in [optimizer].", "lion_beta3, lion_sign_eps.",
              "Did you mean 'lion_beta3'?"});
}

TEST(PluginKeys, KeyOfANonSelectedComponentNamesIt) {
  expect_has(load_error("[optimizer]\nname = \"lion\"\nmomentum = 0.8\n", {}, plugin_catalog()),
             {"unknown key 'momentum' in [optimizer]: it is accepted by optimizer 'sgd' (libsgd.so), which this "
              "config does not select (set [optimizer] name = \"sgd\" to use it)"});
  expect_has(load_error("[train]\nema_decay = 0.9\n", {}, plugin_catalog()),
             {"accepted by hook 'ema' (libema.so)", "add \"ema\" to [train] hooks to use it"});
  // A key declared for another section gets no such hint there.
  const std::string message = load_error("[model]\nmomentum = 0.8\n", {}, plugin_catalog());
  EXPECT_EQ(message.find("accepted by"), std::string::npos) << message;
}

TEST(PluginKeys, TypeErrorsNameTheKey) {
  expect_has(load_error("[optimizer]\nname = \"lion\"\nlion_beta3 = \"high\"\n", {}, plugin_catalog()),
             {"cfg.toml:3:14: [optimizer] lion_beta3 = \"high\": expected a number"});
  expect_has(load_error("[train]\nhooks = [\"spike_guard\"]\nspike_factors = [2, 2.5]\n", {}, plugin_catalog()),
             {"[train] spike_factors[1] = 2.5: expected an integer"});
}

TEST(PluginKeys, SelectedComponentMustBeLoaded) {
  expect_has(load_error("[optimizer]\nname = \"adamww\"\n", {}, plugin_catalog()),
             {"cfg.toml:2:8: [optimizer] name = \"adamww\": no optimizer 'adamww' in the loaded plugins.",
              "adamw (libkforge_optimizers.so 1.0.0)", "Did you mean 'adamw'?"});
  expect_has(load_error("", {}, {}), {"default: [model] model_type = \"transformer\": no model 'transformer'",
                                      "(none; check --plugin-dir)"});
}

// ---- components selected by an enabling key (enabled_by) --------------------------------------

config::Catalog enabled_catalog() {
  config::ComponentKeys tb{
      "metric_backend",
      "tensorboard",
      "1.0.0",
      "libkforge_metrics.so",
      {config::plugin_key_spec("tb_flush_secs", "int", "5", "test key", "metric_backend 'tensorboard'")},
      "enable_tensorboard"};
  return base_catalog({tb});
}

std::vector<std::string> backends_of(const config::JobConfig& job) {
  std::vector<std::string> names;
  for (const config::Value& v : at(job, "metrics", "backends").list) names.push_back(v.s);
  return names;
}

TEST(EnablingKeys, TrueAddsTheComponentToTheResolvedListWithItsKeys) {
  const auto job = load("[metrics]\nenable_tensorboard = true\ntb_flush_secs = 9\n", {}, enabled_catalog());
  EXPECT_EQ(backends_of(job), (std::vector<std::string>{"console", "jsonl", "tensorboard"}));
  EXPECT_EQ(at(job, "metrics", "tb_flush_secs").i, 9);
  // Listed by name as well: once in the list.
  const auto both = load("[metrics]\nenable_tensorboard = true\nbackends = [\"tensorboard\"]\n", {}, enabled_catalog());
  EXPECT_EQ(backends_of(both), (std::vector<std::string>{"tensorboard"}));
  // On the command line too.
  const auto cli = load("", {"--metrics.enable_tensorboard=true"}, enabled_catalog());
  EXPECT_EQ(backends_of(cli), (std::vector<std::string>{"console", "jsonl", "tensorboard"}));
}

TEST(EnablingKeys, FalseOrAbsentSelectsNothingAndItsKeysAreUnknown) {
  const auto job = load("[metrics]\nenable_tensorboard = false\n", {}, enabled_catalog());
  EXPECT_EQ(backends_of(job), (std::vector<std::string>{"console", "jsonl"}));
  expect_has(load_error("[metrics]\ntb_flush_secs = 9\n", {}, enabled_catalog()),
             {"unknown key 'tb_flush_secs' in [metrics]", "metric_backend 'tensorboard'"});
}

TEST(EnablingKeys, TrueWithNoComponentAnsweringIsAnErrorNamingTheKey) {
  expect_has(load_error("[metrics]\nenable_tensorboard = true\n"),
             {"cfg.toml:2:", "[metrics] enable_tensorboard = true, but no loaded plugin component is enabled by it",
              "check --plugin-dir"});
}

TEST(PluginKeys, ClashWithACoreKeyIsRefused) {
  const config::Catalog clash = base_catalog(
      {{"optimizer", "bad", "1.0.0", "libbad.so", {config::plugin_key_spec("lr", "float", "1.0", "", "optimizer 'bad'")}}});
  expect_has(load_error("[optimizer]\nname = \"bad\"\n", {}, clash),
             {"optimizer 'bad' (libbad.so) declares key 'lr' in [optimizer], which kforge already defines"});
}

// A component's section keys (section_key, KFORGE_KEY_FLAG_IN_SECTION) are its section's whatever is selected,
// checked by their declared range (each end excluded by a '<'); its other keys stay its own.
config::Catalog section_key_catalog() {
  config::ComponentKeys polyak{"optimizer", "polyak", "1.0.0", "libpolyak.so",
                               {config::plugin_key_spec("polyak_only", "int", "1", "", "optimizer 'polyak'")}};
  config::DeclaredKey beta{"polyak_beta", "float", "0.5", "averaging weight"};
  beta.allowed = "0<..<1";
  polyak.section_keys.push_back(config::declared_key_spec(beta, "optimizer 'polyak'"));
  return base_catalog({polyak});
}

TEST(PluginKeys, SectionKeysWhateverIsSelected) {
  const auto job = load("[optimizer]\nname = \"adamw\"\npolyak_beta = 0.25\n", {}, section_key_catalog());
  EXPECT_DOUBLE_EQ(at(job, "optimizer", "polyak_beta").f, 0.25);
  EXPECT_DOUBLE_EQ(at(load("", {}, section_key_catalog()), "optimizer", "polyak_beta").f, 0.5);
  expect_has(load_error("", {"--optimizer.polyak_beta=1"}, section_key_catalog()),
             {"command line: [optimizer] polyak_beta = 1.0: must be in (0, 1)"});
  expect_has(load_error("", {"--optimizer.polyak_beta=0"}, section_key_catalog()),
             {"command line: [optimizer] polyak_beta = 0.0: must be in (0, 1)"});
  expect_has(load_error("[optimizer]\npolyak_only = 2\n", {}, section_key_catalog()),
             {"unknown key 'polyak_only' in [optimizer]", "set [optimizer] name = \"polyak\" to use it"});
  // Selected, it reads them as any of its keys.
  const auto selected = load("[optimizer]\nname = \"polyak\"\npolyak_only = 2\n", {}, section_key_catalog());
  EXPECT_EQ(at(selected, "optimizer", "polyak_only").i, 2);
  EXPECT_DOUBLE_EQ(at(selected, "optimizer", "polyak_beta").f, 0.5);
}

// ---- type errors name their source ----------------------------------------------------------

TEST(TypeErrors, FileValuesNameFileLineAndColumn) {
  expect_has(load_error("[model]\ndim = \"big\"\n"), {"cfg.toml:2:7: [model] dim = \"big\": expected an integer"});
  expect_has(load_error("[model]\n\ndim = 4096.5\n"), {"cfg.toml:3:7: [model] dim = 4096.5: expected an integer"});
  expect_has(load_error("[train]\ncompile_model = 1\n"),
             {"cfg.toml:2:17: [train] compile_model = 1: expected a boolean (true or false)"});
  expect_has(load_error("[optimizer]\nbetas = [0.9, \"x\"]\n"), {"[optimizer] betas[1] = \"x\": expected a number"});
  expect_has(load_error("[data]\nanneal_weights = [1, 2]\n"),
             {"[data] anneal_weights = [1, 2]: expected a table of name = number"});
  expect_has(load_error("[checkpoint]\ndyn_ckpt_window = 5\n"), {"[checkpoint] dyn_ckpt_window = 5: expected a table"});
  expect_has(load_error("[data]\ndatasets = [1]\n"), {"[data.datasets[0]] = 1: expected a table"});
}

TEST(TypeErrors, OverridesNameTheCommandLine) {
  expect_has(load_error("", {"--model.dim=big"}), {"command line: [model] dim = \"big\": expected an integer"});
  expect_has(load_error("", {"--train.compile_model=maybe"}),
             {"command line: [train] compile_model = \"maybe\": expected a boolean"});
  expect_has(load_error("", {"--model.dim=None"}), {"command line: [model] dim = None: expected an integer"});
  expect_has(load_error("", {"--train.mixed_precision=bf8"}),
             {"command line: [train] mixed_precision = \"bf8\": allowed values are bf16, fp16, fp32, fp8"});
}

TEST(TypeErrors, DateValuesAreRejectedWithPosition) {
  expect_has(load_error("[checkpoint]\ndir = 2024-01-01\n"), {"cfg.toml:2:7", "date/time is not a valid config value"});
}

// ---- malformed TOML and files -----------------------------------------------------------------

TEST(TomlFile, MalformedTomlGivesTheParserPosition) {
  expect_has(load_error("[model]\ndim = = 5\n"), {"cfg.toml:2:", "malformed TOML"});
  expect_has(load_error("[train\nseq_len = 8\n"), {"cfg.toml:1:", "malformed TOML"});
  expect_has(load_error("[model]\nname = \"unterminated\n"), {"cfg.toml:2:", "malformed TOML"});
  expect_has(load_error("[model]\ndim = 1\ndim = 2\n"), {"cfg.toml:3:", "malformed TOML"});
}

TEST(TomlFile, MissingFileIsNamed) {
  try {
    config::load_job_config("/nonexistent/kforge/cfg.toml", {}, base_catalog());
    FAIL() << "no error";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"cannot read config file '/nonexistent/kforge/cfg.toml': no such file"});
  }
}

TEST(TomlFile, NoFileMeansDefaultsPlusOverrides) {
  const auto job = config::load_job_config("", {"--train.max_steps=7"}, base_catalog());
  EXPECT_EQ(job.train.max_steps, 7);
}

// ---- round trip -----------------------------------------------------------------------------

void expect_round_trip(const config::JobConfig& job) {
  const std::string text = job.to_toml();
  const auto path = temp_dir("roundtrip") / "resolved.toml";
  std::ofstream(path) << text;
  config::JobConfig again;
  ASSERT_NO_THROW(again = config::load_job_config(path, {}, base_catalog())) << text;
  std::string where;
  EXPECT_TRUE(same_tree(job.tree, again.tree, &where)) << where << "\n" << text;
}

TEST(RoundTrip, DefaultsPrintAsTomlThatResolvesToTheSameTree) {
  expect_round_trip(load(""));
}

TEST(RoundTrip, EveryKindOfValue) {
  const auto job = load(
      "[model]\nn_kv_heads = 8\nnorm_eps = 1e-6\nrope_theta = 500000.0\n"
      "[train]\nhooks = []\ndata_seed = 7\n"
      "[optimizer]\nbetas = [0.8, 0.99]\nlr = 3e-4\n"
      "[data]\nanneal_weights = { \"web text\" = 0.25, code = 0.75 }\n"
      "[[data.datasets]]\npath = \"/data/a \\\"quoted\\\" \\\\ dir\"\nweight = 2.0\nname = \"a\"\n"
      "[[data.datasets]]\nhf_name = \"wikitext\"\n"
      "[[data.phases]]\nstart_step = 10\ndataset_weights = { a = 0.5 }\n"
      "[[data.phases]]\nstart_step = 20\nlr_scale = 0.1\n"
      "[checkpoint]\nload_path = \"ckpt/step_5\"\nexclude_from_loading = [\"optimizer\"]\n"
      "[checkpoint.dyn_ckpt_window]\nstart = 4\nstop = 64\n"
      "[vision_encoder]\nnum_tokens = 16\n"
      "[vlm]\narch = \"moma\"\nmoma_experts_per_modality = { image = 2, text = 3 }\n"
      "[[vlm.freeze_schedule]]\nstart_step = 100\n[[vlm.freeze_schedule.specs]]\nmodule = \"adapter\"\nfrozen = false\n"
      "[video]\nmax_frames = 8\nfps = 1.5\n",
      {"--metrics.backends=console", "--scheduler.decay_steps=100"});
  expect_round_trip(job);
}

TEST(RoundTrip, PrintedTextIsValidToml) {
  const auto job = load("[checkpoint.dyn_ckpt_window]\n", {"--checkpoint.dir=/tmp/a b"});
  const config::Value parsed = config::read_toml_string(job.to_toml(), "printed");
  EXPECT_EQ(parsed.find("checkpoint")->find("dir")->s, "/tmp/a b");
  EXPECT_EQ(parsed.find("checkpoint")->find("dyn_ckpt_window")->find("stop")->i, 512);
  // None values are left out (TOML has no null) and come back as None.
  EXPECT_EQ(parsed.find("model")->find("n_kv_heads"), nullptr);
}

}  // namespace
}  // namespace kforge::test
