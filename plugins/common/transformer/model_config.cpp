// ModelConfig: reading [model], validation, and the derived sizes.
#include "model_config.h"

#include <kforge/sdk/config_view.h>
#include <kforge/sdk/error.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kforge::builtin::models {
namespace {

template <class T>
std::string show(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

[[noreturn]] void bad(const std::string& key, const std::string& value, const std::string& why) {
  throw sdk::ConfigError("[model] " + key + " = " + value + ": " + why);
}

}  // namespace

ModelConfig ModelConfig::from_view(const sdk::ConfigView& m) {
  ModelConfig c;
  c.dim = m.get_int("dim");
  c.n_layers = m.get_int("n_layers");
  c.n_heads = m.get_int("n_heads");
  c.n_kv_heads = m.has("n_kv_heads") ? m.get_int("n_kv_heads") : c.n_heads;
  c.vocab_size = m.get_int("vocab_size");
  c.ffn_dim_multiplier = m.get_float("ffn_dim_multiplier");
  c.ffn_hidden_dim = m.has("ffn_hidden_dim") ? m.get_int("ffn_hidden_dim") : 0;
  c.norm_type = m.get_string("norm_type");
  c.norm_eps = m.get_float("norm_eps");
  c.activation = m.get_string("activation");
  c.max_seq_len = m.get_int("max_seq_len");
  c.rope_theta = m.get_float("rope_theta");
  c.tie_embeddings = m.get_bool("tie_embeddings");
  c.qk_norm = m.get_bool("qk_norm");
  c.init_std = m.get_float("init_std");
  c.sdpa_backend = m.get_string("sdpa_backend");
  c.linear_backend = m.get_string("linear_backend");
  c.fused_kernels = m.get_bool("fused_kernels");
  c.num_experts = m.get_int("num_experts");
  c.moe_top_k = m.get_int("moe_top_k");
  c.moe_frequency = m.get_int("moe_frequency");
  c.moe_router = m.get_string("moe_router");
  c.moe_shared_experts = m.get_int("moe_shared_experts");
  c.moe_aux_loss_weight = m.get_float("moe_aux_loss_weight");
  c.moe_router_z_loss_weight = m.get_float("moe_router_z_loss_weight");
  c.moe_capacity_factor = m.get_float("moe_capacity_factor");
  c.moe_gradient_scale = m.get_bool("moe_gradient_scale");
  c.moe_packed_experts = m.get_bool("moe_packed_experts");
  c.moe_expert_ffn_multiplier = m.get_float("moe_expert_ffn_multiplier");
  if (m.has("ffn_hidden_dim") && c.ffn_hidden_dim <= 0) bad("ffn_hidden_dim", show(c.ffn_hidden_dim), "must be > 0");
  c.validate();
  return c;
}

void ModelConfig::validate() const {
  for (const auto& [key, v] : {std::pair<const char*, int64_t>{"dim", dim}, {"n_layers", n_layers}, {"n_heads", n_heads},
                               {"n_kv_heads", n_kv_heads}, {"vocab_size", vocab_size}, {"max_seq_len", max_seq_len}}) {
    if (v <= 0) bad(key, show(v), "must be > 0");
  }
  if (ffn_hidden_dim < 0) bad("ffn_hidden_dim", show(ffn_hidden_dim), "must be > 0");
  if (!(ffn_dim_multiplier > 0)) bad("ffn_dim_multiplier", show(ffn_dim_multiplier), "must be > 0");
  if (!(norm_eps > 0)) bad("norm_eps", show(norm_eps), "must be > 0");
  if (!(init_std > 0)) bad("init_std", show(init_std), "must be > 0");
  if (!(rope_theta > 0)) bad("rope_theta", show(rope_theta), "must be > 0");
  if (dim % n_heads != 0) bad("n_heads", show(n_heads), "dim (" + show(dim) + ") must be divisible by n_heads");
  if (n_heads % n_kv_heads != 0) {
    bad("n_kv_heads", show(n_kv_heads), "n_heads (" + show(n_heads) + ") must be divisible by n_kv_heads");
  }
  if (head_dim() % 2 != 0) {
    bad("n_heads", show(n_heads), "head_dim = dim / n_heads = " + show(head_dim()) + " must be even for RoPE");
  }
  if (norm_type != "rmsnorm" && norm_type != "layernorm") {
    bad("norm_type", "\"" + norm_type + "\"", "must be \"rmsnorm\" or \"layernorm\"");
  }
  if (activation != "silu" && activation != "gelu" && activation != "relu") {
    bad("activation", "\"" + activation + "\"", "must be \"silu\", \"gelu\" or \"relu\"");
  }
  if (linear_backend != "auto" && linear_backend != "onednn" && linear_backend != "aten") {
    bad("linear_backend", "\"" + linear_backend + "\"", "must be \"auto\", \"onednn\" or \"aten\"");
  }
  if (num_experts < 0) bad("num_experts", show(num_experts), "must be >= 0 (0: dense)");
  if (!is_moe()) return;
  if (moe_top_k < 1 || moe_top_k > num_experts) {
    bad("moe_top_k", show(moe_top_k), "must be in [1, num_experts = " + show(num_experts) + "]");
  }
  if (moe_frequency < 1) bad("moe_frequency", show(moe_frequency), "must be > 0");
  if (moe_shared_experts < 0) bad("moe_shared_experts", show(moe_shared_experts), "must be >= 0");
  if (!(moe_capacity_factor >= 0)) {
    bad("moe_capacity_factor", show(moe_capacity_factor), "must be >= 0 (0: no dropping)");
  }
  if (!(moe_expert_ffn_multiplier > 0)) {
    bad("moe_expert_ffn_multiplier", show(moe_expert_ffn_multiplier), "must be > 0");
  }
}

int64_t ModelConfig::computed_ffn_hidden_dim() const {
  if (ffn_hidden_dim > 0) return ffn_hidden_dim;
  // Python: int(4 * dim * (2 / 3) * ffn_dim_multiplier), evaluated left to right in doubles.
  const auto raw = static_cast<int64_t>(4.0 * static_cast<double>(dim) * (2.0 / 3.0) * ffn_dim_multiplier);
  return 256 * ((raw + 255) / 256);
}

int64_t ModelConfig::computed_expert_ffn_hidden_dim() const {
  // Python: max(16, 16 * round(int(ffn * mult) / 16)); round() ties to even, as nearbyint does.
  const auto raw = static_cast<int64_t>(static_cast<double>(computed_ffn_hidden_dim()) * moe_expert_ffn_multiplier);
  return std::max<int64_t>(16, 16 * static_cast<int64_t>(std::nearbyint(static_cast<double>(raw) / 16.0)));
}

int64_t ModelConfig::num_moe_layers() const {
  int64_t n = 0;
  for (int64_t i = 0; i < n_layers; ++i) n += is_moe_layer(i) ? 1 : 0;
  return n;
}

int64_t ModelConfig::num_params() const {
  const int64_t hd = head_dim();
  const int64_t norm = norm_type == "layernorm" ? 2 * dim : dim;  // LayerNorm also has a bias
  const int64_t attn = dim * (n_heads * hd) + 2 * dim * (n_kv_heads * hd) + (n_heads * hd) * dim;
  const int64_t qk = qk_norm ? 2 * hd : 0;
  const int64_t dense_mlp = mlp_matrices() * dim * computed_ffn_hidden_dim();
  const int64_t expert = mlp_matrices() * dim * computed_expert_ffn_hidden_dim();
  const int64_t moe_mlp = num_experts * expert + dim * num_experts + (moe_shared_experts > 0 ? expert : 0);
  const int64_t n_moe = num_moe_layers();
  const int64_t layers = n_layers * (attn + qk + 2 * norm) + (n_layers - n_moe) * dense_mlp + n_moe * moe_mlp;
  const int64_t embedding = vocab_size * dim;
  const int64_t output = tie_embeddings ? 0 : vocab_size * dim;
  return layers + embedding + output + norm;
}

double ModelConfig::flops_per_token(int64_t seq_len) const {
  const auto d = static_cast<double>(dim);
  const auto hd = static_cast<double>(head_dim());
  const double attn = d * (n_heads * hd) + 2.0 * d * (n_kv_heads * hd) + (n_heads * hd) * d;
  const double dense_mlp = static_cast<double>(mlp_matrices()) * d * static_cast<double>(computed_ffn_hidden_dim());
  const double expert = static_cast<double>(mlp_matrices()) * d * static_cast<double>(computed_expert_ffn_hidden_dim());
  const double moe_mlp = static_cast<double>(moe_top_k + (moe_shared_experts > 0 ? 1 : 0)) * expert;
  const auto n_moe = static_cast<double>(num_moe_layers());
  const double layers = static_cast<double>(n_layers) * attn + (static_cast<double>(n_layers) - n_moe) * dense_mlp +
                        n_moe * moe_mlp;
  const double p_active = layers + static_cast<double>(vocab_size) * d;
  return 6.0 * p_active + 12.0 * static_cast<double>(n_layers) * d * static_cast<double>(seq_len);
}

}  // namespace kforge::builtin::models
