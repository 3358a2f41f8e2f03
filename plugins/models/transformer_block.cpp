// TransformerBlock: attention_norm, attention, mlp_norm, mlp (KempnerForge's order and names).
#include "transformer_block.h"

namespace kforge::models {

TransformerBlock::TransformerBlock(const ModelConfig& c) {
  attention_norm_ = register_module("attention_norm", make_norm(c.norm_type, c.dim, c.norm_eps));
  attention_ = register_module("attention", std::make_shared<Attention>(c));
  mlp_norm_ = register_module("mlp_norm", make_norm(c.norm_type, c.dim, c.norm_eps));
  mlp_ = register_module("mlp", std::make_shared<MLP>(c.dim, c.computed_ffn_hidden_dim(), c.activation));
}

at::Tensor TransformerBlock::forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, KVCache* cache,
                                     size_t layer) {
  const at::Tensor h = x + attention_->forward(attention_norm_->forward(x), cos, sin, cache, layer);
  return h + mlp_->forward(mlp_norm_->forward(h));
}

}  // namespace kforge::models
