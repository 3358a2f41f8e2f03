// Files refused while opening (before any plugin code runs): each message names the file, both
// values and what to do. A refused file never stops the others.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "core/plugins/fixtures.h"
#include "kforge/sdk/abi.h"
#include "plugins/plugin_file.h"
#include "support/expect_text.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

/// The one file of a fixture case, which must have been refused.
plugins::PluginFile refused_file(const std::string& fixture) {
  auto set = discover_fixtures({fixture});
  EXPECT_EQ(set.files().size(), 1u) << fixture;
  if (set.files().empty()) return {};
  EXPECT_FALSE(set.files()[0].ok) << fixture << " was accepted";
  EXPECT_FALSE(set.all_ok());
  EXPECT_EQ(set.errors(), set.files()[0].error + "\n");
  return set.files()[0];
}

const kforge_build_info kHost = plugins::host_build_info();

TEST(PluginRefusal, WrongAbiVersionNamesBothVersionsAndTheFix) {
  const auto f = refused_file("wrong_abi");
  EXPECT_EQ(f.abi_version, 99u);
  expect_has(f.error, {fixture_file("wrong_abi", "libkforge_wrong_abi.so") + ": ", "built against kforge plugin ABI 99",
                       "this kforge speaks ABI " + std::to_string(kHost.abi_version),
                       std::string("Rebuild the plugin against kforge-sdk ") + kHost.sdk_version,
                       "or use a kforge that speaks ABI 99"});
  EXPECT_TRUE(f.components.empty()) << "metadata of an incompatible ABI must not be read";
}

TEST(PluginRefusal, WrongTorchVersionNamesBothVersionsAndTheFix) {
  const auto f = refused_file("wrong_torch");
  expect_has(f.error, {fixture_file("wrong_torch", "libkforge_wrong_torch.so") + ": ", "built against LibTorch 2.3.0",
                       std::string("this kforge uses LibTorch ") + kHost.torch_version,
                       "rebuild the plugin against this LibTorch"});
  EXPECT_EQ(f.torch_version, "2.3.0");
}

TEST(PluginRefusal, WrongCxxAbiFlagNamesBothValuesAndTheFix) {
  const auto f = refused_file("wrong_cxx_abi");
  const int other = 1 - kHost.cxx11_abi;
  expect_has(f.error, {fixture_file("wrong_cxx_abi", "libkforge_wrong_cxx_abi.so") + ": ",
                       "_GLIBCXX_USE_CXX11_ABI=" + std::to_string(other),
                       "this kforge uses _GLIBCXX_USE_CXX11_ABI=" + std::to_string(kHost.cxx11_abi),
                       "rebuild the plugin with -D_GLIBCXX_USE_CXX11_ABI=" + std::to_string(kHost.cxx11_abi)});
}

TEST(PluginRefusal, CudaPluginOnACpuHostNamesBothAndTheFix) {
  ASSERT_EQ(kHost.cuda, 0) << "this test expects a CPU build of kforge";
  const auto f = refused_file("cuda");
  EXPECT_TRUE(f.cuda);
  expect_has(f.error,
             {fixture_file("cuda", "libkforge_cuda.so") + ": ", "built for a CUDA LibTorch",
              "this kforge is a CPU build", "Rebuild the plugin without KFORGE_WITH_CUDA", "-DKFORGE_WITH_CUDA=ON"});
}

TEST(PluginRefusal, MissingEntrySymbolAsksWhetherItIsAPlugin) {
  const auto f = refused_file("no_entry");
  expect_has(f.error, {fixture_file("no_entry", "libkforge_no_entry.so") + ": ", "no entry point 'kforge_plugin_entry'",
                       "built with KFORGE_PLUGIN(...)", "Remove it from the plugin directory or rebuild it"});
}

TEST(PluginRefusal, UndefinedSymbolIsCaughtAtLoadTimeAndDemangled) {
  const auto f = refused_file("undefined_symbol");
  expect_has(f.error, {fixture_file("undefined_symbol", "libkforge_undefined_symbol.so") + ": ",
                       "cannot load: undefined symbol kforge_fixture::function_that_does_not_exist(int)",
                       "rebuild it with find_package(kforge)"});
  EXPECT_EQ(f.library, nullptr);
}

TEST(PluginRefusal, ATextFileIsNotASharedLibrary) {
  const auto f = refused_file("not_so");
  expect_has(f.error, {fixture_file("not_so", "libkforge_notso.so") + ": not a loadable shared library",
                       "remove or rename this file"});
  // The dlerror text is quoted cleanly, without Boost's wrapper around it.
  EXPECT_EQ(f.error.find("Bad file descriptor"), std::string::npos) << f.error;
  EXPECT_EQ(f.error.find("dlerror"), std::string::npos) << f.error;
}

TEST(PluginRefusal, UnknownConfigKeyTypeNamesTheKeyAndTheAllowedTypes) {
  const auto f = refused_file("bad_key_type");
  expect_has(f.error, {fixture_file("bad_key_type", "libkforge_bad_key_type.so") + ": ",
                       "optimizer 'bad_key_optimizer' key 'fixture_bad_key': unknown config key type 'float32'",
                       "allowed: bool, int, float, string, int_list, float_list, string_list",
                       "Fix the component's kforge_config_key list"});
}

TEST(PluginRefusal, UnparsableConfigKeyDefaultNamesTheKeyAndTheValue) {
  const auto f = refused_file("bad_key_default");
  expect_has(f.error, {fixture_file("bad_key_default", "libkforge_bad_key_default.so") + ": ",
                       "optimizer 'bad_key_optimizer' declares key 'fixture_bad_key' with default 'fast'",
                       "not a TOML literal", "Fix the component's kforge_config_key list"});
}

TEST(PluginRefusal, AllowedValuesOnAKeyTypeWithoutThemNameTheKeyAndWhatTakesThem) {
  const auto f = refused_file("bad_key_allowed");
  expect_has(f.error, {fixture_file("bad_key_allowed", "libkforge_bad_key_allowed.so") + ": ",
                       "optimizer 'bad_key_optimizer' declares key 'fixture_bad_key' with allowed '0..1': only a "
                       "string key takes values",
                       "only an int or float key a range", "Fix the component's kforge_config_key list"});
}

TEST(PluginRefusal, UnknownKeyStatusNamesTheKeyAndTheStatuses) {
  const auto f = refused_file("bad_key_status");
  expect_has(f.error, {fixture_file("bad_key_status", "libkforge_bad_key_status.so") + ": ",
                       "optimizer 'bad_key_optimizer' declares key 'fixture_bad_key' with an unknown status (allowed: "
                       "KFORGE_KEY_HONOURED, KFORGE_KEY_REFUSED, KFORGE_KEY_NO_EFFECT)",
                       "Fix the component's kforge_config_key list"});
}

TEST(PluginRefusal, DefaultOutsideTheDeclaredRangeNamesTheKeyAndTheRange) {
  const auto f = refused_file("disallowed_key_default");
  expect_has(f.error, {fixture_file("disallowed_key_default", "libkforge_disallowed_key_default.so") + ": ",
                       "optimizer 'bad_key_optimizer' key 'fixture_bad_key'", "= 5: must be in [0, 1]",
                       "Fix the component's kforge_config_key list"});
}

TEST(PluginRefusal, UndefinedCapabilityFlagNamesTheFlagAndTheDefinedOnes) {
  const auto f = refused_file("bad_capability");
  expect_has(f.error, {fixture_file("bad_capability", "libkforge_bad_capability.so") + ": ",
                       "optimizer 'bad_traits_optimizer' declares capability flags 0x80000000, which plugin ABI " +
                           std::to_string(kHost.abi_version) +
                           fmt::format(" does not define (it defines {:#x})", KFORGE_CAP_ALL),
                       "Declare only KFORGE_CAP_* flags"});
}

TEST(PluginRefusal, UnknownCoreKeyNamesTheKeyTheSectionAndTheClosestKey) {
  const auto f = refused_file("bad_core_key");
  expect_has(f.error, {fixture_file("bad_core_key", "libkforge_bad_core_key.so") + ": ",
                       "optimizer 'bad_traits_optimizer' declares core key 'learning_rate', which [optimizer] "
                       "does not have.",
                       "Fix the component's reads(...) keys."});
}

TEST(PluginRefusal, UnknownKindNamesTheKindAndEveryKindOfTheTable) {
  const auto f = refused_file("bad_kind");
  expect_has(
      f.error,
      {fixture_file("bad_kind", "libkforge_bad_kind.so") +
       ": component 'bad_traits_optimizer' has unknown kind 'optimiser'. Allowed kinds: model, "
       "router, optimizer, scheduler, loss, dataset, hook, metric_backend, vision_encoder, adapter, "
       "modality_strategy, image_text_dataset, video_dataset, frame_sampler, time_embedding, pipeline_schedule."});
}

TEST(PluginRefusal, EnabledByOnAKindThatSelectsOneNamesTheSelector) {
  const auto f = refused_file("enabled_single_kind");
  expect_has(f.error, {fixture_file("enabled_single_kind", "libkforge_enabled_single_kind.so") + ": ",
                       "optimizer 'bad_traits_optimizer' declares enabled_by(\"enable_tensorboard\"), but a config "
                       "selects exactly one optimizer ([optimizer] name)",
                       "Fix the component's enabled_by(...)."});
}

TEST(PluginRefusal, EnabledByAKeyThatIsNotAnEnablingKeyNamesTheEnablingKeys) {
  const auto f = refused_file("enabled_by_plain_key");
  expect_has(f.error, {fixture_file("enabled_by_plain_key", "libkforge_enabled_by_plain_key.so") + ": ",
                       "metric_backend 'bad_traits_optimizer' declares enabled_by(\"enable_wandb\"), which is not an "
                       "enabling key of [metrics] (those are: enable_tensorboard)."});
}

TEST(PluginRefusal, HookPointsOnAComponentThatIsNotAModel) {
  const auto f = refused_file("hook_points_not_model");
  expect_has(f.error, {fixture_file("hook_points_not_model", "libkforge_hook_points_not_model.so") + ": ",
                       "optimizer 'bad_traits_optimizer' declares hook points, which only a model has."});
}

TEST(PluginRefusal, DuplicateKindAndNameNamesBothFiles) {
  auto set = discover_fixtures({"duplicate"});
  ASSERT_EQ(set.files().size(), 2u);
  const auto& first = set.files()[0];
  const auto& second = set.files()[1];
  EXPECT_TRUE(first.ok) << first.error;
  EXPECT_FALSE(second.ok);
  expect_has(second.error, {fixture_file("duplicate", "libkforge_fixture_dup_b.so") + ": optimizer 'fixture_dup'",
                            "already provided by " + fixture_file("duplicate", "libkforge_fixture_dup_a.so"),
                            "remove one of the files or rename the component"});
}

TEST(PluginRefusal, ADuplicateOfABuiltInIsTheFileRefusedWhateverTheDirectoryOrder) {
  // --plugin-dir directories come before the built-in one; the built-in keeps 'adamw' all the same.
  const std::filesystem::path builtin = std::filesystem::canonical(KFORGE_PLUGIN_DIR);
  auto set = plugins::PluginSet::discover({fixture_dir("duplicate_builtin"), builtin}, {builtin, false});
  const std::string newcomer = fixture_file("duplicate_builtin", "libkforge_fixture_dup_builtin.so");
  int refused = 0;
  for (const auto& f : set.files()) {
    if (f.path.string() != newcomer) {
      EXPECT_TRUE(f.ok) << f.error;
      continue;
    }
    ++refused;
    EXPECT_FALSE(f.ok);
    expect_has(f.error, {newcomer + ": optimizer 'adamw' is already provided by " + builtin.string() + "/libkforge_"});
  }
  EXPECT_EQ(refused, 1) << set.errors();
}

// A copy of a good plugin whose dynamic section names a needed library with a garbled byte, as a
// damaged file may: the loader's real reason is reported, not a bare "No such file or directory".
TEST(PluginRefusal, AnElfFileWithADamagedBodyIsNotALoadableSharedLibraryWithTheLoadersReason) {
  const std::filesystem::path dir = temp_dir("damaged_elf");
  const std::string good = read_file(fixture_dir("good") / "libkforge_fixture_good.so");
  const std::string needed = "libc10.so";
  ASSERT_NE(good.find(needed), std::string::npos) << "the good fixture no longer needs " << needed;
  std::string damaged = good;
  for (size_t at = damaged.find(needed); at != std::string::npos; at = damaged.find(needed, at + 1))
    damaged[at + 4] = '\x01';
  std::ofstream(dir / "libkforge_damaged.so", std::ios::binary) << damaged;
  auto set = plugins::PluginSet::discover({dir});
  ASSERT_EQ(set.files().size(), 1u);
  const auto& f = set.files()[0];
  EXPECT_FALSE(f.ok);
  expect_has(f.error, {(std::filesystem::canonical(dir) / "libkforge_damaged.so").string() +
                           ": not a loadable shared library: it needs the library 'libc\\x010.so",
                       "which the dynamic loader cannot find", "the file is damaged"});
  EXPECT_EQ(f.error.find('\x01'), std::string::npos) << "unprintable byte in: " << f.error;
  std::filesystem::remove_all(dir);
}

// Half a plugin, as an interrupted copy leaves it: dlopen would map pages past the end of the file
// and die of SIGBUS; the file is refused before it is opened.
TEST(PluginRefusal, ATruncatedPluginIsRefusedBeforeTheLoaderTouchesIt) {
  const std::filesystem::path dir = temp_dir("truncated_elf");
  const std::string good = read_file(fixture_dir("good") / "libkforge_fixture_good.so");
  std::ofstream(dir / "libkforge_truncated.so", std::ios::binary) << good.substr(0, good.size() / 2);
  auto set = plugins::PluginSet::discover({dir});
  ASSERT_EQ(set.files().size(), 1u);
  const auto& f = set.files()[0];
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.library, nullptr);
  expect_has(f.error, {(std::filesystem::canonical(dir) / "libkforge_truncated.so").string() +
                           ": not a loadable shared library: segment ",
                       "ends past the end of the file (" + std::to_string(good.size() / 2) + " bytes): it is truncated",
                       "Copy or rebuild the file again"});
  std::filesystem::remove_all(dir);
}

TEST(PluginRefusal, ABrokenFileDoesNotStopTheOthers) {
  auto set = discover_fixtures({"not_so", "wrong_abi", "no_entry", "undefined_symbol", "good", "cuda"});
  ASSERT_EQ(set.files().size(), 6u);
  int ok = 0;
  for (const auto& f : set.files()) ok += f.ok ? 1 : 0;
  EXPECT_EQ(ok, 1);
  EXPECT_TRUE(set.files()[4].ok) << set.files()[4].error;
  // errors(): one line per refused file, in order.
  const std::string errors = set.errors();
  EXPECT_EQ(std::count(errors.begin(), errors.end(), '\n'), 5);
  EXPECT_LT(errors.find("libkforge_notso.so"), errors.find("libkforge_wrong_abi.so"));
}

}  // namespace
}  // namespace kforge::test
