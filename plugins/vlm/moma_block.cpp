// MoMaBlock: the shared attention and the FFN routed by modality, then by expert choice within it (a padded clip's
// real image positions only).
#include "moma_block.h"

#include <ATen/ATen.h>

#include <vector>

namespace kforge::vlm {

namespace models = builtin::models;

namespace {

// The real image positions of the batch, bool [B * P] as the image group flattens them, from OwnStack::run_layers'
// doc_starts (row b's padding is its first doc_starts[b, P] positions: its text's document start); undefined without.
at::Tensor real_image_positions(const at::Tensor& doc_starts, int64_t image_positions) {
  if (!doc_starts.defined()) return {};
  const at::Tensor padding = doc_starts.narrow(1, image_positions, 1);
  return at::arange(image_positions, doc_starts.options()).unsqueeze(0).ge(padding).flatten();
}

}  // namespace

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
                              const at::Tensor& sin, const at::Tensor& doc_starts,
                              const models::AttentionSeam& attention_seam) const {
  const sdk::Model::BlockFn attend = [attention = attention_, cos, sin, doc_starts](const at::Tensor& in) {
    return attention->forward(in, cos, sin, nullptr, 0, nullptr, doc_starts);
  };
  const at::Tensor normed = attention_norm_->forward(x);
  const at::Tensor h = x + (attention_seam ? attention_seam(normed, attend) : attend(normed));
  // Each modality's positions of every row form its group of tokens, which its experts pick from (of the image's, the
  // real ones: padding takes no expert's capacity).
  const std::array<at::Tensor, 2> groups = split_modalities(mlp_norm_->forward(h), image_positions);
  const std::array<at::Tensor, 2> routed = {real_image_positions(doc_starts, image_positions), at::Tensor()};
  std::vector<at::Tensor> out;
  for (size_t m = 0; m < kModalities.size(); ++m) {
    const at::Tensor& g = groups[m];
    out.push_back(mlp_[m]->forward(g.reshape({-1, g.size(2)}), routed[m]).view(g.sizes()));
  }
  return h + at::cat(out, 1);
}

}  // namespace kforge::vlm
