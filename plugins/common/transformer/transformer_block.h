// TransformerBlock: one pre-norm decoder layer, x += attention(norm(x)); x += mlp(norm(x)), where
// mlp is the dense MLP or, on MoE layers, the mixture-of-experts layer.
#pragma once

#include <kforge/sdk/model.h>
#include <kforge/sdk/registrar.h>
#include <torch/nn/module.h>

#include <functional>
#include <memory>
#include <vector>

#include "attention.h"
#include "block_capture.h"
#include "mlp.h"
#include "model_config.h"
#include "moe.h"
#include "norm.h"

namespace kforge::builtin::models {

/// Runs the attention sub-module's function on its input: the model's run_module seam (activation
/// checkpointing "selective" recomputes it), or empty to call it directly.
using AttentionSeam = std::function<at::Tensor(const at::Tensor& input, const sdk::Model::BlockFn& attention)>;

class TransformerBlock : public torch::nn::Module {
 public:
  /// Layer `layer` is MoE when config.is_moe_layer(layer); its router then comes from
  /// `components` ([model] moe_router), which must be given.
  TransformerBlock(const ModelConfig& config, int64_t layer, const sdk::ComponentSource* components);
  /// With a cache, attention appends this block's K/V as layer `layer` (see Attention::forward) and
  /// an MoE layer routes without a capacity limit. A non-null `capture` receives the block's
  /// points (BlockPoint) that it wants. `doc_starts`: packed documents (Attention::forward). Attention runs
  /// through `attention_seam` (which may call it again in the backward: it holds what it reads by value).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, KVCache* cache = nullptr,
                     size_t layer = 0, std::shared_ptr<const BlockCapture> capture = nullptr,
                     const at::Tensor& doc_starts = {}, const AttentionSeam& attention_seam = {});
  /// The MoE layer, or nullptr on a dense layer.
  const std::shared_ptr<MoE>& moe() const { return moe_; }
  /// Tensor parallelism: splits the attention heads and a dense layer's MLP over `split.tp` (an MoE layer's router
  /// and experts stay whole on every rank, as in KempnerForge); with sequence parallelism the norms then run on this
  /// rank's part of the positions. Returns the slices' placements, named relative to the block.
  std::vector<sdk::TensorShard> split(const TensorSplit& split);
  /// Context parallelism: attention runs over `ring` (Attention::attend_over).
  void attend_over(const Ring* ring) { attention_->attend_over(ring); }

 private:
  std::shared_ptr<Norm> attention_norm_, mlp_norm_;
  std::shared_ptr<Attention> attention_;
  std::shared_ptr<MLP> mlp_;  // dense layers
  std::shared_ptr<MoE> moe_;  // MoE layers
};

}  // namespace kforge::builtin::models
