// MoTBlock: per-modality projections and FFNs, the per-modality RoPE and the one global causal attention (within
// documents when a clip is padded).
#include "mot_block.h"

#include <ATen/ATen.h>

#include <vector>

#include "transformer/attention.h"
#include "transformer/flash_attention.h"
#include "transformer/rope.h"

namespace kforge::vlm {

namespace models = builtin::models;

namespace {

// Each modality's positions of x [B, P + S, ...] through that modality's module -> [B, P + S, ...].
template <typename M>
at::Tensor by_modality(const PerModality<M>& modules, const at::Tensor& x, int64_t image_positions) {
  const std::array<at::Tensor, 2> streams = split_modalities(x, image_positions);
  return at::cat({modules[kImage]->forward(streams[kImage]), modules[kText]->forward(streams[kText])}, 1);
}

}  // namespace

MoTAttention::MoTAttention(const models::ModelConfig& c)
    : n_heads_(c.n_heads),
      n_kv_heads_(c.n_kv_heads),
      head_dim_(c.head_dim()),
      backend_(c.sdpa_backend),
      fused_(c.fused_kernels) {
  const models::LinearBackend linear = models::resolve_linear_backend(c.linear_backend);
  const auto projection = [&](const char* name, int64_t in, int64_t out) {
    return register_per_modality<models::Linear>(
        *this, name, [&](size_t) { return std::make_shared<models::Linear>(in, out, linear); });
  };
  q_proj_ = projection("q_proj", c.dim, n_heads_ * head_dim_);
  k_proj_ = projection("k_proj", c.dim, n_kv_heads_ * head_dim_);
  v_proj_ = projection("v_proj", c.dim, n_kv_heads_ * head_dim_);
  o_proj_ = projection("o_proj", n_heads_ * head_dim_, c.dim);
  if (c.qk_norm) {
    const auto head_norm = [&](size_t) {
      return std::make_shared<models::RMSNorm>(head_dim_, c.norm_eps, c.fused_kernels);
    };
    q_norm_ = register_per_modality<models::RMSNorm>(*this, "q_norm", head_norm);
    k_norm_ = register_per_modality<models::RMSNorm>(*this, "k_norm", head_norm);
  }
}

at::Tensor MoTAttention::forward(const at::Tensor& x, int64_t image_positions, const ModalityRope& rope,
                                 const at::Tensor& doc_starts) const {
  const std::array<at::Tensor, 2> streams = split_modalities(x, image_positions);
  std::vector<at::Tensor> qs, ks, vs;
  for (size_t m = 0; m < kModalities.size(); ++m) {
    const int64_t batch = streams[m].size(0), seq = streams[m].size(1);
    at::Tensor q = q_proj_[m]->forward(streams[m]).view({batch, seq, n_heads_, head_dim_});
    at::Tensor k = k_proj_[m]->forward(streams[m]).view({batch, seq, n_kv_heads_, head_dim_});
    const at::Tensor v = v_proj_[m]->forward(streams[m]).view({batch, seq, n_kv_heads_, head_dim_});
    if (q_norm_[m]) {
      q = q_norm_[m]->forward(q);
      k = k_norm_[m]->forward(k);
    }
    // Rotated in the projections' dtype (bf16 under autocast), each modality by its own positions.
    const at::Tensor cos = rope.cos[m].to(q.scalar_type()), sin = rope.sin[m].to(q.scalar_type());
    qs.push_back(models::apply_rope(q.transpose(1, 2), cos, sin, fused_));
    ks.push_back(models::apply_rope(k.transpose(1, 2), cos, sin, fused_));
    vs.push_back(v.transpose(1, 2));
  }
  // (B, heads, P + S, hd) in [image | text] order: one causal attention over both streams (within documents: no query
  // but padding sees a padded image position).
  const at::Tensor q = at::cat(qs, 2), k = at::cat(ks, 2), v = at::cat(vs, 2);
  const at::Tensor out = models::use_tiled_attention(backend_, q, k.size(2))
                             ? models::flash_attention(q, k, v, {}, doc_starts)
                             : models::causal_attention(q, k, v, fused_, doc_starts);
  return by_modality(o_proj_, out.transpose(1, 2).reshape({x.size(0), x.size(1), n_heads_ * head_dim_}),
                     image_positions);
}

void MoTAttention::zero_output() const {
  at::NoGradGuard no_grad;
  for (const auto& o : o_proj_) o->weight().zero_();
}

MoTBlock::MoTBlock(const models::ModelConfig& c) {
  const auto norm = [&](size_t) { return models::make_norm(c.norm_type, c.dim, c.norm_eps, c.fused_kernels); };
  attention_norm_ = register_per_modality<models::Norm>(*this, "attention_norm", norm);
  attention_ = register_module("attention", std::make_shared<MoTAttention>(c));
  mlp_norm_ = register_per_modality<models::Norm>(*this, "mlp_norm", norm);
  mlp_ = register_per_modality<models::MLP>(*this, "mlp", [&](size_t) {
    return std::make_shared<models::MLP>(c.dim, c.computed_ffn_hidden_dim(), c.activation,
                                         models::resolve_linear_backend(c.linear_backend), c.fused_kernels);
  });
}

at::Tensor MoTBlock::forward(const at::Tensor& x, int64_t image_positions, const ModalityRope& rope,
                             const at::Tensor& doc_starts, const models::AttentionSeam& attention_seam) const {
  const sdk::Model::BlockFn attend = [attention = attention_, image_positions, rope, doc_starts](const at::Tensor& in) {
    return attention->forward(in, image_positions, rope, doc_starts);
  };
  const at::Tensor normed = by_modality(attention_norm_, x, image_positions);
  const at::Tensor h = x + (attention_seam ? attention_seam(normed, attend) : attend(normed));
  return h + by_modality(mlp_, by_modality(mlp_norm_, h, image_positions), image_positions);
}

void MoTBlock::zero_residual_outputs() const {
  attention_->zero_output();
  at::NoGradGuard no_grad;
  for (const auto& mlp : mlp_) mlp->named_parameters()["down_proj.weight"].zero_();
}

}  // namespace kforge::vlm
