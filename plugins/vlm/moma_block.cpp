// MoMaBlock: the shared attention and the FFN routed by modality, then by expert choice within it.
#include "moma_block.h"

#include <ATen/ATen.h>

#include <vector>

namespace kforge::vlm {

namespace models = builtin::models;

MoMaBlock::MoMaBlock(const models::ModelConfig& c, const std::array<int64_t, 2>& experts,
                     const std::array<double, 2>& capacity_factor, bool gumbel_noise) {
  attention_norm_ =
      register_module("attention_norm", models::make_norm(c.norm_type, c.dim, c.norm_eps, c.fused_kernels));
  attention_ = register_module("attention", std::make_shared<models::Attention>(c));
  mlp_norm_ = register_module("mlp_norm", models::make_norm(c.norm_type, c.dim, c.norm_eps, c.fused_kernels));
  mlp_ = register_per_modality<ExpertChoiceFFN>(*this, "mlp", [&](size_t m) {
    return std::make_shared<ExpertChoiceFFN>(c, experts[m], capacity_factor[m], gumbel_noise);
  });
}

at::Tensor MoMaBlock::forward(const at::Tensor& x, int64_t image_positions, const at::Tensor& cos,
                              const at::Tensor& sin, const models::AttentionSeam& attention_seam) const {
  const sdk::Model::BlockFn attend = [attention = attention_, cos, sin](const at::Tensor& in) {
    return attention->forward(in, cos, sin);
  };
  const at::Tensor normed = attention_norm_->forward(x);
  const at::Tensor h = x + (attention_seam ? attention_seam(normed, attend) : attend(normed));
  // Each modality's positions of every row form its group of tokens, which its experts pick from.
  const std::array<at::Tensor, 2> groups = split_modalities(mlp_norm_->forward(h), image_positions);
  std::vector<at::Tensor> out;
  for (size_t m = 0; m < kModalities.size(); ++m) {
    const at::Tensor& g = groups[m];
    out.push_back(mlp_[m]->forward(g.reshape({-1, g.size(2)})).view(g.sizes()));
  }
  return h + at::cat(out, 1);
}

}  // namespace kforge::vlm
