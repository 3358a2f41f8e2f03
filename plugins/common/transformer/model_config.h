// ModelConfig: the dense decoder's [model] settings, read from a ConfigView, plus the derived
// sizes (FFN width, parameter count, training FLOPs per token) KempnerForge computes from them.
#pragma once

#include <cstdint>
#include <string>

namespace kforge::sdk {
class ConfigView;
}

namespace kforge::builtin::models {

struct ModelConfig {
  int64_t dim = 4096;
  int64_t n_layers = 32;
  int64_t n_heads = 32;
  int64_t n_kv_heads = 32;        ///< resolved: [model] n_kv_heads, or n_heads when unset
  int64_t vocab_size = 32000;
  double ffn_dim_multiplier = 1.0;
  int64_t ffn_hidden_dim = 0;     ///< 0: unset, use the SwiGLU width rule
  std::string norm_type = "rmsnorm";
  double norm_eps = 1e-5;
  std::string activation = "silu";
  int64_t max_seq_len = 2048;
  double rope_theta = 10000.0;
  bool tie_embeddings = false;
  bool qk_norm = false;
  double init_std = 0.02;
  std::string sdpa_backend = "auto";  ///< attention kernel choice ([model] sdpa_backend)
  std::string linear_backend = "auto";  ///< fp32 projection GEMMs ([model] linear_backend, see linear.h)
  bool fused_kernels = true;            ///< fused RMSNorm, SwiGLU, RoPE, causal softmax ([model] fused_kernels)
  /// [train] mixed_precision = "fp8" (sdk::BuildContext::float8, not a [model] key): attention, dense MLPs and the
  /// output head compute through float8_linear (dense_linear_backend).
  bool float8 = false;

  // Mixture of experts ([model] num_experts > 0; KempnerForge §3.2).
  int64_t num_experts = 0;                ///< routed experts per MoE layer (0: dense model)
  int64_t moe_top_k = 2;                  ///< experts per token
  int64_t moe_frequency = 1;              ///< layer i is MoE iff (i + 1) % moe_frequency == 0
  std::string moe_router = "softmax_topk";  ///< router plugin, built through the host
  int64_t moe_shared_experts = 0;         ///< > 0: one shared expert MLP on every token
  double moe_aux_loss_weight = 0.01;
  double moe_router_z_loss_weight = 0.0;
  double moe_capacity_factor = 0.0;       ///< 0: no token dropping
  bool moe_gradient_scale = false;        ///< training: expert outputs scaled by avg_tokens / count
  bool moe_packed_experts = false;        ///< (E, in, out) expert tensors instead of per-expert MLPs
  double moe_expert_ffn_multiplier = 1.0; ///< fine-grained experts

  /// Reads and checks every key; throws sdk::ConfigError naming the key and value.
  static ModelConfig from_view(const sdk::ConfigView& section);
  /// Checks the invariants the model relies on (also used by from_view).
  void validate() const;

  int64_t head_dim() const { return dim / n_heads; }
  /// ffn_hidden_dim, or 256 * ceil(int(4 * dim * 2/3 * ffn_dim_multiplier) / 256).
  int64_t computed_ffn_hidden_dim() const;
  /// max(16, 16 * round(int(computed_ffn_hidden_dim * moe_expert_ffn_multiplier) / 16)) (Python round).
  int64_t computed_expert_ffn_hidden_dim() const;
  bool is_moe() const { return num_experts > 0; }
  bool is_moe_layer(int64_t layer) const { return is_moe() && (layer + 1) % moe_frequency == 0; }
  int64_t num_moe_layers() const;
  /// Weight matrices in each MLP: 3 for SwiGLU (silu), 2 for gelu/relu.
  int64_t mlp_matrices() const { return activation == "silu" ? 3 : 2; }

  /// The exact parameter count of the model this config builds (tied head counted once), except a
  /// router's own extra parameters (sigmoid_topk's expert_bias). For the default architecture
  /// (rmsnorm, silu, no qk_norm) this is KempnerForge's formula; an MoE layer counts all experts,
  /// the gate (dim * E) and one shared expert when moe_shared_experts > 0.
  int64_t num_params() const;
  /// 6 * P_active + 12 * n_layers * dim * seq_len, P_active = sum over layers of (attn + active mlp)
  /// + vocab * dim (embedding excluded, LM head included, norms and router excluded). An MoE layer's
  /// active mlp is top_k experts plus the shared one, at the expert width.
  double flops_per_token(int64_t seq_len) const;
};

}  // namespace kforge::builtin::models
