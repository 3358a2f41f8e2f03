// CrossAttentionBlock: its parameters, their initialisation and the unmasked grouped-query attention over the image.
#include "cross_attention_block.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <cmath>
#include <limits>
#include <string>

namespace kforge::vlm {

using builtin::models::Linear;

CrossAttentionBlock::CrossAttentionBlock(const builtin::models::ModelConfig& c, int64_t n_heads, int64_t n_kv_heads)
    : n_heads_(n_heads), n_kv_heads_(n_kv_heads), head_dim_(c.dim / n_heads) {
  const auto linear = builtin::models::resolve_linear_backend(c.linear_backend);
  attention_norm_ =
      register_module("attention_norm", builtin::models::make_norm(c.norm_type, c.dim, c.norm_eps, c.fused_kernels));
  auto attention = register_module("attention", std::make_shared<torch::nn::Module>("CrossAttention"));
  q_proj_ = attention->register_module("q_proj", std::make_shared<Linear>(c.dim, n_heads_ * head_dim_, linear));
  k_proj_ = attention->register_module("k_proj", std::make_shared<Linear>(c.dim, n_kv_heads_ * head_dim_, linear));
  v_proj_ = attention->register_module("v_proj", std::make_shared<Linear>(c.dim, n_kv_heads_ * head_dim_, linear));
  o_proj_ = attention->register_module("o_proj", std::make_shared<Linear>(n_heads_ * head_dim_, c.dim, linear));
  mlp_norm_ = register_module("mlp_norm", builtin::models::make_norm(c.norm_type, c.dim, c.norm_eps, c.fused_kernels));
  mlp_ = register_module("mlp", std::make_shared<builtin::models::MLP>(c.dim, c.computed_ffn_hidden_dim(), c.activation,
                                                                       linear, c.fused_kernels));
  at::NoGradGuard no_grad;
  for (auto& item : named_parameters(/*recurse=*/true)) {
    at::Tensor& p = item.value();
    if (p.dim() < 2) continue;
    const std::string& name = item.key();
    const bool output = name == "attention.o_proj.weight" || name == "mlp.down_proj.weight";
    if (output) {
      p.zero_();
    } else {
      p.normal_(0.0, c.init_std);
    }
  }
}

std::pair<at::Tensor, at::Tensor> CrossAttentionBlock::image_keys_values(const at::Tensor& image) {
  const int64_t batch = image.size(0), tokens = image.size(1);
  auto heads = [&](const at::Tensor& x) { return x.view({batch, tokens, n_kv_heads_, head_dim_}).transpose(1, 2); };
  return {heads(k_proj_->forward(image)), heads(v_proj_->forward(image))};
}

at::Tensor CrossAttentionBlock::forward(const at::Tensor& text, const at::Tensor& image, const at::Tensor& padding) {
  if (image.dim() != 3 || image.size(0) != text.size(0) || image.size(2) != text.size(2)) {
    throw sdk::Error("cross_attention: image tokens " + c10::str(image.sizes()) + " do not fit text " +
                     c10::str(text.sizes()) + " (one image per row, the model dim)");
  }
  auto [keys, values] = image_keys_values(image.to(text.scalar_type()));
  return forward_with(text, keys, values, padding);
}

at::Tensor CrossAttentionBlock::forward_with(const at::Tensor& text, const at::Tensor& keys, const at::Tensor& values,
                                             const at::Tensor& padding) {
  const int64_t batch = text.size(0), seq = text.size(1), group = n_heads_ / n_kv_heads_;
  // Queries grouped by their key/value head: (B, KV, group * S, hd), so each group shares one K/V without copies.
  const at::Tensor q = q_proj_->forward(attention_norm_->forward(text))
                           .view({batch, seq, n_kv_heads_, group, head_dim_})
                           .permute({0, 2, 3, 1, 4})
                           .reshape({batch, n_kv_heads_, group * seq, head_dim_});
  at::Tensor scores = at::matmul(q, keys.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim_));
  at::Tensor probs;
  if (padding.defined()) {
    // Padded keys get -inf; a row of padding only gets finite scores, and every probability of a padded key is then
    // zeroed, so such a row attends to nothing and its gradients stay finite.
    const at::Tensor valid = at::arange(keys.size(2), padding.options()).unsqueeze(0).ge(padding.unsqueeze(1));
    const at::Tensor visible = valid.view({batch, 1, 1, keys.size(2)});
    scores = scores.masked_fill(visible.logical_not().logical_and(valid.any(1).view({batch, 1, 1, 1})),
                                -std::numeric_limits<double>::infinity());
    probs = (at::softmax(scores, -1, at::kFloat) * visible).to(q.scalar_type());
  } else {
    probs = at::softmax(scores, -1, at::kFloat).to(q.scalar_type());
  }
  const at::Tensor attended = at::matmul(probs, values)
                                  .view({batch, n_kv_heads_, group, seq, head_dim_})
                                  .permute({0, 3, 1, 2, 4})
                                  .reshape({batch, seq, n_heads_ * head_dim_});
  const at::Tensor x = text + o_proj_->forward(attended);
  return x + mlp_->forward(mlp_norm_->forward(x));
}

}  // namespace kforge::vlm
