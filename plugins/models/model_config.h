// ModelConfig: the dense decoder's [model] settings, read from a ConfigView, plus the derived
// sizes (FFN width, parameter count, training FLOPs per token) KempnerForge computes from them.
#pragma once

#include <cstdint>
#include <string>

namespace kforge::sdk {
class ConfigView;
}

namespace kforge::models {

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

  /// Reads and checks every key; throws sdk::ConfigError naming the key and value.
  static ModelConfig from_view(const sdk::ConfigView& section);
  /// Checks the invariants the model relies on (also used by from_view).
  void validate() const;

  int64_t head_dim() const { return dim / n_heads; }
  /// ffn_hidden_dim, or 256 * ceil(int(4 * dim * 2/3 * ffn_dim_multiplier) / 256).
  int64_t computed_ffn_hidden_dim() const;
  /// Weight matrices in each MLP: 3 for SwiGLU (silu), 2 for gelu/relu.
  int64_t mlp_matrices() const { return activation == "silu" ? 3 : 2; }

  /// The exact parameter count of the model this config builds (tied head counted once).
  /// For the default architecture (rmsnorm, silu, no qk_norm) this is KempnerForge's formula.
  int64_t num_params() const;
  /// 6 * P_active + 12 * n_layers * dim * seq_len, P_active = n_layers * (attn + mlp) + vocab * dim
  /// (embedding excluded, LM head included, norms excluded).
  double flops_per_token(int64_t seq_len) const;
};

}  // namespace kforge::models
