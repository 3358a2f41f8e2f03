// The [model] section of the schema: architecture, kernels and mixture of experts.
#include "config/schema_keys.h"
#include "config/schema_sections.h"

namespace kforge::config::schema_parts {

std::vector<SectionSpec> model_sections() {
  return {{"model",
           {int_key("dim", 4096, "model width"),
            int_key("n_layers", 32, "number of decoder blocks"),
            int_key("n_heads", 32, "attention heads"),
            optional_key(KeyType::Int, "n_kv_heads", "key/value heads (unset: n_heads; 1: multi-query)"),
            int_key("vocab_size", 32000, "vocabulary size"),
            float_key("ffn_dim_multiplier", 1.0, "multiplier of the SwiGLU hidden width rule"),
            optional_key(KeyType::Int, "ffn_hidden_dim", "explicit FFN hidden width (overrides the rule)"),
            string_key("norm_type", "rmsnorm", "normalisation layer", {"rmsnorm", "layernorm"}),
            float_key("norm_eps", 1e-5, "normalisation epsilon"),
            string_key("activation", "silu", "MLP activation (silu: SwiGLU)", {"silu", "gelu", "relu"}),
            int_key("max_seq_len", 2048, "longest sequence (RoPE table length)"),
            float_key("rope_theta", 10000.0, "RoPE base"),
            bool_key("tie_embeddings", false, "share the token embedding with the output head"),
            bool_key("qk_norm", false, "per-head RMSNorm on queries and keys before RoPE"),
            float_key("init_std", 0.02, "weight init standard deviation"),
            string_key("model_type", "transformer", "model plugin to build"),
            string_key("sdpa_backend", "auto", "attention kernel", {"auto", "flash", "efficient", "cudnn", "math"}),
            string_key("linear_backend", "auto",
                       "fp32 projection GEMMs: oneDNN's sgemm (auto: when LibTorch has oneDNN) or at::linear (aten)",
                       {"auto", "onednn", "aten"}),
            bool_key("fused_kernels", true,
                     "fused RMSNorm, SwiGLU, RoPE and causal-softmax kernels (false: the composite ATen ops)"),
            int_key("num_experts", 0, "experts per MoE layer (0: dense)"),
            int_key("moe_top_k", 2, "experts per token"),
            int_key("moe_frequency", 1, "layer i is MoE iff (i+1) % moe_frequency == 0"),
            string_key("moe_router", "softmax_topk", "router plugin"),
            int_key("moe_shared_experts", 0, "shared experts applied to every token"),
            float_key("moe_aux_loss_weight", 0.01, "load-balance loss weight"),
            float_key("moe_capacity_factor", 0.0, "expert capacity factor (0: no dropping)"),
            float_key("moe_sequence_aux_loss_weight", 0.0, "sequence aux loss weight (sigmoid router)"),
            bool_key("moe_gradient_scale", false, "scale expert outputs by avg_tokens/count"),
            string_key("moe_bias_schedule", "constant", "expert-bias update schedule",
                       {"constant", "cosine_decay", "linear_warmup"}),
            bool_key("moe_packed_experts", false, "packed (E, in, out) expert weights"),
            float_key("moe_expert_ffn_multiplier", 1.0, "fine-grained expert width multiplier"),
            float_key("moe_router_z_loss_weight", 0.0, "router z-loss weight")},
           false,
           "the model architecture; model_type picks the model plugin"}};
}

}  // namespace kforge::config::schema_parts
