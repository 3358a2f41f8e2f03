// load_hf_tensors: copies a Hugging Face checkpoint's tensors (name -> tensor, as the host reads them from
// model.safetensors) into a module's parameters by name, checking that every parameter is present with
// its shape.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <map>
#include <string>
#include <vector>

namespace kforge::vision {

/// Each parameter of `module` (named_parameters(), e.g. "vision_model.post_layernorm.weight") is copied
/// from tensors[name], converted to the parameter's dtype. Throws sdk::Error naming `origin` (the file)
/// and every missing tensor and every tensor whose shape differs (expected and found), before any copy.
/// Returns the names in `tensors` that are no parameter (sorted): a text tower, the SigLIP pooling head,
/// CLIP's post_layernorm, position_ids buffers; the caller reports them.
std::vector<std::string> load_hf_tensors(torch::nn::Module& module, const std::map<std::string, at::Tensor>& tensors,
                                         const std::string& origin);

}  // namespace kforge::vision
