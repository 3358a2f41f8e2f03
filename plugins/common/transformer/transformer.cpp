// Transformer: construction, init, forward and the block decomposition.
#include "transformer.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <cmath>
#include <string>
#include <tuple>

#include "document_starts.h"

namespace kforge::builtin::models {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Sequence parallelism's cut of positions [first, first + count) of `whole` [batch, positions, dim], which every rank
// holds: this rank's equal part of them.
at::Tensor own_part(const at::Tensor& whole, int64_t first, int64_t count, const sdk::TensorParallel& sp) {
  const int64_t n = count / sp.size();
  return whole.narrow(1, first + sp.rank() * n, n);
}

// [prefix | x] along the sequence. Under sequence parallelism (sp set) x is this rank's part of the token positions
// and the result its part of all the positions: the whole gathered and cut again (the gather's backward sums every
// rank's part of the gradient), the prefix entering the group so that every rank's prefix gets the whole gradient.
at::Tensor prefixed(const at::Tensor& prefix, const at::Tensor& x, const sdk::TensorParallel* sp) {
  if (sp == nullptr) return at::cat({prefix, x}, 1);
  const at::Tensor whole = at::cat({sp->enter(prefix), sp->gather(x, 1)}, 1);
  return own_part(whole, 0, whole.size(1), *sp);
}

// The token positions of x, the output over [prefix | tokens] of `n_prefix` + `n_tokens` positions; under sequence
// parallelism this rank's part of them, from its part of all the positions.
at::Tensor token_positions(const at::Tensor& x, int64_t n_prefix, int64_t n_tokens, const sdk::TensorParallel* sp) {
  if (sp == nullptr) return x.narrow(1, n_prefix, n_tokens);
  return own_part(sp->gather(x, 1), n_prefix, n_tokens, *sp);
}

}  // namespace

Transformer::Transformer(const ModelConfig& config, const sdk::ComponentSource* components,
                         const sdk::ExpertParallel* expert_parallel, const sdk::TensorParallel* tensor_parallel)
    : config_(config), rope_(config.head_dim(), config.max_seq_len, config.rope_theta) {
  config_.validate();
  token_embedding_ = register_module("token_embedding", std::make_shared<TokenEmbedding>(config_.vocab_size, config_.dim));
  layers_holder_ = register_module("layers", std::make_shared<torch::nn::Module>("Layers"));
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    layers_.push_back(layers_holder_->register_module(std::to_string(i),
                                                      std::make_shared<TransformerBlock>(config_, i, components)));
    if (layers_.back()->moe()) moe_layers_.push_back(layers_.back()->moe());
  }
  norm_ = register_module("norm", make_norm(config_.norm_type, config_.dim, config_.norm_eps, config_.fused_kernels));
  const LinearBackend linear = dense_linear_backend(config_.linear_backend, config_.float8);
  output_head_ =
      config_.tie_embeddings
          ? register_module("output_head", std::make_shared<OutputHead>(token_embedding_->weight(), linear))
          : register_module("output_head", std::make_shared<OutputHead>(config_.dim, config_.vocab_size, linear));
  init_weights();
  if (expert_parallel != nullptr) {
    for (auto& moe : moe_layers_) moe->shard_experts(*expert_parallel);
  }
  if (tensor_parallel != nullptr) split(*tensor_parallel);
}

void Transformer::split(const sdk::TensorParallel& tp) {
  // Sequence parallelism where KempnerForge uses it: not with tied embeddings, nor in an MoE model (whose router and
  // experts take every position).
  const TensorSplit split{&tp, moe_layers_.empty() && !config_.tie_embeddings};
  sequence_parallel_ = split.sequence_parallel ? &tp : nullptr;
  if (split.sequence_parallel) norm_->sum_gradients_over(tp);
  auto add = [&](const std::string& prefix, sdk::TensorShard shard) {
    shard.name = prefix + shard.name;
    tensor_shards_.push_back(std::move(shard));
  };
  add("token_embedding.", token_embedding_->split(split));
  for (size_t i = 0; i < layers_.size(); ++i) {
    for (sdk::TensorShard& shard : layers_[i]->split(split)) add("layers." + std::to_string(i) + ".", std::move(shard));
  }
  if (auto head = output_head_->split(split)) add("output_head.", std::move(*head));
}

std::vector<sdk::ExpertShard> Transformer::expert_shards() const {
  std::vector<sdk::ExpertShard> out;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (!layers_[i]->moe()) continue;
    for (auto& shard : layers_[i]->moe()->expert_shards("layers." + std::to_string(i) + ".mlp.")) {
      out.push_back(std::move(shard));
    }
  }
  return out;
}

void Transformer::init_weights() {
  at::NoGradGuard no_grad;
  const double std = config_.init_std;
  const double residual_std = std / std::sqrt(2.0 * static_cast<double>(config_.n_layers));
  for (auto& item : named_parameters(/*recurse=*/true)) {
    at::Tensor& p = item.value();
    if (p.dim() < 2) continue;
    const bool residual = ends_with(item.key(), "o_proj.weight") || ends_with(item.key(), "down_proj.weight");
    p.normal_(0.0, residual ? residual_std : std);
  }
}

at::Tensor Transformer::forward(const at::Tensor& tokens) { return run(at::Tensor(), tokens, nullptr); }

at::Tensor Transformer::forward_prefixed(const at::Tensor& prefix, const at::Tensor& tokens,
                                         const at::Tensor& prefix_padding) {
  check_prefix(prefix, tokens);
  if (!prefix_padding.defined()) return run(prefix, tokens, nullptr);
  return run(prefix, tokens, nullptr,
             prefix_document_starts(prefix_padding, prefix.size(0), prefix.size(1), tokens.size(1), "transformer"));
}

void Transformer::check_prefix(const at::Tensor& prefix, const at::Tensor& tokens) const {
  if (prefix.dim() != 3 || !prefix.is_floating_point() || prefix.size(2) != config_.dim) {
    throw sdk::Error("transformer: an embedding prefix must be a floating tensor [batch, P, " +
                     std::to_string(config_.dim) + "] (the model dim), got " +
                     std::string(c10::toString(prefix.scalar_type())) + " " + c10::str(prefix.sizes()));
  }
  if (tokens.dim() == 2 && prefix.size(0) != tokens.size(0)) {
    throw sdk::Error("transformer: the embedding prefix has " + std::to_string(prefix.size(0)) +
                     " rows and the tokens " + std::to_string(tokens.size(0)));
  }
  if (doc_starts_.defined()) {
    throw sdk::Error("transformer: document ids ([data] pack_sequences) cannot be combined with an embedding prefix");
  }
}

void Transformer::set_documents(const at::Tensor& doc_ids) {
  if (!ring_ || !doc_ids.defined()) {
    doc_starts_ = doc_ids.defined() ? document_starts(doc_ids) : at::Tensor();
    return;
  }
  // The whole rows' ids, every rank's placed at its positions as they come round the ring; then this rank's starts.
  const int64_t local = doc_ids.size(1), seq = local * ring_->size;
  at::Tensor whole = at::empty({doc_ids.size(0), seq}, doc_ids.options());
  at::Tensor held = doc_ids.contiguous();
  for (int step = 0; step < ring_->size; ++step) {
    const int source = (ring_->rank - step + ring_->size) % ring_->size;
    whole.index_copy_(1, sdk::context_positions(source, ring_->size, seq).to(doc_ids.device()), held);
    if (step + 1 < ring_->size) held = ring_->pass({held})[0];
  }
  doc_starts_ = document_starts(whole).index_select(1, positions(local)).contiguous();
}

void Transformer::set_context_parallel(const sdk::ContextParallel& cp) {
  if (!moe_layers_.empty()) {
    throw sdk::ConfigError("transformer: context parallelism ([distributed] cp > 1) takes a dense model: an MoE "
                           "layer's routing losses are per rank's tokens");
  }
  ring_ = std::make_unique<Ring>(
      Ring{cp.rank(), cp.size(), [&cp](const std::vector<at::Tensor>& tensors) { return cp.pass_on(tensors); }});
  for (auto& layer : layers_) layer->attend_over(ring_.get());
}

at::Tensor Transformer::positions(int64_t local) const {
  return sdk::context_positions(ring_->rank, ring_->size, local * ring_->size);
}

at::Tensor Transformer::run(const at::Tensor& prefix, const at::Tensor& tokens, KVCache* cache,
                            const at::Tensor& prefix_starts) {
  if (tokens.dim() != 2 || tokens.scalar_type() != at::kLong) {
    throw sdk::Error("transformer: tokens must be an int64 tensor [batch, seq], got " +
                     std::string(c10::toString(tokens.scalar_type())) + " with " + std::to_string(tokens.dim()) +
                     " dims");
  }
  if (ring_ && (cache || prefix.defined() || capture_active())) {
    throw sdk::Error("transformer: under context parallelism a forward takes tokens only (no cache, prefix or capture)");
  }
  const int64_t start = cache ? cache->fill() : 0;
  const int64_t n_prefix = prefix.defined() ? prefix.size(1) : 0;
  const int64_t seq = n_prefix + tokens.size(1);
  if (sequence_parallel_ != nullptr && (tokens.size(1) % sequence_parallel_->size() != 0 ||
                                        n_prefix % sequence_parallel_->size() != 0)) {
    const std::string tp = std::to_string(sequence_parallel_->size());
    throw sdk::ConfigError(
        "transformer: sequence parallelism (tp = " + tp + ", a dense model with untied embeddings) splits every " +
        "sequence's " + std::to_string(tokens.size(1)) + " token positions" +
        (n_prefix > 0 ? " and its " + std::to_string(n_prefix) + " image-token positions" : std::string()) +
        " evenly over the tp ranks: make " +
        (n_prefix > 0 ? "both counts ([vlm] max_text_len sets the text's, [vision_encoder] and [adapter] the images')"
                      : "[train] seq_len") +
        " divisible by [distributed] tp = " + tp);
  }
  const bool capturing = capture_active();  // the one test of the training path
  at::Tensor x = token_embedding_->forward(tokens);
  if (capturing) capture("embed", x);
  if (n_prefix > 0) x = prefixed(prefix.to(x.scalar_type()), x, sequence_parallel_);
  const at::Tensor doc_starts = prefix_starts.defined() ? prefix_starts : cache ? at::Tensor() : doc_starts_;
  if (!prefix_starts.defined() && doc_starts.defined() && doc_starts.sizes() != tokens.sizes()) {
    throw sdk::Error("transformer: the document ids set (" + c10::str(doc_starts.sizes()) +
                     ") do not match the tokens " + c10::str(tokens.sizes()));
  }
  at::Tensor cos, sin;
  if (ring_) {  // this rank's positions in the whole sequence, restarting at each document
    const at::Tensor mine = positions(seq).to(x.device()).unsqueeze(0);
    std::tie(cos, sin) = rope_.gather(doc_starts.defined() ? mine - doc_starts : mine.expand({x.size(0), seq}), x,
                                      seq * ring_->size);
  } else if (doc_starts.defined()) {  // positions restart at each document
    std::tie(cos, sin) = rope_.gather(at::arange(seq, doc_starts.options()) - doc_starts, x);
  } else {
    std::tie(cos, sin) = rope_.slice(start + seq, x);
    cos = cos.narrow(0, start, seq);
    sin = sin.narrow(0, start, seq);
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    // The host may call these again in the backward (activation checkpointing): they hold what they read by value.
    const std::shared_ptr<const BlockCapture> c =
        capturing ? std::make_shared<const BlockCapture>(capture_of_block(i)) : nullptr;
    const AttentionSeam attention_seam = [this, i](const at::Tensor& in, const BlockFn& attention) {
      return run_module(i, "attention", in, attention);
    };
    x = run_block(i, x, [this, i, cos, sin, cache, c, doc_starts, attention_seam](const at::Tensor& in) {
      at::Tensor out = layers_[i]->forward(in, cos, sin, cache, i, c, doc_starts, attention_seam);
      if (const auto& moe = layers_[i]->moe(); moe && moe->last_routing().aux_loss.defined()) {
        block_side_output(moe->last_routing().aux_loss);  // added to the objective by auxiliary_losses()
        block_side_output(moe->last_routing().z_loss);
      }
      return out;
    });
  }
  if (cache) cache->advance(seq);
  x = norm_->forward(n_prefix > 0 ? token_positions(x, n_prefix, seq - n_prefix, sequence_parallel_) : x);
  if (capturing) capture("final_norm", x);
  return output_head_->forward(x);
}

BlockCapture Transformer::capture_of_block(size_t index) const {
  BlockCapture c{"layers." + std::to_string(index) + ".",
                 {},
                 [this](const std::string& point, const at::Tensor& value) { capture(point, value); }};
  for (size_t p = 0; p < kBlockPointNames.size(); ++p) c.wanted[p] = capturing(c.prefix + kBlockPointNames[p]);
  if (c.wants_routing() && !layers_[index]->moe()) {
    std::string moe_layers;
    for (size_t i = 0; i < layers_.size(); ++i) {
      if (layers_[i]->moe()) moe_layers += (moe_layers.empty() ? "" : ", ") + std::to_string(i);
    }
    throw sdk::Error("transformer: layer " + std::to_string(index) + " is a dense layer and has no router to capture (" +
                     c.prefix + "mlp.router.*): the MoE layers are " + (moe_layers.empty() ? "none" : moe_layers) +
                     " ([model] num_experts = " + std::to_string(config_.num_experts) +
                     ", moe_frequency = " + std::to_string(config_.moe_frequency) + ")");
  }
  return c;
}

std::vector<std::pair<std::string, at::Tensor>> Transformer::auxiliary_losses() {
  if (moe_layers_.empty() || !moe_layers_.front()->last_routing().aux_loss.defined()) return {};
  at::Tensor aux = moe_layers_.front()->last_routing().aux_loss;
  at::Tensor z = moe_layers_.front()->last_routing().z_loss;
  for (size_t i = 1; i < moe_layers_.size(); ++i) {
    aux = aux + moe_layers_[i]->last_routing().aux_loss;
    z = z + moe_layers_[i]->last_routing().z_loss;
  }
  std::vector<std::pair<std::string, at::Tensor>> out{{"moe/aux_loss", config_.moe_aux_loss_weight * aux}};
  if (config_.moe_router_z_loss_weight > 0) out.emplace_back("moe/router_z_loss", config_.moe_router_z_loss_weight * z);
  return out;
}

void Transformer::set_step(int64_t step, int64_t max_steps) {
  for (auto& moe : moe_layers_) moe->router().set_step(step, max_steps);
}

std::vector<std::pair<std::string, double>> Transformer::step_metrics() {
  if (moe_layers_.empty() || !moe_layers_.front()->last_routing().aux_loss.defined()) return {};
  double aux = 0, z = 0;
  std::vector<at::Tensor> counts;
  for (const auto& moe : moe_layers_) {
    aux += moe->last_routing().aux_loss.item<double>();
    z += moe->last_routing().z_loss.item<double>();
    counts.push_back(moe->last_routing().expert_counts);
  }
  const at::Tensor all = at::cat(counts);
  const double max = all.max().item<double>();
  const double balance = max > 0 ? all.min().item<double>() / max : 0.0;
  std::vector<std::pair<std::string, double>> out = {
      {"moe/aux_loss", aux}, {"moe/router_z_loss", z}, {"moe/expert_balance", balance}};
  // Assignments per expert, summed over the layers (the router sees every token, under expert parallelism too).
  const at::Tensor per_expert = at::stack(counts).sum(0).to(at::kDouble).cpu();
  for (int64_t e = 0; e < per_expert.numel(); ++e) {
    out.emplace_back("moe/tokens/expert_" + std::to_string(e), per_expert[e].item<double>());
  }
  if (moe_layers_.front()->last_dropped().defined()) {
    double dropped = 0;
    for (const auto& moe : moe_layers_) dropped += static_cast<double>(moe->last_dropped().item<int64_t>());
    out.emplace_back("moe/drop_rate", dropped / all.sum().item<double>());
  }
  return out;
}

std::vector<sdk::ModelBlock> Transformer::blocks() const {
  std::vector<sdk::ModelBlock> out;
  out.reserve(layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i) {
    sdk::ModelBlock block{"layers." + std::to_string(i), {}, {"attention"}};
    for (const auto& item : layers_[i]->named_parameters(/*recurse=*/true)) {
      block.params.push_back(block.name + "." + item.key());
    }
    out.push_back(std::move(block));
  }
  return out;
}

}  // namespace kforge::builtin::models
