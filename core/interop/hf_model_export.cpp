// Export: names mapped, packed experts unpacked, weights cast and sharded, configs and tokenizer written.
//
// RoPE needs no q/k permutation: kforge's rotary embedding (plugins/common/transformer/rope.cpp) pairs dims i
// and i + head_dim/2 (rotate-half), which is Hugging Face Llama's layout, so q_proj/k_proj rows are
// written as they are (the oracle test of tests/core/interop checks the logits through HF's rotate_half).
#include "interop/hf_model_export.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <regex>

#include "checkpoint/durable_file.h"
#include "interop/hf_architecture.h"
#include "interop/hf_names.h"
#include "interop/hf_tokenizer.h"
#include "interop/llama_layout.h"
#include "kforge/sdk/error.h"

namespace kforge::interop {
namespace fs = std::filesystem;
namespace {

at::ScalarType export_scalar_type(const std::string& dtype) {
  if (dtype == "float32") return at::kFloat;
  if (dtype == "bfloat16") return at::kBFloat16;
  if (dtype == "float16") return at::kHalf;
  throw sdk::ConfigError(fmt::format("export dtype '{}' is not one of float32, bfloat16, float16", dtype));
}

// Packed experts ("layers.N.mlp.{gate_w,up_w,down_w}", (E, in, out)) as per-expert Linear weights (out, in).
checkpoint::TensorMap export_unpack_experts(const checkpoint::TensorMap& model) {
  static const std::regex packed(R"(layers\.([0-9]+)\.mlp\.(gate_w|up_w|down_w))");
  checkpoint::TensorMap out;
  for (const auto& [name, t] : model) {
    std::smatch m;
    if (!std::regex_match(name, m, packed)) {
      out.emplace(name, t);
      continue;
    }
    const std::string proj = m[2] == "gate_w" ? "gate_proj" : m[2] == "up_w" ? "up_proj" : "down_proj";
    for (int64_t e = 0; e < t.size(0); ++e) {
      out.emplace(fmt::format("layers.{}.mlp.experts.{}.{}.weight", m[1].str(), e, proj), t[e].t().contiguous());
    }
  }
  return out;
}

// HF files list tensors layer by layer: the embedding, layers 0..L-1, then the final norm and head.
int64_t export_layer_rank(const std::string& hf_name) {
  static const std::regex layer(R"(model\.layers\.([0-9]+)\..*)");
  std::smatch m;
  if (std::regex_match(hf_name, m, layer)) return std::stoll(m[1].str());
  return hf_name == "model.embed_tokens.weight" ? -1 : LLONG_MAX;
}

int64_t export_intermediate_size(const checkpoint::TensorMap& model) {
  for (const char* name : {"layers.0.mlp.gate_proj.weight", "layers.0.mlp.experts.0.gate_proj.weight"}) {
    if (model.count(name)) return model.at(name).size(0);
  }
  throw sdk::ConfigError("the checkpoint has no layers.0 SwiGLU gate_proj weight to read the MLP width from");
}

}  // namespace

void export_hf(const plugins::Registry& registry, const config::JobConfig& job, const checkpoint::TensorMap& model,
               const fs::path& out, const ExportOptions& options) {
  require_llama_layout(registry, job);
  const auto model_view = job.view("model");
  const checkpoint::TensorMap unpacked = export_unpack_experts(model);
  const HfArchitecture arch = architecture_of_model(model_view, export_intermediate_size(unpacked));
  const std::string dtype = options.dtype.empty() ? job.view("checkpoint").get_string("export_dtype") : options.dtype;
  const at::ScalarType type = export_scalar_type(dtype);

  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& [name, t] : unpacked) {
    const std::optional<std::string> hf = hf_name_of(name);
    if (!hf) {
      throw sdk::ConfigError(
          fmt::format("tensor '{}' of the checkpoint has no Hugging Face Llama/Mixtral name; nothing was "
                      "exported",
                      name));
    }
    tensors.emplace_back(*hf, t.to(type).contiguous());
  }
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) {
    return std::make_pair(export_layer_rank(a.first), a.first) < std::make_pair(export_layer_rank(b.first), b.first);
  });

  std::error_code ec;
  if (fs::exists(out) && !fs::is_empty(out, ec)) {
    throw sdk::ConfigError(
        fmt::format("{}: exists and is not empty; choose a new directory for the export", out.string()));
  }
  checkpoint::make_directories(out);
  options.progress(fmt::format("exporting {} tensors as {} ({}) in {}", tensors.size(),
                               arch.moe() ? "MixtralForCausalLM" : "LlamaForCausalLM", dtype, out.string()));
  write_hf_weights(out, tensors, options.max_shard_bytes, options.progress);

  SpecialTokens special;
  if (job.data.tokenizer_path.empty()) {
    options.progress(
        "the checkpoint's config has no data.tokenizer_path: no tokenizer files written (copy the "
        "tokenizer into the directory yourself)");
  } else {
    special = export_tokenizer(job.data.tokenizer_path, out, arch.vocab_size, arch.max_seq_len);
    options.progress(fmt::format("wrote {} (from {}) and tokenizer_config.json", (out / "tokenizer.model").string(),
                                 job.data.tokenizer_path));
  }
  checkpoint::write_durable(out / "config.json",
                            hf_config_json(arch, dtype, special.bos_id, special.eos_id).dump(2) + "\n");
  nlohmann::json generation = {{"_from_model_config", true}};
  if (special.bos_id) generation["bos_token_id"] = *special.bos_id;
  if (special.eos_id) generation["eos_token_id"] = *special.eos_id;
  checkpoint::write_durable(out / "generation_config.json", generation.dump(2) + "\n");
  checkpoint::sync_directory(out);
  options.progress(fmt::format("wrote {} and generation_config.json", (out / "config.json").string()));
}

}  // namespace kforge::interop
