// The built-in model plugin: registers the dense decoder as model "transformer".
#include <kforge/sdk/plugin.h>

#include "transformer/model_config.h"
#include "transformer/transformer.h"

namespace {

std::shared_ptr<kforge::sdk::Model> make_transformer(const kforge::sdk::BuildContext& ctx) {
  return std::make_shared<kforge::builtin::models::Transformer>(
      kforge::builtin::models::ModelConfig::from_view(ctx.section), &ctx.components, ctx.expert_parallel,
      ctx.tensor_parallel);
}

// The [model] keys of the core schema the transformer reads (ModelConfig::from_view).
constexpr const char* kTransformerCoreKeys[] = {"dim",
                                                "n_layers",
                                                "n_heads",
                                                "n_kv_heads",
                                                "vocab_size",
                                                "ffn_dim_multiplier",
                                                "ffn_hidden_dim",
                                                "norm_type",
                                                "norm_eps",
                                                "activation",
                                                "max_seq_len",
                                                "rope_theta",
                                                "tie_embeddings",
                                                "qk_norm",
                                                "init_std",
                                                "sdpa_backend",
                                                "linear_backend",
                                                "fused_kernels",
                                                "num_experts",
                                                "moe_top_k",
                                                "moe_frequency",
                                                "moe_router",
                                                "moe_shared_experts",
                                                "moe_aux_loss_weight",
                                                "moe_router_z_loss_weight",
                                                "moe_capacity_factor",
                                                "moe_gradient_scale",
                                                "moe_packed_experts",
                                                "moe_expert_ffn_multiplier"};

// What the transformer hands out to kforge extract (Transformer::run, block_capture.h).
constexpr const char* kTransformerHookPoints[] = {"embed",
                                                  "layers.{layer}.attention",
                                                  "layers.{layer}.attn_out",
                                                  "layers.{layer}.mlp_out",
                                                  "layers.{layer}.residual",
                                                  "final_norm"};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(
        kforge::sdk::kind::model, "transformer", "1.0.0",
        "Llama-style decoder: GQA attention with RoPE, SwiGLU/GELU/ReLU MLP or mixture-of-experts "
        "layers (num_experts > 0, router plugin moe_router), RMSNorm/LayerNorm",
        kforge::sdk::core_keys(kTransformerCoreKeys), kforge::sdk::hook_points(kTransformerHookPoints),
        kforge::sdk::capabilities(KFORGE_CAP_LLAMA_LAYOUT | KFORGE_CAP_DOCUMENT_MASK | KFORGE_CAP_EMBEDDING_PREFIX |
                                  KFORGE_CAP_EXPERT_PARALLEL | KFORGE_CAP_TENSOR_PARALLEL | KFORGE_CAP_PIPELINE)),
};

void register_all(kforge::sdk::Registrar& r) { r.add_model("transformer", make_transformer); }

}  // namespace

KFORGE_PLUGIN("kforge-models", "1.0.0", "Built-in decoder models", kComponents, register_all)
