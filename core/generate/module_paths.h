// KempnerForge module paths (e.g. "layers.3.attention", "output") as capture points of kforge's hook points.
#pragma once

#include <string>
#include <vector>

namespace kforge::generate {

/// The capture point holding the model's forward output (the logits), KempnerForge's module "output".
inline constexpr const char* kOutputModule = "output";

/// The module path of a hook point name or pattern, or "" when the point is no module's output:
/// "embed" -> "tok_embeddings", "layers.N.residual" -> "layers.N" (the block), "layers.N.attn_out" ->
/// "layers.N.attention", "layers.N.mlp_out" -> "layers.N.mlp", "final_norm" -> "norm"; the norms' outputs
/// ("layers.N.attention_norm", "layers.N.mlp_norm") and an MoE router's values ("layers.N.mlp.router.choices",
/// ".weights", ".expert_counts") keep their names.
std::string module_path_of_point(const std::string& point);

/// The hook point (of `points`, a model's expanded names) that module `path` outputs, or kOutputModule for
/// "output". Throws sdk::Error naming `path` and the model's module paths (from its hook-point `patterns`).
std::string point_of_module_path(const std::string& path, const std::vector<std::string>& points,
                                 const std::vector<std::string>& patterns);

}  // namespace kforge::generate
