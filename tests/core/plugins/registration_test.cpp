// Registry::register_all over fixture plugins: accepted components and their keys, and files
// refused by their registration (throws, undeclared or unregistered components, duplicates).
#include <gtest/gtest.h>

#include "config/resolver.h"
#include "core/plugins/fixtures.h"
#include "kforge/sdk/error.h"
#include "plugins/catalog.h"
#include "plugins/registry.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

TEST(PluginRegistration, GoodPluginRegistersItsComponentsAndKeys) {
  auto set = discover_fixtures({"good"});
  plugins::Registry registry;
  registry.register_all(set);
  ASSERT_TRUE(set.all_ok()) << set.errors();

  const plugins::Entry* opt = registry.find("optimizer", "fixture_sgd");
  ASSERT_NE(opt, nullptr);
  EXPECT_EQ(opt->plugin, &set.files()[0]);
  EXPECT_TRUE(std::holds_alternative<sdk::OptimizerFactory>(opt->factory));
  const plugins::Entry* hook = registry.find("hook", "fixture_counter");
  ASSERT_NE(hook, nullptr);
  EXPECT_TRUE(std::holds_alternative<sdk::HookFactory>(hook->factory));
  EXPECT_EQ(registry.entries("optimizer").size(), 1u);

  // The declared keys reach the config catalog with their parsed defaults.
  const config::Catalog catalog = plugins::make_catalog(registry);
  ASSERT_EQ(catalog.size(), 2u);
  bool found = false;
  for (const auto& c : catalog) {
    if (c.name != "fixture_sgd") continue;
    found = true;
    EXPECT_EQ(c.kind, "optimizer");
    EXPECT_EQ(c.file, "libkforge_fixture_good.so");
    ASSERT_EQ(c.keys.size(), 1u);
    EXPECT_EQ(c.keys[0].name, "fixture_sgd_dampening");
  }
  EXPECT_TRUE(found);
}

TEST(PluginRegistration, UnknownNameSuggestsTheClosestOne) {
  auto set = discover_fixtures({"good"});
  plugins::Registry registry;
  registry.register_all(set);
  try {
    registry.get("optimizer", "fixture_sdg", "cfg.toml [optimizer] name");
    FAIL() << "expected sdk::ConfigError";
  } catch (const sdk::ConfigError& e) {
    expect_has(e.what(), {"cfg.toml [optimizer] name = \"fixture_sdg\"", "no optimizer 'fixture_sdg'",
                          "fixture_sgd (libkforge_fixture_good.so 0.1.0)", "Did you mean 'fixture_sgd'?"});
  }
}

TEST(PluginRegistration, RegisterAllThrowingRefusesTheFileWithTheMessage) {
  auto set = discover_fixtures({"register_throws", "good"});
  plugins::Registry registry;
  registry.register_all(set);
  const auto& f = set.files()[0];
  EXPECT_FALSE(f.ok);
  expect_has(f.error, {fixture_file("register_throws", "libkforge_fixture_register_throws.so") + ": ",
                       "register_all failed: fixture registration exploded", "Fix the plugin's registration function"});
  EXPECT_EQ(registry.find("hook", "throwing_hook"), nullptr);
  EXPECT_TRUE(set.files()[1].ok) << set.files()[1].error;
  EXPECT_NE(registry.find("optimizer", "fixture_sgd"), nullptr);
}

TEST(PluginRegistration, RegisteringAnUndeclaredComponentRefusesTheWholeFile) {
  auto set = discover_fixtures({"undeclared"});
  plugins::Registry registry;
  registry.register_all(set);
  const auto& f = set.files()[0];
  EXPECT_FALSE(f.ok);
  expect_has(f.error, {fixture_file("undeclared", "libkforge_fixture_undeclared.so") + ": ",
                       "registers hook 'sneaky_hook', which its component metadata does not declare",
                       "add it to the list passed to KFORGE_PLUGIN"});
  // What it registered before the failure is dropped too.
  EXPECT_EQ(registry.find("hook", "declared_hook"), nullptr);
  EXPECT_TRUE(registry.entries("hook").empty());
}

TEST(PluginRegistration, ADeclaredComponentThatIsNeverRegisteredRefusesTheFile) {
  auto set = discover_fixtures({"unregistered"});
  plugins::Registry registry;
  registry.register_all(set);
  const auto& f = set.files()[0];
  EXPECT_FALSE(f.ok);
  expect_has(f.error, {fixture_file("unregistered", "libkforge_fixture_unregistered.so") + ": ",
                       "declares hook 'forgotten_hook' in its metadata but register_all did not register it",
                       "Register it, or remove it from the component list"});
  EXPECT_EQ(registry.find("hook", "registered_hook"), nullptr);
}

TEST(PluginRegistration, DuplicatesKeepTheFirstFileOnly) {
  auto set = discover_fixtures({"duplicate"});
  plugins::Registry registry;
  registry.register_all(set);
  const plugins::Entry* e = registry.find("optimizer", "fixture_dup");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->plugin->path.filename(), "libkforge_fixture_dup_a.so");
  EXPECT_FALSE(set.files()[1].ok);
}

TEST(PluginRegistration, ADuplicateOfABuiltInNamesBothFiles) {
  // The test binary depends on the built-in plugins, so they are built: their absence is a failure.
  ASSERT_NE(load_builtin_plugins()->registry.find("optimizer", "adamw"), nullptr) << "no built-in optimizer 'adamw'";
  auto host = load_builtin_plugins({fixture_dir("duplicate_builtin").string()});
  const plugins::Entry* builtin = host->registry.find("optimizer", "adamw");
  ASSERT_NE(builtin, nullptr);
  const plugins::PluginFile& fixture = host->set.files().back();
  ASSERT_EQ(fixture.path.filename(), "libkforge_fixture_dup_builtin.so");
  EXPECT_FALSE(fixture.ok);
  expect_has(fixture.error,
             {fixture.path.string() + ": optimizer 'adamw' is already provided by " + builtin->plugin->path.string()});
  EXPECT_NE(builtin->plugin, &fixture);
}

}  // namespace
}  // namespace kforge::test
