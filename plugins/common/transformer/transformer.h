// Transformer: the dense Llama-style decoder (KempnerForge §3.1) as a kforge sdk::Model.
#pragma once

#include <kforge/sdk/model.h>
#include <kforge/sdk/registrar.h>

#include <memory>
#include <vector>

#include "block_capture.h"
#include "kv_cache.h"
#include "model_config.h"
#include "norm.h"
#include "output_head.h"
#include "rope.h"
#include "token_embedding.h"
#include "transformer_block.h"

namespace kforge::builtin::models {

/// token_embedding -> layers.{i} -> norm -> output_head. Parameter names are KempnerForge's:
/// token_embedding.embedding.weight, layers.{i}.attention_norm.weight,
/// layers.{i}.attention.{q,k,v,o}_proj.weight, [layers.{i}.attention.{q,k}_norm.weight],
/// layers.{i}.mlp_norm.weight, layers.{i}.mlp.{gate,up,down}_proj.weight, norm.weight,
/// output_head.proj.weight (absent when tie_embeddings). MoE layers hold layers.{i}.mlp.* as
/// described in moe.h.
class Transformer : public sdk::Model {
 public:
  /// Builds and initialises the weights from the global torch RNG (init_weights). An MoE config
  /// needs `components` to build its routers (only during construction). With `expert_parallel` (which must
  /// outlive the model), each MoE layer then keeps only this rank's experts (MoE::shard_experts): every rank draws
  /// the whole model's initial weights, so its experts are the one-rank model's.
  /// With `tensor_parallel` (which must outlive the model), the model then keeps this rank's slices (attention heads,
  /// dense MLP hidden units, vocabulary rows), likewise from the whole model's initial weights, and forward() returns
  /// this rank's vocabulary columns of the logits. A dense model with untied embeddings also splits its activations
  /// between the projections by position (sequence parallelism: the norms and the residual stream on 1/tp of the
  /// positions), so its sequences' lengths must be multiples of tp.
  explicit Transformer(const ModelConfig& config, const sdk::ComponentSource* components = nullptr,
                       const sdk::ExpertParallel* expert_parallel = nullptr,
                       const sdk::TensorParallel* tensor_parallel = nullptr);

  at::Tensor forward(const at::Tensor& tokens) override;
  /// Joint decoder: prefix (B, P, dim), cast to the embeddings' dtype, before the tokens' embeddings; RoPE positions
  /// from 0 at the prefix's first; the final norm and the head run on the S token positions only.
  /// prefix_padding becomes a row of two documents (document_starts.h): its padding, then the rest, whose positions
  /// count from 0 and which never sees the padding.
  at::Tensor forward_prefixed(const at::Tensor& prefix, const at::Tensor& tokens,
                              const at::Tensor& prefix_padding = {}) override;
  std::vector<sdk::ModelBlock> blocks() const override;
  /// token_embedding.embedding.weight (pipeline parallelism: the first stage's).
  std::vector<std::string> embedding_params() const override { return {"token_embedding.embedding.weight"}; }
  double flops_per_token(int64_t seq_len) const override { return config_.flops_per_token(seq_len); }
  int64_t num_params_estimate() const override { return config_.num_params(); }
  int64_t max_seq_len() const override { return config_.max_seq_len; }
  /// A KVCache for `batch` rows and `max_len` <= max_seq_len positions (ConfigError beyond).
  std::unique_ptr<DecodeState> start_decoding(int64_t batch, int64_t max_len) override;
  /// Appends `tokens` at the cache's fill (RoPE positions offset by it) -> logits (B, T, vocab).
  at::Tensor decode(const at::Tensor& tokens, DecodeState& state) override;
  /// KVCache::fork of the cache `state` is (copies >= 1).
  std::unique_ptr<DecodeState> fork_decoding(const DecodeState& state, int64_t copies) override;
  /// decode() of prefix (checked as by forward_prefixed) and tokens, the prefix's positions cached with theirs.
  at::Tensor decode_prefixed(const at::Tensor& prefix, const at::Tensor& tokens, DecodeState& state) override;
  /// MoE: "moe/aux_loss" = moe_aux_loss_weight * sum of the layers' aux losses and, when
  /// moe_router_z_loss_weight > 0, "moe/router_z_loss" = that weight * sum of their z-losses.
  std::vector<std::pair<std::string, at::Tensor>> auxiliary_losses() override;
  /// Forwarded to every MoE layer's router.
  void set_step(int64_t step, int64_t max_steps) override;
  /// Packed rows: forward() keeps attention within each document and restarts RoPE positions at each
  /// (document_starts.h); decode() ignores them. Throws sdk::Error for ids that are not int64 [B, S] non-decreasing.
  void set_documents(const at::Tensor& doc_ids) override;
  /// Context parallelism: ring attention over `cp` in every layer, RoPE at the tokens' positions in the whole sequence;
  /// document ids are gathered around the ring so documents hold across the chunks; under tensor parallelism each rank
  /// rings its own heads. Throws sdk::ConfigError for an MoE model (its routing losses are per rank's tokens).
  void set_context_parallel(const sdk::ContextParallel& cp) override;
  /// Expert parallelism: every MoE layer's experts this rank holds (layers.{i}.mlp.experts.{global id}.* or the
  /// packed layers.{i}.mlp.{up,down,gate}_w rows).
  std::vector<sdk::ExpertShard> expert_shards() const override;
  /// Tensor parallelism: the slices this rank holds (layers.{i}.attention.{q,k,v,o}_proj.weight, a dense layer's
  /// layers.{i}.mlp.{gate,up,down}_proj.weight, token_embedding.embedding.weight, output_head.proj.weight).
  std::vector<sdk::TensorShard> tensor_shards() const override { return tensor_shards_; }
  /// MoE: moe/aux_loss and moe/router_z_loss (unweighted sums over layers) and moe/expert_balance
  /// (min / max expert count over all layers' experts), of the last forward.
  std::vector<std::pair<std::string, double>> step_metrics() override;

  const ModelConfig& config() const { return config_; }
  /// KempnerForge's init: every >= 2-D parameter N(0, init_std), those ending in o_proj.weight or
  /// down_proj.weight N(0, init_std / sqrt(2 * n_layers)); 1-D parameters keep their values
  /// (norm weights 1, LayerNorm biases 0).
  void init_weights();

 private:
  /// Every forward and decode: `prefix` (undefined: none) runs before the tokens; with a `cache` (null: none) positions
  /// start at its fill and are stored in it. While the host
  /// captures (sdk::Model::set_capture), hands out the points of hook_points in plugin.cpp: "embed"
  /// (token embeddings), per block (block_capture.h) and "final_norm" (the head's input).
  /// `prefix_starts` (document_starts.h's starts, [batch, P + S]) replaces the documents set by set_documents() when
  /// defined.
  at::Tensor run(const at::Tensor& prefix, const at::Tensor& tokens, KVCache* cache,
                 const at::Tensor& prefix_starts = {});
  /// Throws sdk::Error unless prefix is floating [tokens' batch, P, dim] and no document ids are set.
  void check_prefix(const at::Tensor& prefix, const at::Tensor& tokens) const;
  /// The KVCache `state` is, checked to take `prefix_len` + the tokens' positions more, of tokens [batch, T].
  KVCache& checked_cache(DecodeState& state, const at::Tensor& tokens, int64_t prefix_len) const;
  /// Keeps this rank's tensor-parallel slices (constructor), listed in tensor_shards_.
  void split(const sdk::TensorParallel& tp);
  /// Block `index`'s view of the active capture.
  BlockCapture capture_of_block(size_t index) const;
  /// Context parallelism: this rank's positions in the whole sequence of which it holds `local`.
  at::Tensor positions(int64_t local) const;

  ModelConfig config_;
  std::shared_ptr<TokenEmbedding> token_embedding_;
  std::shared_ptr<torch::nn::Module> layers_holder_;
  std::vector<std::shared_ptr<TransformerBlock>> layers_;
  std::vector<std::shared_ptr<MoE>> moe_layers_;
  std::shared_ptr<Norm> norm_;
  std::shared_ptr<OutputHead> output_head_;
  RopeTables rope_;
  at::Tensor doc_starts_;  ///< set_documents(): each token's document start, or undefined
  std::unique_ptr<Ring> ring_;  ///< set_context_parallel(), else null
  std::vector<sdk::TensorShard> tensor_shards_;  ///< tensor parallelism's slices
  /// The tensor-parallel group under sequence parallelism (activations split by position), else null.
  const sdk::TensorParallel* sequence_parallel_ = nullptr;
};

}  // namespace kforge::builtin::models
