// The host knows no built-in component by name: no source file of core/ spells the name of a component of the
// built-in plugins (taken from their declarations, as `kforge list-plugins` lists them) as a string literal, except
// the occurrences listed here, which the rest of issue 54 part 1 removes (the list must shrink with them: a listed
// occurrence that is gone fails too).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

// Names that are also values of other keys or formats, which a literal cannot tell apart: [train]
// activation_checkpointing "none", [model] moe_bias_schedule "constant", [scheduler] wsd_decay_type "linear",
// prepare-data's "jsonl" input.
const std::set<std::string> kAlsoOtherValues = {"none", "constant", "linear", "jsonl"};

// file (under core/) -> the built-in names it still spells, and why.
const std::map<std::string, std::set<std::string>> kRemaining = {
    // The selectors' defaults (a component declaring itself its kind's default would replace them).
    {"config/schema_training.cpp", {"adamw", "cosine", "cross_entropy"}},
    {"config/schema_model.cpp", {"softmax_topk", "transformer"}},
    {"config/schema_data.cpp", {"memmap"}},
    {"config/schema_runtime.cpp", {"1f1b", "console"}},
    {"config/schema_multimodal.cpp", {"mlp_2layer", "random", "uniform", "webvid"}},
    // [vlm]'s selector defaults, and the base module alias of the text model (named after the part, which is also
    // the built-in model's name).
    {"config/schema_vlm.cpp", {"image_text", "joint_decoder", "transformer"}},
    // kforge convert --from dcp carries KempnerForge's AdamW moments only (onto the built-in optimizer's state).
    {"interop/dcp_import.cpp", {"adamw"}},
    // The Hugging Face architecture's router (to one model-config reader shared with plugins/models).
    {"interop/hf_architecture.cpp", {"softmax_topk"}},
};

std::set<std::string> builtin_component_names() {
  const std::unique_ptr<plugins::PluginHost> host = load_builtin_plugins();
  std::set<std::string> names;
  for (const plugins::PluginFile& f : host->set.files()) {
    EXPECT_TRUE(f.ok) << f.error;
    for (const plugins::ComponentMeta& c : f.components) {
      if (kAlsoOtherValues.count(c.name) == 0) names.insert(c.name);
    }
  }
  return names;
}

TEST(ComponentNames, NoCoreSourceSpellsABuiltInComponentOutsideTheRemainingList) {
  const std::set<std::string> names = builtin_component_names();
  ASSERT_GT(names.size(), 20u);  // every built-in plugin loaded
  const fs::path core = fs::path(KFORGE_SOURCE_DIR) / "core";
  std::map<std::string, std::set<std::string>> found;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(core)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    std::ostringstream text;
    text << std::ifstream(e.path()).rdbuf();
    for (const std::string& name : names) {
      if (text.str().find("\"" + name + "\"") != std::string::npos) {
        found[fs::relative(e.path(), core).string()].insert(name);
      }
    }
  }
  for (const auto& [file, spelled] : found) {
    const auto expected = kRemaining.find(file);
    for (const std::string& name : spelled) {
      EXPECT_TRUE(expected != kRemaining.end() && expected->second.count(name) == 1)
          << "core/" << file << " spells the built-in component \"" << name
          << "\": the host must know components only through their plugins' declarations";
    }
  }
  for (const auto& [file, spelled] : kRemaining) {
    for (const std::string& name : spelled) {
      EXPECT_TRUE(found.count(file) == 1 && found.at(file).count(name) == 1)
          << "core/" << file << " no longer spells \"" << name << "\": remove it from kRemaining";
    }
  }
}

}  // namespace
}  // namespace kforge::test
