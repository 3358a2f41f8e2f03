// HfArchitecture: kforge [model] <-> Hugging Face config.json, with the refusals of each direction.
#include "interop/hf_architecture.h"

#include <fmt/format.h>

#include "interop/json_file.h"
#include "kforge/sdk/config_view.h"
#include "kforge/sdk/error.h"

namespace kforge::interop {
namespace {

constexpr const char* kLlama = "LlamaForCausalLM";
constexpr const char* kMixtral = "MixtralForCausalLM";

void arch_refuse_if(bool condition, const std::string& key, const std::string& value, const std::string& why) {
  if (condition) {
    throw sdk::ConfigError(
        fmt::format("[model] {} = {}: {}; Hugging Face Llama/Mixtral cannot express it, so the "
                    "checkpoint is not exported (it would load with different semantics)",
                    key, value, why));
  }
}

// A float override value that always reads back as a float ("10000.0", not "10000").
std::string arch_float_text(double v) {
  std::string text = fmt::format("{}", v);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

}  // namespace

HfArchitecture architecture_of_model(const sdk::ConfigView& m, int64_t intermediate_size) {
  arch_refuse_if(m.get_string("norm_type") != "rmsnorm", "norm_type", '"' + m.get_string("norm_type") + '"',
                 "Llama and Mixtral use RMSNorm");
  arch_refuse_if(m.get_string("activation") != "silu", "activation", '"' + m.get_string("activation") + '"',
                 "Llama and Mixtral MLPs are SwiGLU (silu)");
  arch_refuse_if(m.get_bool("qk_norm"), "qk_norm", "true", "Llama and Mixtral have no per-head query/key norm");
  HfArchitecture a;
  a.dim = m.get_int("dim");
  a.n_layers = m.get_int("n_layers");
  a.n_heads = m.get_int("n_heads");
  a.n_kv_heads = m.has("n_kv_heads") ? m.get_int("n_kv_heads") : a.n_heads;
  a.vocab_size = m.get_int("vocab_size");
  a.intermediate_size = intermediate_size;
  a.max_seq_len = m.get_int("max_seq_len");
  a.norm_eps = m.get_float("norm_eps");
  a.rope_theta = m.get_float("rope_theta");
  a.init_std = m.get_float("init_std");
  a.tie_embeddings = m.get_bool("tie_embeddings");
  a.num_experts = m.get_int("num_experts");
  if (a.moe()) {
    arch_refuse_if(m.get_int("moe_frequency") != 1, "moe_frequency", std::to_string(m.get_int("moe_frequency")),
                   "dense and MoE layers mixed (Mixtral makes every layer MoE)");
    arch_refuse_if(m.get_int("moe_shared_experts") > 0, "moe_shared_experts",
                   std::to_string(m.get_int("moe_shared_experts")), "Mixtral has no shared expert");
    arch_refuse_if(m.get_string("moe_router") != "softmax_topk", "moe_router", '"' + m.get_string("moe_router") + '"',
                   "Mixtral routes by softmax top-k without an expert bias");
    arch_refuse_if(m.get_float("moe_capacity_factor") > 0, "moe_capacity_factor",
                   arch_float_text(m.get_float("moe_capacity_factor")),
                   "kforge drops over-capacity tokens, Mixtral never does (pass --model.moe_capacity_factor=0 to "
                   "export it with Mixtral's no-drop routing)");
    a.top_k = m.get_int("moe_top_k");
    a.router_aux_loss_coef = m.get_float("moe_aux_loss_weight");
  }
  return a;
}

nlohmann::json hf_config_json(const HfArchitecture& a, const std::string& torch_dtype, std::optional<int> bos_id,
                              std::optional<int> eos_id) {
  nlohmann::json c = {{"architectures", {a.moe() ? kMixtral : kLlama}},
                      {"model_type", a.moe() ? "mixtral" : "llama"},
                      {"hidden_size", a.dim},
                      {"intermediate_size", a.intermediate_size},
                      {"num_hidden_layers", a.n_layers},
                      {"num_attention_heads", a.n_heads},
                      {"num_key_value_heads", a.n_kv_heads},
                      {"head_dim", a.dim / a.n_heads},
                      {"hidden_act", "silu"},
                      {"max_position_embeddings", a.max_seq_len},
                      {"rms_norm_eps", a.norm_eps},
                      {"rope_theta", a.rope_theta},
                      {"rope_scaling", nullptr},
                      {"tie_word_embeddings", a.tie_embeddings},
                      {"vocab_size", a.vocab_size},
                      {"attention_dropout", 0.0},
                      {"initializer_range", a.init_std},
                      {"use_cache", true},
                      {"torch_dtype", torch_dtype}};
  if (a.moe()) {
    c["num_local_experts"] = a.num_experts;
    c["num_experts_per_tok"] = a.top_k;
    c["router_aux_loss_coef"] = a.router_aux_loss_coef;
    c["output_router_logits"] = false;
    c["router_jitter_noise"] = 0.0;
    c["sliding_window"] = nullptr;
  } else {
    c["attention_bias"] = false;
    c["mlp_bias"] = false;
    c["pretraining_tp"] = 1;
  }
  if (bos_id) c["bos_token_id"] = *bos_id;
  if (eos_id) c["eos_token_id"] = *eos_id;
  return c;
}

HfArchitecture read_hf_config(const std::filesystem::path& file) {
  const nlohmann::json c = read_json_object(file);
  auto bad = [&](const std::string& key, const std::string& what) {
    return sdk::ConfigError(fmt::format("{}: '{}' {}", file.string(), key, what));
  };
  std::string architecture;
  if (c.contains("architectures") && c["architectures"].is_array() && c["architectures"].size() == 1 &&
      c["architectures"][0].is_string()) {
    architecture = c["architectures"][0].get<std::string>();
  } else if (c.contains("architectures")) {
    throw bad("architectures", fmt::format("is {}, not a list of one architecture name", c["architectures"].dump()));
  } else {
    throw bad("architectures", "is missing (kforge reads LlamaForCausalLM and MixtralForCausalLM)");
  }
  if (architecture != kLlama && architecture != kMixtral) {
    throw bad("architectures",
              fmt::format("is [\"{}\"]: kforge converts only {} and {}", architecture, kLlama, kMixtral));
  }
  const bool mixtral = architecture == kMixtral;
  auto integer = [&](const std::string& key, std::optional<int64_t> fallback) -> int64_t {
    if (!c.contains(key) || c[key].is_null()) {
      if (fallback) return *fallback;
      throw bad(key, "is missing");
    }
    if (!c[key].is_number_integer() || c[key].get<int64_t>() < 1) {
      throw bad(key, fmt::format("is {}, not a positive integer", c[key].dump()));
    }
    return c[key].get<int64_t>();
  };
  auto number = [&](const std::string& key, double fallback) {
    if (!c.contains(key) || c[key].is_null()) return fallback;
    if (!c[key].is_number()) throw bad(key, fmt::format("is {}, not a number", c[key].dump()));
    return c[key].get<double>();
  };
  auto flag = [&](const std::string& key, bool fallback) {
    if (!c.contains(key) || c[key].is_null()) return fallback;
    if (!c[key].is_boolean()) throw bad(key, fmt::format("is {}, not true or false", c[key].dump()));
    return c[key].get<bool>();
  };
  auto unsupported = [&](bool condition, const std::string& key, const std::string& why) {
    if (condition) throw bad(key, fmt::format("is {}: {}", c[key].dump(), why));
  };
  HfArchitecture a;
  a.dim = integer("hidden_size", std::nullopt);
  a.n_layers = integer("num_hidden_layers", std::nullopt);
  a.n_heads = integer("num_attention_heads", std::nullopt);
  a.n_kv_heads = integer("num_key_value_heads", a.n_heads);
  a.vocab_size = integer("vocab_size", std::nullopt);
  a.intermediate_size = integer("intermediate_size", std::nullopt);
  // HF's defaults for absent fields (LlamaConfig / MixtralConfig).
  a.max_seq_len = integer("max_position_embeddings", mixtral ? 4096 * 32 : 2048);
  a.norm_eps = number("rms_norm_eps", mixtral ? 1e-5 : 1e-6);
  a.rope_theta = number("rope_theta", mixtral ? 1e6 : 10000.0);
  a.init_std = number("initializer_range", 0.02);
  a.tie_embeddings = flag("tie_word_embeddings", false);
  const std::string act =
      c.contains("hidden_act") && c["hidden_act"].is_string() ? c["hidden_act"].get<std::string>() : "silu";
  unsupported(act != "silu", "hidden_act", "kforge's transformer has SwiGLU (silu) MLPs only");
  unsupported(c.contains("rope_scaling") && !c["rope_scaling"].is_null(), "rope_scaling",
              "kforge's RoPE has no scaling (Llama 3.1, YaRN, linear or dynamic NTK)");
  unsupported(flag("attention_bias", false), "attention_bias", "kforge's attention projections have no bias");
  unsupported(flag("mlp_bias", false), "mlp_bias", "kforge's MLPs have no bias");
  if (c.contains("head_dim") && !c["head_dim"].is_null()) {
    unsupported(integer("head_dim", std::nullopt) * a.n_heads != a.dim, "head_dim",
                "kforge's head size is hidden_size / num_attention_heads");
  }
  if (mixtral && c.contains("sliding_window") && !c["sliding_window"].is_null()) {
    unsupported(integer("sliding_window", std::nullopt) < a.max_seq_len, "sliding_window",
                "kforge's attention has no sliding window");
  }
  if (mixtral) {
    a.num_experts = integer("num_local_experts", 8);
    a.top_k = integer("num_experts_per_tok", 2);
    a.router_aux_loss_coef = number("router_aux_loss_coef", 0.001);
  }
  return a;
}

std::vector<std::string> model_overrides(const HfArchitecture& a) {
  std::vector<std::string> out = {fmt::format("--model.dim={}", a.dim),
                                  fmt::format("--model.n_layers={}", a.n_layers),
                                  fmt::format("--model.n_heads={}", a.n_heads),
                                  fmt::format("--model.n_kv_heads={}", a.n_kv_heads),
                                  fmt::format("--model.vocab_size={}", a.vocab_size),
                                  fmt::format("--model.ffn_hidden_dim={}", a.intermediate_size),
                                  fmt::format("--model.max_seq_len={}", a.max_seq_len),
                                  "--model.norm_eps=" + arch_float_text(a.norm_eps),
                                  "--model.rope_theta=" + arch_float_text(a.rope_theta),
                                  "--model.init_std=" + arch_float_text(a.init_std),
                                  fmt::format("--model.tie_embeddings={}", a.tie_embeddings ? "true" : "false"),
                                  fmt::format("--model.num_experts={}", a.num_experts)};
  if (a.moe()) {
    out.push_back(fmt::format("--model.moe_top_k={}", a.top_k));
    out.push_back("--model.moe_aux_loss_weight=" + arch_float_text(a.router_aux_loss_coef));
  }
  return out;
}

}  // namespace kforge::interop
