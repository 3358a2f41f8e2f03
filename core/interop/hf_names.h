// Tensor names: kforge's transformer FQNs <-> Hugging Face Llama (dense) and Mixtral (MoE) names.
#pragma once

#include <optional>
#include <string>

namespace kforge::interop {

/// The Hugging Face name of a kforge parameter: Llama names, and Mixtral's
/// `model.layers.N.block_sparse_moe.{gate, experts.E.w1/w2/w3}` for MoE layers (w1 gate_proj,
/// w2 down_proj, w3 up_proj). nullopt for a name with no Hugging Face counterpart.
std::optional<std::string> hf_name_of(const std::string& kforge_name);

/// The inverse of hf_name_of: nullopt for a name no kforge parameter maps to.
std::optional<std::string> kforge_name_of(const std::string& hf_name);

}  // namespace kforge::interop
