// OwnStack: the decoder a modality strategy builds for itself from the transformer's [model] keys (mot, moma), run
// over [image tokens | text]: token embedding, layers, final norm, head, init, blocks and limits.
#pragma once

#include <kforge/sdk/config_view.h>
#include <kforge/sdk/model.h>
#include <torch/nn/module.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transformer/model_config.h"
#include "transformer/norm.h"
#include "transformer/output_head.h"
#include "transformer/rope.h"
#include "transformer/token_embedding.h"
#include "transformer/transformer_block.h"

namespace kforge::vlm {

/// The modalities of the residual stream, in its order (the image positions first, then the text's): the names of the
/// per-modality modules. kImage and kText index them.
inline constexpr std::array<const char*, 2> kModalities = {"image", "text"};
inline constexpr size_t kImage = 0;
inline constexpr size_t kText = 1;

/// One module per modality, indexed as kModalities.
template <typename M>
using PerModality = std::array<std::shared_ptr<M>, 2>;

/// Registers in `parent` a module `name` holding one module per modality, make(its index in kModalities)'s, named as
/// kModalities; returns them.
template <typename M, typename Make>
PerModality<M> register_per_modality(torch::nn::Module& parent, const std::string& name, const Make& make) {
  const auto holder = parent.register_module(name, std::make_shared<torch::nn::Module>("PerModality"));
  PerModality<M> out;
  for (size_t m = 0; m < kModalities.size(); ++m) out[m] = holder->register_module(kModalities[m], make(m));
  return out;
}

/// x [B, P + S, ...] -> its image positions [B, P, ...] and its text positions [B, S, ...] (views).
std::array<at::Tensor, 2> split_modalities(const at::Tensor& x, int64_t image_positions);

/// Throws sdk::ConfigError naming `key` ("[vlm] mot_modalities") unless `modalities` is ["image", "text"]: the
/// strategies route by position, the image tokens first.
void require_image_then_text(const std::string& key, const std::vector<std::string>& modalities);

/// The [model] settings `arch`'s stack is built from: text_config (the host's, sdk::Error when absent) read by
/// ModelConfig::from_view. Throws sdk::ConfigError, naming the key, for a model_type other than "transformer" (the
/// stack takes the transformer's keys) and for num_experts > 0 (`moe_refusal` says why and what to do).
builtin::models::ModelConfig stack_config(const std::string& arch, const sdk::ConfigView* text_config,
                                          const std::string& moe_refusal);

/// token_embedding -> layers.{i} (a subclass's) -> final norm on the text positions -> output_head, over a fixed number
/// of image tokens before the text (an image's, or a clip's frames, its padded frames first and masked). Registered by
/// the strategy as its "transformer", so its parameters are named transformer.token_embedding.embedding.weight,
/// transformer.layers.{i}.*, the final norm's and transformer.output_head.proj.weight (absent when [model]
/// tie_embeddings).
class OwnStack : public sdk::Model {
 public:
  /// Refused: the stack runs over image tokens and text (forward_prefixed).
  at::Tensor forward(const at::Tensor& tokens) override;
  /// prefix: the image tokens [B, image_positions, dim], cast to the embeddings' dtype, before the tokens' embeddings
  /// [B, S]; the layers run over the P + S positions -> logits [B, S, vocab] of the text positions. prefix_padding
  /// (int64 [B], a padded clip's): the first prefix_padding[b] image positions of row b are padding, which changes
  /// nothing of the other positions' outputs (document_starts.h's prefix_document_starts: padding attends only to
  /// itself).
  /// Throws sdk::Error for other shapes, a padding outside [0, P], or when P + S exceeds [model] max_seq_len.
  at::Tensor forward_prefixed(const at::Tensor& prefix, const at::Tensor& tokens,
                              const at::Tensor& prefix_padding = {}) override;
  /// layers.{i}, each with the parameters under it and its "attention" module checkpointable.
  std::vector<sdk::ModelBlock> blocks() const override;
  /// The parameters built.
  int64_t num_params_estimate() const override;
  /// The text positions: [model] max_seq_len less the image tokens.
  int64_t max_seq_len() const override { return config_.max_seq_len - image_positions_; }

 protected:
  /// Builds the embedding, the "layers" holder and the head. Throws sdk::ConfigError when the image tokens leave no
  /// position of [model] max_seq_len for text. `arch` names the strategy in errors.
  OwnStack(std::string arch, const builtin::models::ModelConfig& config, int64_t image_positions);

  /// Runs the layers over x [B, P + S, dim], its first P positions the image's -> [B, P + S, dim]. doc_starts: int64
  /// [B, P + S] when image positions are padding (prefix_document_starts: 0 over row b's padding, padding[b] after
  /// it, so a row's padding is its text's document start), undefined when none is.
  virtual at::Tensor run_layers(const at::Tensor& x, const at::Tensor& doc_starts) = 0;

  /// Registers `layer` as layers.{the next index}.
  void add_layer(std::shared_ptr<torch::nn::Module> layer);
  /// The norm applied to the text positions before the head (registered by the subclass, under its name).
  void set_final_norm(std::shared_ptr<builtin::models::Norm> norm) { final_norm_ = std::move(norm); }
  /// Runs every layer through run_block, in order: layer i's function is make(i, seam), where seam runs its attention
  /// through run_module(i, "attention", ...). The functions must hold what they read by value (the host may call them
  /// again in the backward).
  at::Tensor run_blocks(at::Tensor x, const std::function<BlockFn(size_t, builtin::models::AttentionSeam)>& make);
  /// The Transformer's init: every >= 2-D parameter N(0, init_std), those ending in o_proj.weight or down_proj.weight
  /// N(0, init_std / sqrt(2 * n_layers)); norm weights keep theirs.
  void init_weights();

  const std::string arch_;
  const builtin::models::ModelConfig config_;
  const int64_t image_positions_;
  builtin::models::RopeTables rope_;

 private:
  std::shared_ptr<builtin::models::TokenEmbedding> token_embedding_;
  std::shared_ptr<torch::nn::Module> layers_holder_;
  std::vector<std::shared_ptr<torch::nn::Module>> layers_;
  std::shared_ptr<builtin::models::OutputHead> output_head_;
  std::shared_ptr<builtin::models::Norm> final_norm_;
};

}  // namespace kforge::vlm
