// VitEmbeddings: patch embedding (a conv with kernel and stride patch_size), the CLIP class token and
// learned position embeddings (Hugging Face SiglipVisionEmbeddings / CLIPVisionEmbeddings).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>

#include "vit_config.h"

namespace kforge::vision {

/// Parameters: patch_embedding.weight (hidden, C, p, p), patch_embedding.bias (SigLIP only),
/// class_embedding (hidden; CLIP only), position_embedding.weight (positions, hidden) with positions =
/// patches (+1 for CLIP's class token, which takes position 0).
class VitEmbeddings : public torch::nn::Module {
 public:
  explicit VitEmbeddings(const VitConfig& config);
  /// pixels (B, C, image_size, image_size), any float dtype (cast to the weights') ->
  /// (B, positions, hidden). Another shape throws sdk::Error naming the expected one.
  at::Tensor forward(const at::Tensor& pixels);

 private:
  VitConfig config_;
  torch::nn::Conv2d patch_embedding_{nullptr};
  torch::nn::Embedding position_embedding_{nullptr};
  at::Tensor class_embedding_;
};

}  // namespace kforge::vision
