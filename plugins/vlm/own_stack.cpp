// OwnStack: the [model] checks, the embedding and head around a subclass's layers, a clip's padding as document starts,
// the init and the blocks.
#include "own_stack.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <cmath>
#include <string>

#include "transformer/document_starts.h"

namespace kforge::vlm {

namespace models = builtin::models;

std::array<at::Tensor, 2> split_modalities(const at::Tensor& x, int64_t image_positions) {
  return {x.narrow(1, 0, image_positions), x.narrow(1, image_positions, x.size(1) - image_positions)};
}

void require_image_then_text(const std::string& key, const std::vector<std::string>& modalities) {
  if (modalities == std::vector<std::string>{kModalities[kImage], kModalities[kText]}) return;
  std::string given;
  for (const std::string& m : modalities) given += (given.empty() ? "\"" : ", \"") + m + "\"";
  throw sdk::ConfigError(key + " = [" + given +
                         "]: this kforge routes by position (the image tokens first, then the text), so it must be "
                         "[\"image\", \"text\"]; remove the key or set it so");
}

models::ModelConfig stack_config(const std::string& arch, const sdk::ConfigView* text_config,
                                 const std::string& moe_refusal) {
  if (text_config == nullptr) throw sdk::Error(arch + ": the host gave no [model] section to build the stack from");
  const std::string model_type = text_config->get_string("model_type");
  if (model_type != "transformer") {
    throw sdk::ConfigError("[model] model_type = \"" + model_type + "\" with [vlm] arch = \"" + arch +
                           "\": the strategy builds its own stack from the transformer's [model] keys; set "
                           "model_type = \"transformer\"");
  }
  models::ModelConfig config = models::ModelConfig::from_view(*text_config);
  if (config.num_experts > 0) {
    throw sdk::ConfigError("[model] num_experts = " + std::to_string(config.num_experts) + " with [vlm] arch = \"" +
                           arch + "\": " + moe_refusal);
  }
  return config;
}

OwnStack::OwnStack(std::string arch, const models::ModelConfig& config, int64_t image_positions)
    : arch_(std::move(arch)),
      config_(config),
      image_positions_(image_positions),
      rope_(config.head_dim(), config.max_seq_len, config.rope_theta) {
  if (image_positions_ >= config_.max_seq_len) {
    throw sdk::ConfigError(
        "[vlm] arch = \"" + arch_ + "\": the " + std::to_string(image_positions_) +
        " image tokens of a row take all of [model] max_seq_len = " + std::to_string(config_.max_seq_len) +
        " and leave no position for text; raise max_seq_len or pool the image tokens ([adapter])");
  }
  token_embedding_ =
      register_module("token_embedding", std::make_shared<models::TokenEmbedding>(config_.vocab_size, config_.dim));
  layers_holder_ = register_module("layers", std::make_shared<torch::nn::Module>("Layers"));
  const models::LinearBackend linear = models::resolve_linear_backend(config_.linear_backend);
  output_head_ = register_module("output_head",
                                 config_.tie_embeddings
                                     ? std::make_shared<models::OutputHead>(token_embedding_->weight(), linear)
                                     : std::make_shared<models::OutputHead>(config_.dim, config_.vocab_size, linear));
}

void OwnStack::add_layer(std::shared_ptr<torch::nn::Module> layer) {
  layers_.push_back(layers_holder_->register_module(std::to_string(layers_.size()), std::move(layer)));
}

void OwnStack::init_weights() {
  at::NoGradGuard no_grad;
  const double residual_std = config_.init_std / std::sqrt(2.0 * static_cast<double>(config_.n_layers));
  const auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  for (auto& item : named_parameters(/*recurse=*/true)) {
    if (item.value().dim() < 2) continue;
    const bool residual = ends_with(item.key(), "o_proj.weight") || ends_with(item.key(), "down_proj.weight");
    item.value().normal_(0.0, residual ? residual_std : config_.init_std);
  }
}

at::Tensor OwnStack::forward(const at::Tensor& tokens) {
  (void)tokens;
  throw sdk::Error(arch_ + ": the stack runs over the image tokens and the text together (forward_prefixed)");
}

at::Tensor OwnStack::forward_prefixed(const at::Tensor& prefix, const at::Tensor& tokens,
                                      const at::Tensor& prefix_padding) {
  if (tokens.dim() != 2 || tokens.scalar_type() != at::kLong) {
    throw sdk::Error(arch_ + ": tokens must be an int64 tensor [batch, seq], got " +
                     std::string(c10::toString(tokens.scalar_type())) + " " + c10::str(tokens.sizes()));
  }
  const std::vector<int64_t> expected = {tokens.size(0), image_positions_, config_.dim};
  if (!prefix.is_floating_point() || prefix.sizes() != at::IntArrayRef(expected)) {
    throw sdk::Error(arch_ + ": the image tokens must be a floating tensor " + c10::str(expected) + ", got " +
                     std::string(c10::toString(prefix.scalar_type())) + " " + c10::str(prefix.sizes()));
  }
  const int64_t text = tokens.size(1);
  if (text > max_seq_len()) {
    throw sdk::Error(arch_ + ": " + std::to_string(text) + " text tokens and " + std::to_string(image_positions_) +
                     " image tokens exceed [model] max_seq_len = " + std::to_string(config_.max_seq_len) +
                     "; give at most " + std::to_string(max_seq_len()) + " text tokens a row");
  }
  const at::Tensor doc_starts =
      prefix_padding.defined()
          ? models::prefix_document_starts(prefix_padding, tokens.size(0), image_positions_, text, arch_)
          : at::Tensor();
  const at::Tensor embedded = token_embedding_->forward(tokens);
  const at::Tensor x = run_layers(at::cat({prefix.to(embedded.scalar_type()), embedded}, 1), doc_starts);
  return output_head_->forward(final_norm_->forward(x.narrow(1, image_positions_, text)));
}

at::Tensor OwnStack::run_blocks(at::Tensor x, const std::function<BlockFn(size_t, models::AttentionSeam)>& make) {
  for (size_t i = 0; i < layers_.size(); ++i) {
    models::AttentionSeam seam = [this, i](const at::Tensor& in, const BlockFn& attention) {
      return run_module(i, "attention", in, attention);
    };
    x = run_block(i, x, make(i, std::move(seam)));
  }
  return x;
}

std::vector<sdk::ModelBlock> OwnStack::blocks() const {
  std::vector<sdk::ModelBlock> out(layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i) out[i] = {"layers." + std::to_string(i), {}, {"attention"}};
  // The holder names each parameter "{layer}.{path}".
  for (const auto& item : layers_holder_->named_parameters(/*recurse=*/true)) {
    out[std::stoul(item.key())].params.push_back("layers." + item.key());
  }
  return out;
}

int64_t OwnStack::num_params_estimate() const {
  int64_t n = 0;
  for (const at::Tensor& p : parameters()) n += p.numel();
  return n;
}

}  // namespace kforge::vlm
