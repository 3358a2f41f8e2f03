// HfArchitecture: the model facts a Hugging Face Llama/Mixtral config.json and kforge's [model] share,
// read from either side (refusing what the other cannot express) and written to either side.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kforge::sdk {
class ConfigView;
}

namespace kforge::interop {

struct HfArchitecture {
  int64_t dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0;
  int64_t intermediate_size = 0;  ///< the SwiGLU width (of each expert for MoE)
  int64_t max_seq_len = 0;
  double norm_eps = 1e-5, rope_theta = 10000.0, init_std = 0.02;
  bool tie_embeddings = false;
  int64_t num_experts = 0;  ///< 0: dense (Llama); > 0: Mixtral
  int64_t top_k = 2;
  double router_aux_loss_coef = 0.01;
  bool moe() const { return num_experts > 0; }
};

/// The architecture of a llama_layout model from its resolved [model] section and its SwiGLU width.
/// Throws sdk::ConfigError naming the [model] key of anything Hugging Face Llama/Mixtral cannot
/// express with the same semantics (qk_norm, layernorm, GELU/ReLU MLPs, shared experts, the sigmoid
/// router, dense and MoE layers mixed, token dropping).
HfArchitecture architecture_of_model(const sdk::ConfigView& model, int64_t intermediate_size);

/// config.json of LlamaForCausalLM (dense) or MixtralForCausalLM (MoE), every field the model uses;
/// bos/eos ids when the tokenizer is known.
nlohmann::json hf_config_json(const HfArchitecture& arch, const std::string& torch_dtype, std::optional<int> bos_id,
                              std::optional<int> eos_id);

/// Reads a Hugging Face config.json (LlamaForCausalLM or MixtralForCausalLM, HF's defaults for
/// absent fields). Throws sdk::ConfigError naming the file and the field for another architecture, a
/// field of the wrong type, or a feature kforge's transformer does not have (rope_scaling,
/// attention/MLP biases, an activation other than silu, a sliding window, another head_dim).
HfArchitecture read_hf_config(const std::filesystem::path& file);

/// The [model] overrides ("--model.dim=64", ...) that build this architecture in kforge.
std::vector<std::string> model_overrides(const HfArchitecture& arch);

}  // namespace kforge::interop
