// The built-in model plugin: registers the dense decoder as model "transformer".
#include <kforge/sdk/plugin.h>

#include "transformer/model_config.h"
#include "transformer/transformer.h"

namespace {

using kforge::sdk::reads;

std::shared_ptr<kforge::sdk::Model> make_transformer(const kforge::sdk::BuildContext& ctx) {
  kforge::builtin::models::ModelConfig config = kforge::builtin::models::ModelConfig::from_view(ctx.section);
  config.float8 = ctx.float8;
  return std::make_shared<kforge::builtin::models::Transformer>(config, &ctx.components, ctx.expert_parallel,
                                                                ctx.tensor_parallel);
}

// The [model] keys of the core schema the transformer reads (ModelConfig::from_view).
constexpr kforge_config_key kTransformerCoreKeys[] = {
    reads("dim"), reads("n_layers"), reads("n_heads"), reads("n_kv_heads"), reads("vocab_size"),
    reads("ffn_dim_multiplier"), reads("ffn_hidden_dim"), reads("norm_type"), reads("norm_eps"), reads("activation"),
    reads("max_seq_len"), reads("rope_theta"), reads("tie_embeddings"), reads("qk_norm"), reads("init_std"),
    reads("sdpa_backend"), reads("linear_backend"), reads("fused_kernels"), reads("num_experts"), reads("moe_top_k"),
    reads("moe_frequency"), reads("moe_router"), reads("moe_shared_experts"), reads("moe_aux_loss_weight"),
    reads("moe_router_z_loss_weight"), reads("moe_capacity_factor"), reads("moe_gradient_scale"),
    reads("moe_packed_experts"), reads("moe_expert_ffn_multiplier"),
};

// What the transformer hands out to kforge extract (Transformer::run, block_capture.h).
constexpr const char* kTransformerHookPoints[] = {"embed",
                                                  "layers.{layer}.attention_norm",
                                                  "layers.{layer}.attention",
                                                  "layers.{layer}.attn_out",
                                                  "layers.{layer}.mlp_norm",
                                                  "layers.{layer}.mlp_out",
                                                  "layers.{layer}.residual",
                                                  "layers.{layer}.mlp.router.choices",
                                                  "layers.{layer}.mlp.router.weights",
                                                  "layers.{layer}.mlp.router.expert_counts",
                                                  "final_norm"};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(
        kforge::sdk::kind::model, "transformer", "1.0.0",
        "Llama-style decoder: GQA attention with RoPE, SwiGLU/GELU/ReLU MLP or mixture-of-experts "
        "layers (num_experts > 0, router plugin moe_router), RMSNorm/LayerNorm",
        kforge::sdk::config_keys(kTransformerCoreKeys), kforge::sdk::hook_points(kTransformerHookPoints),
        kforge::sdk::capabilities(KFORGE_CAP_LLAMA_LAYOUT | KFORGE_CAP_DOCUMENT_MASK | KFORGE_CAP_EMBEDDING_PREFIX |
                                  KFORGE_CAP_EXPERT_PARALLEL | KFORGE_CAP_TENSOR_PARALLEL | KFORGE_CAP_PIPELINE |
                                  KFORGE_CAP_FLOAT8)),
};

void register_all(kforge::sdk::Registrar& r) { r.add_model("transformer", make_transformer); }

}  // namespace

KFORGE_PLUGIN("kforge-models", "1.0.0", "Built-in decoder models", kComponents, register_all)
