// The component catalogue against KempnerForge's registry (reference §2): every shipped preset in
// configs/train/ passes `kforge run --dry-run` (a cluster preset with --world-size of its mesh), the presets together
// select every optimizer, scheduler and loss (and z-loss), and `kforge list-plugins --json` has every such name with a
// doc for every key.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "config/toml_reader.h"
#include "support/read_file.h"
#include "support/test_host.h"
#include "support/token_corpus.h"

namespace kforge::test {
namespace {

// KempnerForge's registry tables, by kind (kforge's "sgd" is an addition).
const std::map<std::string, std::vector<std::string>> kKempnerForgeNames = {
    {"optimizer", {"adamw", "lion", "schedule_free_adamw", "muon"}},
    {"scheduler", {"cosine", "linear", "wsd", "constant", "rex", "none"}},
    {"loss", {"cross_entropy", "chunked_cross_entropy"}},
    {"router", {"softmax_topk", "sigmoid_topk"}},
    {"modality_strategy", {"joint_decoder", "cross_attention", "mot", "moma"}},
};

// Components with no key of their own: the "none" scheduler, the joint decoder (only [vlm]'s base keys).
bool has_no_keys(const std::string& name) { return name == "none" || name == "joint_decoder"; }

std::vector<std::filesystem::path> presets() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(KFORGE_SOURCE_DIR) / "configs/train")) {
    if (entry.path().extension() == ".toml") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The ranks a preset's [distributed] mesh spans (a cluster preset's, such as 7b_12gpu_tp4's 12): its dimensions'
// product, dp_shard = -1 (auto) counting 1.
int world_size_of(const std::filesystem::path& preset) {
  const config::Value tree = config::read_toml_string(read_file(preset.string()), preset.string());
  const config::Value* d = tree.find("distributed");
  int64_t world = 1;
  for (const char* key : {"dp_replicate", "dp_shard", "tp", "pp", "cp", "ep"}) {
    const config::Value* v = d != nullptr ? d->find(key) : nullptr;
    if (v != nullptr && v->i > 0) world *= v->i;
  }
  return static_cast<int>(world);
}

// `kforge <args>` with stdout only in *out; the exit status.
int kforge_stdout(const std::string& args, std::string* out) {
  return run_command("'" + std::string(KFORGE_BIN) + "' " + args + " 2>/dev/null", out);
}

TEST(Presets, EveryPresetPassesDryRunAndTogetherTheyCoverEveryOptimizerSchedulerLossAndRouter) {
  const auto files = presets();
  ASSERT_GE(files.size(), 5u) << "configs/train/ has the debug presets";
  // All dry runs at once (each mostly waits on loading LibTorch and the plugins): <dir>/<i>.{out,err,rc}.
  const auto dir = temp_dir("presets");
  // The presets read data/moby (made by the quickstart): the dry run opens the data, so give it a corpus.
  // Enough tokens for a window of the cluster presets' seq_len 4096.
  const std::string data = write_token_corpus(dir / "data", 256, 3 * 4097).string();
  // hf_wikitext streams a local Hugging Face export: the dry run checks its files (in the hf_dataset_config folder).
  const std::filesystem::path exported = dir / "export";
  std::filesystem::create_directories(exported / "wikitext-103-raw-v1");
  std::ofstream(exported / "wikitext-103-raw-v1" / "train.jsonl") << "{\"text\": \"a document\"}\n";
  std::string command;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string stem = (dir / std::to_string(i)).string();
    // A video preset reads its clips from [video] data_root and refuses [data] dataset_path.
    const bool video = read_file(files[i].string()).find("\n[video]\n") != std::string::npos;
    const bool streamed = read_file(files[i].string()).find("\nhf_streaming = true\n") != std::string::npos;
    const std::string paths = video      ? ""
                              : streamed ? " --data.hf_dataset_name='" + exported.string() + "'"
                                         : " --data.dataset_path='" + data + "' --eval.dataset_path='" + data + "'";
    const std::string world = " --world-size " + std::to_string(world_size_of(files[i]));
    command += "('" + std::string(KFORGE_BIN) + "' run '" + files[i].string() + "' --dry-run" + world + paths + " >'" +
               stem + ".out' 2>'" + stem + ".err'; echo $? >'" + stem + ".rc') & ";
  }
  ASSERT_EQ(run_command(command + "wait"), 0);
  std::map<std::string, std::set<std::string>> selected;  // kind -> names
  bool z_loss = false;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string stem = (dir / std::to_string(i)).string();
    const std::string output = read_file(stem + ".out");
    ASSERT_EQ(read_file(stem + ".rc"), "0\n") << files[i] << " fails kforge run --dry-run:\n"
                                              << read_file(stem + ".err");
    const config::Value tree = config::read_toml_string(output, files[i].string() + " --dry-run");
    selected["optimizer"].insert(tree.find("optimizer")->find("name")->s);
    selected["scheduler"].insert(tree.find("scheduler")->find("name")->s);
    selected["loss"].insert(tree.find("train")->find("loss_fn")->s);
    if (tree.find("model")->find("num_experts")->i > 0) selected["router"].insert(tree.find("model")->find("moe_router")->s);
    z_loss = z_loss || tree.find("train")->find("z_loss_weight")->f > 0;
  }
  for (const char* kind : {"optimizer", "scheduler", "loss", "router"}) {
    for (const std::string& name : kKempnerForgeNames.at(kind)) {
      EXPECT_EQ(selected[kind].count(name), 1u) << "no preset in configs/train/ selects " << kind << " '" << name << "'";
    }
  }
  EXPECT_TRUE(z_loss) << "no preset sets [train] z_loss_weight > 0";
}

TEST(Presets, ListPluginsJsonHasEveryKempnerForgeNameAndDocumentsEveryKey) {
  std::string out;
  ASSERT_EQ(kforge_stdout("list-plugins --json", &out), 0) << out;
  const nlohmann::json files = nlohmann::json::parse(out);
  std::map<std::string, std::map<std::string, nlohmann::json>> found;  // kind -> name -> component
  for (const auto& file : files) {
    if (file.at("status") != "ok") continue;
    for (const auto& c : file.at("components")) found[c.at("kind")][c.at("name")] = c;
  }
  for (const auto& [kind, names] : kKempnerForgeNames) {
    for (const std::string& name : names) {
      ASSERT_EQ(found[kind].count(name), 1u) << kind << " '" << name << "' is not listed";
      const nlohmann::json& c = found[kind][name];
      const size_t documented = c.at("config_keys").size() + c.at("core_keys").size();
      if (!has_no_keys(name)) EXPECT_GT(documented, 0u) << kind << " '" << name << "' documents no key";
    }
  }
  for (const auto& [kind, components] : found) {
    for (const auto& [name, c] : components) {
      EXPECT_FALSE(c.at("summary").get<std::string>().empty()) << kind << " '" << name << "' has no summary";
      for (const char* list : {"config_keys", "core_keys"}) {
        for (const auto& key : c.at(list)) {
          EXPECT_FALSE(key.at("doc").get<std::string>().empty())
              << kind << " '" << name << "' key '" << key.at("name").get<std::string>() << "' has no doc";
        }
      }
    }
  }
}

TEST(Presets, ListPluginsVerboseShowsTheSchedulerAndStrategyKeys) {
  std::string out;
  ASSERT_EQ(kforge_stdout("list-plugins -v", &out), 0) << out;
  for (const char* line :
       {"[scheduler] wsd_decay_type (string, default \"cosine\"): WSD decay shape",
        "[scheduler] rex_alpha (float, default 1.0): REX exponent", "[train] ce_chunk_size (int, default 0):",
        "[optimizer] muon_ns_steps (int, default 5):", "[vlm] cross_attention_every_n_layers (int, default 4):",
        "[vlm] moma_experts_per_modality (dict, default { image = 4, text = 4 }):"}) {
    EXPECT_NE(out.find(line), std::string::npos) << "missing '" << line << "' in:\n" << out;
  }
}

}  // namespace
}  // namespace kforge::test
