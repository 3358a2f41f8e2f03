// CrossAttention: composition, the cross-attention blocks fired from the text model's block seam, cached decoding.
#include "cross_attention.h"

#include <ATen/ATen.h>
#include <kforge/sdk/config_view.h>
#include <kforge/sdk/error.h>

#include <string>

namespace kforge::vlm {
namespace {

std::string key(const char* name) { return std::string("[vlm] ") + name; }

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const at::Tensor& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace

CrossAttention::CrossAttention(sdk::VisionLanguageParts parts, const builtin::models::ModelConfig& text,
                               const CrossAttentionSettings& s)
    : TextComposition(std::move(parts), "cross_attention"), every_n_layers_(s.every_n_layers) {
  const int64_t n_blocks = s.every_n_layers > 0 ? text.n_layers / s.every_n_layers : 0;
  if (n_blocks == 0) {
    throw sdk::ConfigError(key("cross_attention_every_n_layers") + " = " + std::to_string(s.every_n_layers) +
                           " places no cross-attention block in the " + std::to_string(text.n_layers) +
                           " text blocks ([model] n_layers); set it to at most " + std::to_string(text.n_layers));
  }
  const int64_t heads = s.n_heads > 0 ? s.n_heads : text.n_heads;
  const int64_t kv_heads = s.n_kv_heads > 0 ? s.n_kv_heads : heads;
  if (text.dim % heads != 0) {
    throw sdk::ConfigError(key("cross_attention_n_heads") + " = " + std::to_string(heads) +
                           " does not divide [model] dim = " + std::to_string(text.dim));
  }
  if (heads % kv_heads != 0) {
    throw sdk::ConfigError(key("cross_attention_n_kv_heads") + " = " + std::to_string(kv_heads) +
                           " does not divide the cross-attention heads (" + std::to_string(heads) + ")");
  }
  visual_tokens_ = adapter_->output_num_tokens(encoder_->num_tokens());
  auto holder = text_->register_module("cross_attention_layers", std::make_shared<torch::nn::Module>("Layers"));
  for (int64_t j = 0; j < n_blocks; ++j) {
    layers_.push_back(
        holder->register_module(std::to_string(j), std::make_shared<CrossAttentionBlock>(text, heads, kv_heads)));
  }
  text_->set_block_runner([this](size_t index, const at::Tensor& input, const BlockFn& block) {
    at::Tensor out = run_block(index, input, block);
    const auto fired = static_cast<int64_t>(index) + 1;
    return fired % every_n_layers_ == 0 ? cross(static_cast<size_t>(fired / every_n_layers_ - 1), out) : out;
  });
}

at::Tensor CrossAttention::cross(size_t j, const at::Tensor& text) const {
  if (keys_values_ != nullptr)
    return layers_[j]->forward_with(text, (*keys_values_)[j].first, (*keys_values_)[j].second);
  return layers_[j]->forward(text, image_.tokens, image_.padding);
}

at::Tensor CrossAttention::forward(const at::Tensor& tokens) {
  image_ = image_tokens(tokens);
  at::Tensor logits;
  try {
    logits = text_->forward(tokens);
  } catch (...) {
    image_ = {};
    throw;
  }
  image_ = {};  // the graph keeps what the backward needs
  return logits;
}

namespace {

// The text model's decoding state and each cross-attention block's image keys and values (empty until the first call).
struct CrossDecodeState final : sdk::Model::DecodeState {
  std::unique_ptr<sdk::Model::DecodeState> text;
  std::vector<std::pair<at::Tensor, at::Tensor>> keys_values;
};

}  // namespace

std::unique_ptr<sdk::Model::DecodeState> CrossAttention::start_decoding(int64_t batch, int64_t max_len) {
  auto state = std::make_unique<CrossDecodeState>();
  state->text = text_->start_decoding(batch, max_len);
  return state;
}

at::Tensor CrossAttention::decode(const at::Tensor& tokens, DecodeState& state) {
  auto* cross = dynamic_cast<CrossDecodeState*>(&state);
  if (cross == nullptr) throw sdk::Error("cross_attention: decode was given a state not made by its start_decoding");
  if (cross->keys_values.empty()) {
    const VisualTokens image = image_tokens(tokens);
    if (image.padding.defined() && image.padding.any().item<bool>()) {
      throw sdk::Error(
          "cross_attention: cached decoding of clips with padded frames is not supported; give whole clips");
    }
    for (const auto& layer : layers_) cross->keys_values.push_back(layer->image_keys_values(image.tokens));
  }
  keys_values_ = &cross->keys_values;
  at::Tensor logits;
  try {
    logits = text_->decode(tokens, *cross->text);
  } catch (...) {
    keys_values_ = nullptr;
    throw;
  }
  keys_values_ = nullptr;
  return logits;
}

double CrossAttention::flops_per_token(int64_t seq_len) const {
  // Per block and text token: 6 FLOPs per weight the token multiplies (q, o, MLP), the keys and values of the image
  // (6 per k/v weight per image token, spread over seq_len text tokens), and 12 per head dim per image token for the
  // scores and the weighted sum, forward and backward.
  double per_token = 0;
  for (const auto& layer : layers_) {
    double kv = 0, other = 0;
    for (const auto& item : layer->named_parameters(/*recurse=*/true)) {
      const std::string& name = item.key();
      const bool image_side = name == "attention.k_proj.weight" || name == "attention.v_proj.weight";
      (image_side ? kv : other) += static_cast<double>(item.value().numel());
    }
    const double q_width = static_cast<double>(layer->named_parameters()["attention.q_proj.weight"].size(0));
    per_token += 6 * other + 6 * kv * static_cast<double>(frames_ * visual_tokens_) / static_cast<double>(seq_len) +
                 12 * q_width * static_cast<double>(frames_ * visual_tokens_);
  }
  return text_->flops_per_token(seq_len) + per_token;
}

int64_t CrossAttention::num_params_estimate() const {
  int64_t blocks = 0;
  for (const auto& layer : layers_) blocks += parameter_count(*layer);
  return text_->num_params_estimate() + blocks + vision_parameters();
}

std::shared_ptr<sdk::VisionLanguageModel> make_cross_attention(const sdk::BuildContext& ctx,
                                                               sdk::VisionLanguageParts parts) {
  if (parts.text_config == nullptr) throw sdk::Error("cross_attention: the host gave no [model] section");
  const builtin::models::ModelConfig text = builtin::models::ModelConfig::from_view(*parts.text_config);
  CrossAttentionSettings s;
  s.every_n_layers = ctx.section.get_int("cross_attention_every_n_layers");
  s.n_heads = ctx.section.get_int("cross_attention_n_heads");
  s.n_kv_heads = ctx.section.get_int("cross_attention_n_kv_heads");
  return std::make_shared<CrossAttention>(std::move(parts), text, s);
}

}  // namespace kforge::vlm
