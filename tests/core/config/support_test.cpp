// Key support: every key of the schema says what kforge does with it, and check_support refuses
// the keys and sections this kforge does not implement (naming each, its file and line) and warns
// once per key that has no effect.
#include <gtest/gtest.h>

#include <functional>

#include "config/key_support.h"
#include "config/schema.h"
#include "config/support_check.h"
#include "config_helpers.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

using config::KeySupport;
using config::SectionSpec;
using config::Support;

// Calls `visit(table name, key)` for every key of `spec` and of the tables nested in it.
void walk(const SectionSpec& spec, const std::function<void(const SectionSpec&, const config::KeySpec&)>& visit) {
  for (const config::KeySpec& k : spec.keys) {
    visit(spec, k);
    if (k.sub != nullptr) walk(*k.sub, visit);
  }
}

TEST(KeySupport, EveryKeyOfTheSchemaHasADecisionAndEveryUnimplementedOneAReason) {
  size_t keys = 0;
  // The built-in components' own keys carry their decision in their declaration.
  for (const config::ComponentKeys& c : base_catalog()) {
    for (const config::KeySpec& k : c.keys) {
      ++keys;
      EXPECT_NE(k.support, Support::Unset) << c.kind << " '" << c.name << "' key " << k.name;
      if (k.support == Support::Refused || k.support == Support::NoEffect) {
        EXPECT_FALSE(k.why.empty()) << c.kind << " '" << c.name << "' key " << k.name << " says no reason";
      }
    }
  }
  for (const SectionSpec& section : config::core_schema()) {
    walk(section, [&](const SectionSpec& table, const config::KeySpec& k) {
      ++keys;
      const KeySupport s = config::key_support(table.name, k.name);
      EXPECT_NE(s.support, Support::Unset) << "[" << table.name << "] " << k.name
                                           << " has no entry in core/config/key_support.cpp";
      if (s.support == Support::Refused || s.support == Support::NoEffect) {
        EXPECT_FALSE(s.why.empty()) << "[" << table.name << "] " << k.name << " says no reason";
      }
    });
  }
  EXPECT_GT(keys, 150u);
}

TEST(KeySupport, UnknownKeysHaveNoDecisionAndTheMultimodalKeysAreHonoured) {
  EXPECT_EQ(config::key_support("model", "no_such_key").support, Support::Unset);
  EXPECT_EQ(config::key_support("optimizer", "lr").support, Support::Honoured);
  for (const char* key : {"max_frames", "fps", "dataset_type", "sampling_policy", "data_root", "prompt"}) {
    EXPECT_EQ(config::key_support("video", key).support, Support::Honoured) << key;
  }
  EXPECT_EQ(config::key_support("vlm", "arch").support, Support::Honoured);
  // An arch's own keys are its strategy's, which declares them honoured.
  size_t mot_keys = 0;
  for (const config::ComponentKeys& c : base_catalog()) {
    if (c.kind != "modality_strategy" || c.name != "mot") continue;
    for (const config::KeySpec& k : c.keys) {
      if (k.name != "mot_modalities" && k.name != "mot_warm_start_path") continue;
      ++mot_keys;
      EXPECT_EQ(k.support, Support::Honoured) << k.name;
    }
  }
  EXPECT_EQ(mot_keys, 2u);
}

// The message of the ConfigError check_support raises for the config; "" when it passes.
std::string refusal(const std::string& toml, const std::vector<std::string>& overrides = {}) {
  const config::JobConfig job = load(toml, overrides);
  try {
    config::check_support(job.tree, job.schema);
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  return "";
}

// The last keys kforge refused, a Hugging Face image-text dataset's columns (issue 60), are read now
// (plugins/common/image_text_io/arrow_image_text.h): KempnerForge's VLM configs pass.
TEST(Refused, TheImageTextDatasetColumnsAreHonoured) {
  EXPECT_EQ(config::key_support("data", "hf_dataset_image_field").support, Support::Honoured);
  EXPECT_EQ(config::key_support("data", "hf_dataset_prompt_field").support, Support::Honoured);
  EXPECT_EQ(refusal("[data]\nhf_dataset_image_field = \"img\"\nhf_dataset_prompt_field = \"prompt\"\n"), "");
}

TEST(Refused, DefaultsAndExplicitInertValuesPass) {
  EXPECT_EQ(refusal(""), "");
  // Expert parallelism is honoured (issue 22).
  EXPECT_EQ(refusal("[model]\nnum_experts = 4\n[distributed]\nep = 2\n"), "");
  // So is tensor parallelism (issue 17), and pipeline parallelism (issue 18).
  EXPECT_EQ(refusal("[distributed]\ntp = 2\n"), "");
  // And context parallelism (issue 58).
  EXPECT_EQ(refusal("[distributed]\ncp = 2\n"), "");
  EXPECT_EQ(refusal("[distributed]\npp = 4\npp_schedule = \"gpipe\"\npp_layer_split = [1, 1, 1, 1]\n"), "");
  // A joint-decoder vision-language run: its sections are honoured.
  EXPECT_EQ(refusal("[vision_encoder]\ntype = \"random\"\n[adapter]\ntype = \"linear\"\n[vlm]\nmax_text_len = 16\n"
                    "[data]\nhf_image_size = 32\nnum_workers = 2\n"),
            "");
  EXPECT_EQ(refusal("[train]\nactivation_checkpointing = \"none\"\n[distributed]\ntp = 1\npp_schedule = \"1f1b\"\n"
                    "[data]\npack_sequences = false\ndatasets = []\n"),
            "");
  // Local Hugging Face exports are read (through a token cache); hf_streaming = false asks for nothing.
  EXPECT_EQ(refusal("[data]\nhf_dataset_name = \"export\"\nhf_dataset_config = \"en\"\nhf_dataset_split = \"train\"\n"
                    "hf_dataset_text_field = \"content\"\nhf_streaming = false\n[eval]\nhf_dataset_name = \"export\"\n"),
            "");
  // And streamed (issue 58).
  EXPECT_EQ(refusal("[data]\nhf_dataset_name = \"export\"\nhf_streaming = true\nhf_streaming_shuffle_buffer = 100\n"),
            "");
}

std::vector<std::string> warnings(const std::string& toml, const std::vector<std::string>& overrides = {}) {
  const config::JobConfig job = load(toml, overrides);
  return config::check_support(job.tree, job.schema);
}

TEST(NoEffect, WarnsOncePerKeySetToAValueThatAsksForSomething) {
  const auto w = warnings(
      "[train]\ncompile_model = true\nnccl_health_check_interval = 100\n[data]\npin_memory = true\n"
      "[metrics]\nenable_wandb = true\nwandb_project = \"p\"\n",
      {"--distributed.backend=cpu:gloo"});
  // nccl_health_check_interval is honoured (core/dist/health_check.h): set, it does not warn.
  const std::vector<std::string> keys = {"[train] compile_model = true", "[data] pin_memory = true",
                                         "[metrics] enable_wandb = true", "[metrics] wandb_project = \"p\"",
                                         "[distributed] backend = \"cpu:gloo\""};
  ASSERT_EQ(w.size(), keys.size());
  for (const std::string& key : keys) {
    size_t found = 0;
    for (const std::string& line : w) {
      if (line.find(key) != std::string::npos) {
        ++found;
        EXPECT_NE(line.find("has no effect in this kforge"), std::string::npos) << line;
      }
    }
    EXPECT_EQ(found, 1u) << key;
  }
  for (const std::string& line : w) {  // W&B users are pointed at TensorBoard and wandb sync
    if (line.find("enable_wandb") != std::string::npos) {
      EXPECT_NE(line.find("wandb sync --sync-tensorboard"), std::string::npos) << line;
    }
  }
  EXPECT_NE(w.front().find("cfg.toml:2:17: [train] compile_model = true"), std::string::npos) << w.front();
}

TEST(NoEffect, DefaultsAndValuesThatAskForNothingDoNotWarn) {
  EXPECT_TRUE(warnings("").empty());
  EXPECT_TRUE(warnings("[train]\ncompile_model = false\n[data]\nnum_workers = 0\npin_memory = false\n"
                       "[metrics]\nenable_wandb = false\nenable_tensorboard = false\n")
                  .empty());
}

}  // namespace
}  // namespace kforge::test
