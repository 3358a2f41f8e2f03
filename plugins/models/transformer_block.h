// TransformerBlock: one pre-norm decoder layer, x += attention(norm(x)); x += mlp(norm(x)).
#pragma once

#include <torch/nn/module.h>

#include <memory>

#include "attention.h"
#include "mlp.h"
#include "model_config.h"
#include "norm.h"

namespace kforge::models {

class TransformerBlock : public torch::nn::Module {
 public:
  explicit TransformerBlock(const ModelConfig& config);
  /// With a cache, attention appends this block's K/V as layer `layer` (see Attention::forward).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, KVCache* cache = nullptr,
                     size_t layer = 0);

 private:
  std::shared_ptr<Norm> attention_norm_, mlp_norm_;
  std::shared_ptr<Attention> attention_;
  std::shared_ptr<MLP> mlp_;
};

}  // namespace kforge::models
