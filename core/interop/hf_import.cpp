// Import: config.json to a kforge [model], HF names to kforge FQNs, checked, saved as a checkpoint.
#include "interop/hf_import.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "checkpoint/checkpoint_manager.h"
#include "checkpoint/durable_file.h"
#include "config/job_config.h"
#include "interop/hf_architecture.h"
#include "interop/hf_names.h"
#include "interop/hf_tensor_shapes.h"
#include "interop/hf_weight_files.h"
#include "interop/llama_layout.h"
#include "kforge/sdk/error.h"
#include "plugins/catalog.h"
#include "plugins/components.h"
#include "train/plugin_manifest.h"

namespace kforge::interop {
namespace fs = std::filesystem;
namespace {

bool import_ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The kforge name of each HF tensor to import, by HF name; refuses a tensor kforge has no place for or of a dtype
// that is not a float weight.
std::map<std::string, std::string> import_names(const std::map<std::string, HfTensorInfo>& hf, const fs::path& dir,
                                                bool tied, const ImportOptions& options) {
  std::map<std::string, std::string> out;
  for (const auto& [name, item] : hf) {
    const std::optional<std::string> kforge = kforge_name_of(name);
    if (!kforge) {
      if (import_ends_with(name, ".rotary_emb.inv_freq"))
        continue;  // older HF files keep RoPE tables; kforge computes them
      throw sdk::ConfigError(
          fmt::format("{}: tensor '{}' has no counterpart in kforge's transformer; nothing was imported",
                      (dir / item.file).string(), name));
    }
    if (tied && *kforge == "output_head.proj.weight") {
      options.progress(fmt::format("tie_word_embeddings is true: '{}' in {} is ignored (the head is the embedding)",
                                   name, item.file));
      continue;
    }
    if (item.dtype != at::kFloat && item.dtype != at::kBFloat16 && item.dtype != at::kHalf) {
      throw sdk::ConfigError(fmt::format("{}: tensor '{}' is {}, not a float32, bfloat16 or float16 weight",
                                         (dir / item.file).string(), name, c10::toString(item.dtype)));
    }
    out.emplace(name, *kforge);
  }
  return out;
}

}  // namespace

fs::path import_hf(const fs::path& dir, const fs::path& out, const plugins::Registry& registry,
                   const ImportOptions& options) {
  std::error_code ec;
  if (fs::exists(out) && !fs::is_empty(out, ec)) {
    throw sdk::ConfigError(
        fmt::format("{}: exists and is not empty; choose a new directory for the checkpoint", out.string()));
  }
  const HfArchitecture arch = read_hf_config(dir / "config.json");
  options.progress(fmt::format("{}: {} with {} layers, hidden size {}{}", (dir / "config.json").string(),
                               arch.moe() ? "MixtralForCausalLM" : "LlamaForCausalLM", arch.n_layers, arch.dim,
                               arch.moe() ? fmt::format(", {} experts (top {})", arch.num_experts, arch.top_k) : ""));
  std::vector<std::string> overrides = model_overrides(arch);
  const bool has_tokenizer = fs::exists(dir / "tokenizer.model");
  if (has_tokenizer) overrides.push_back("--data.tokenizer_path=" + fs::absolute(out / "tokenizer.model").string());
  overrides.insert(overrides.end(), options.overrides.begin(), options.overrides.end());
  const config::JobConfig job = config::load_job_config("", overrides, plugins::make_catalog(registry));
  require_llama_layout(registry, job);
  // Every tensor of the model config.json describes must be in the files with its shape, and each file tensor must
  // be one of them: checked from the headers and the config's sizes before any tensor data is read or the model
  // (as large as the sizes say) is built.
  const std::map<std::string, HfTensorInfo> headers = read_hf_weight_headers(dir);
  const std::map<std::string, std::string> names = import_names(headers, dir, arch.tie_embeddings, options);
  std::map<std::string, HfTensorInfo> wanted;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [hf, kforge] : names) {
    wanted.emplace(hf, headers.at(hf));
    shapes.emplace(kforge, headers.at(hf).shape);
  }
  check_hf_tensor_shapes(arch, shapes, dir);
  checkpoint::TensorMap weights;
  for (const auto& [hf, item] : read_hf_weights(dir, wanted, options.progress)) {
    weights.emplace(names.at(hf), item.tensor.to(at::kFloat).contiguous());
  }
  const std::shared_ptr<sdk::Model> model = plugins::Components(registry, job).model();
  checkpoint::Snapshot s;
  auto take = [&](const std::string& name, const at::Tensor& like) {
    const auto it = weights.find(name);
    if (it == weights.end() || !it->second.sizes().equals(like.sizes())) {
      throw std::logic_error(fmt::format("kforge's transformer has tensor '{}' of shape {}, which interop/"
                                         "hf_tensor_shapes.cpp does not give it for config.json",
                                         name, c10::str(like.sizes())));
    }
    s.model.emplace(name, it->second);
  };
  for (const auto& item : model->named_parameters(true)) take(item.key(), item.value());
  for (const auto& item : model->named_buffers(true)) take(item.key(), item.value());
  if (s.model.size() != weights.size()) {
    throw std::logic_error(fmt::format("kforge's transformer has {} tensors where interop/hf_tensor_shapes.cpp "
                                       "expects {} for config.json",
                                       s.model.size(), weights.size()));
  }

  s.step = 0;
  s.tokens_seen = 0;
  s.train_state = {{"data", {{{"rank", 0}, {"epoch", 0}, {"batches_yielded", 0}}}},
                   {"nan", {{"consecutive", 0}, {"total", 0}}},
                   {"imported_from", fs::absolute(dir).string()},
                   {"weights_only", true}};  // the optimizer of a run started from it starts fresh
  s.config_toml = job.to_toml();
  s.plugins = train::plugin_manifest(registry, /*hashes=*/false);
  checkpoint::make_directories(out);
  if (has_tokenizer) {
    std::ifstream in(dir / "tokenizer.model", std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    checkpoint::write_durable(out / "tokenizer.model", bytes.str());
    options.progress(
        fmt::format("copied {} to {}", (dir / "tokenizer.model").string(), (out / "tokenizer.model").string()));
  } else {
    options.progress(
        fmt::format("{} has no tokenizer.model: the checkpoint's config has no data.tokenizer_path "
                    "(generate takes token ids, or set --data.tokenizer_path)",
                    dir.string()));
  }
  const fs::path step_dir = checkpoint::CheckpointManager(out, 0, [](int64_t) { return false; }).save(s);
  options.progress(
      fmt::format("wrote {} ({} tensors, float32, no optimizer state)", step_dir.string(), s.model.size()));
  return step_dir;
}

}  // namespace kforge::interop
